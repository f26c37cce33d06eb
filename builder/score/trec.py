"""Reading TREC files for `golden score --qrels/--trec-run`: qrels (`qid iter docno rel`) and
runs (`qid Q0 docno rank score tag`), as trec_eval reads them.

Every problem is an `InputError` naming the file and line: a wrong number of fields, a
relevance that is not an integer or lies beyond +-MAX_GRADE, a score that is not a number
(NaN included), a docno judged or retrieved twice for one query (runs: `dedupe=True` keeps
the best score), an empty file, a file that is not UTF-8, a path that is not a regular file
(a FIFO is refused, never waited on: `input_files`). Each file is read and decoded whole: one
read and one decode instead of a generator step per line over a million short lines. Lines
starting with "#" are comments.

This module imports nothing heavy (no pydantic): scoring a TREC run pays only for what it
uses, which is most of what separates golden's end-to-end time from pytrec_eval's.
"""

from __future__ import annotations

import math
from pathlib import Path

from builder.errors import InputError
from builder.text.input_files import read_input_text


# The largest relevance grade (either sign) golden scores: `--gain exp` computes 2^grade, which
# for a grade of thousands of digits never finishes, and a grade beyond ~1000 overflows a
# float. Real collections grade from -2 to 4 or so.
MAX_GRADE = 1000


def _parse_int(text: str, what: str, path: str, line: int) -> int:
    shown = text if len(text) <= 40 else text[:39] + "…"
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{what} {shown!r} is not an integer", path=path, line=line) from None
    if not -MAX_GRADE <= value <= MAX_GRADE:
        raise InputError(f"{what} {shown!r} is out of range (-{MAX_GRADE} to {MAX_GRADE})",
                         path=path, line=line)
    return value


def _plain_qrels(text: str) -> dict[str, dict[str, int]] | None:
    """`read_qrels` for the common file (four fields on every line, integer grades within
    +-MAX_GRADE, no docno judged twice, no blank line or comment), in one tight loop as
    `_plain_trec_run`; None for anything else: the careful reader then names the line."""
    out: dict[str, dict[str, int]] = {}
    body = text[:-1] if text.endswith("\n") else text
    try:
        for line in body.split("\n"):
            qid, _, docno, rel = line.split()
            judged = out.get(qid)
            if judged is None:
                if qid[0] == "#":
                    return None
                judged = out[qid] = {}
            judged[docno] = int(rel)
    except ValueError:  # not four fields, or a grade that is not an integer
        return None
    if sum(map(len, out.values())) != body.count("\n") + 1:
        return None  # a docno judged twice
    if any(min(g.values()) < -MAX_GRADE or max(g.values()) > MAX_GRADE for g in out.values()):
        return None
    return out


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """TREC qrels (`qid iter docno rel` per line) -> {qid: {docno: rel}}, qids sorted as
    trec_eval orders them. A docno judged twice for one query is an InputError."""
    spath = str(path)
    whole = read_input_text(path)
    common = _plain_qrels(whole)
    if common is not None:
        return dict(sorted(common.items()))
    qrels: dict[str, dict[str, int]] = {}
    for n, text in enumerate(whole.split("\n"), 1):
        parts = text.split()
        if len(parts) != 4 or parts[0][0] == "#":
            if not parts or parts[0][0] == "#":
                continue
            raise InputError(f"expected 'qid iter docno rel', got {len(parts)} fields",
                             path=spath, line=n)
        qid, _, docno, rel_text = parts
        try:
            rel = int(rel_text)
        except ValueError:
            rel = _parse_int(rel_text, "relevance", spath, n)
        if not -MAX_GRADE <= rel <= MAX_GRADE:
            _parse_int(rel_text, "relevance", spath, n)  # raises, naming the line
        judged = qrels.get(qid)
        if judged is None:
            judged = qrels[qid] = {}
        elif docno in judged:
            raise InputError(f"{docno!r} judged twice for query {qid!r}", path=spath, line=n)
        judged[docno] = rel
    if not qrels:
        raise InputError("no judgments (the file is empty)", path=spath)
    return dict(sorted(qrels.items()))


def _plain_trec_run(text: str) -> dict[str, dict[str, float]] | None:
    """`read_trec_run` for the common file: six fields on every line, each query's lines
    together, numeric scores, no docno twice, no blank line. One tight loop that unpacks,
    converts and stores each line (the way pytrec_eval parses: 25% faster on a million lines
    than collecting the fields first and converting them afterwards, which keeps a million
    score strings alive); what it does not check per line is checked once at the end (a docno
    twice: fewer stored than lines; NaN: a NaN sum). None for anything else (comments, extra columns, a
    bad line): the line-by-line reader then handles it and names the line of any error."""
    out: dict[str, dict[str, float]] = {}
    last = None
    docs: dict[str, float] = {}
    body = text[:-1] if text.endswith("\n") else text
    try:
        for line in body.split("\n"):
            qid, _, docno, _, score, _ = line.split()
            if qid != last:
                if qid in out or qid[0] == "#":
                    return None
                docs = out[qid] = {}
                last = qid
            docs[docno] = float(score)
    except ValueError:  # not six fields, or a score that is not a number
        return None
    if sum(map(len, out.values())) != body.count("\n") + 1:
        return None
    total = sum(map(sum, map(dict.values, out.values())))  # NaN when a score is NaN (one
    if total != total:  # pass in C; inf - inf also gives NaN: the careful reader then decides)
        return None
    return out


def read_trec_run(path: str | Path, *, dedupe: bool = False) -> dict[str, dict[str, float]]:
    """TREC run (`qid Q0 docno rank score tag [ignored...]`) -> {qid: {docno: score}}; the
    rank column is ignored (`retrieval` ranks by score, as trec_eval does).
    A docno twice for one query is an InputError unless `dedupe` (keeps the highest score)."""
    spath = str(path)
    text = read_input_text(path)
    common = _plain_trec_run(text)
    if common is not None:
        return dict(sorted(common.items()))
    scored: dict[str, dict[str, float]] = {}
    docs: dict[str, float] = {}
    last_qid = None
    for n, line in enumerate(text.split("\n"), 1):
        parts = line.split()
        if len(parts) < 6:
            if not parts or parts[0][0] == "#":
                continue
            raise InputError(f"expected 'qid Q0 docno rank score tag', got {len(parts)} fields",
                             path=spath, line=n)
        qid = parts[0]
        if qid[0] == "#":
            continue
        docno = parts[2]
        score_text = parts[4]
        try:
            score = float(score_text)
        except ValueError:
            score = math.nan
        if score != score:  # NaN, or not a number at all
            raise InputError(f"score {score_text!r} is not a number", path=spath, line=n)
        if qid != last_qid:  # runs list a query's lines together: one lookup per query
            docs = scored.get(qid)
            if docs is None:
                docs = scored[qid] = {}
            last_qid = qid
        if docno in docs:
            if not dedupe:
                raise InputError(f"{docno!r} retrieved twice for query {qid!r} (trec_eval "
                                 "refuses duplicate docs; --dedupe keeps the best)",
                                 path=spath, line=n)
            score = max(score, docs[docno])
        docs[docno] = score
    if not scored:
        raise InputError("the run is empty (no result lines)", path=spath)
    return dict(sorted(scored.items()))
