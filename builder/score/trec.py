"""Reading TREC files for `golden score --qrels/--trec-run`: qrels (`qid iter docno rel`) and
runs (`qid Q0 docno rank score tag`), as trec_eval reads them.

Every problem is an `InputError` naming the file and line: a wrong number of fields, a
relevance that is not an integer, a score that is not a number (NaN included), a docno judged
or retrieved twice for one query (runs: `dedupe=True` keeps the best score), an empty file, a
file that is not UTF-8. Lines starting with "#" are comments.

This module imports nothing heavy (no pydantic): scoring a TREC run pays only for what it
uses, which is most of what separates golden's end-to-end time from pytrec_eval's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from builder.errors import InputError


@contextmanager
def reading(path: str | Path) -> Iterator[None]:
    """Turn the OS's errors while reading `path` into one-line InputErrors naming it."""
    try:
        yield
    except FileNotFoundError:
        raise InputError("file not found", path=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a folder, expected a file", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", path=str(path)) from None


def _read_text(path: str | Path) -> str:
    """The whole file as text, with the JSONL readers' errors (a bad byte is named by line).
    For the TREC readers, which loop over a million short lines: one read and one decode
    instead of a generator step per line."""
    with reading(path):
        data = Path(path).read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start - line_start + 1} of "
                         "the line)", path=str(path),
                         line=data.count(b"\n", 0, exc.start) + 1) from None


def _parse_int(text: str, what: str, path: str, line: int) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(f"{what} {text!r} is not an integer", path=path, line=line) from None


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """TREC qrels (`qid iter docno rel` per line) -> {qid: {docno: rel}}, qids sorted as
    trec_eval orders them. A docno judged twice for one query is an InputError."""
    spath = str(path)
    qrels: dict[str, dict[str, int]] = {}
    for n, text in enumerate(_read_text(path).split("\n"), 1):
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
    together, numeric scores, no docno twice. The Python loop only splits and collects; the
    scores are converted and each query's mapping built by C loops (`map(float)`, `dict(zip)`),
    ~15% faster on a million lines. None for anything else (comments, extra columns, a bad
    line): the line-by-line reader then handles it and names the line of any error."""
    scored: dict[str, tuple[list[str], list[str]]] = {}
    last = None
    docnos: list[str] = []
    scores: list[str] = []
    for line in text.split("\n"):
        parts = line.split()
        if len(parts) != 6:
            if parts:
                return None
            continue
        qid = parts[0]
        if qid != last:
            if qid in scored or qid[0] == "#":
                return None
            docnos, scores = scored[qid] = ([], [])
            last = qid
        docnos.append(parts[2])
        scores.append(parts[4])
    out: dict[str, dict[str, float]] = {}
    for qid, (docnos, scores) in scored.items():
        try:
            values = list(map(float, scores))
        except ValueError:
            return None
        docs = dict(zip(docnos, values))
        if len(docs) != len(docnos) or any(map(math.isnan, values)):
            return None
        out[qid] = docs
    return out


def read_trec_run(path: str | Path, *, dedupe: bool = False) -> dict[str, dict[str, float]]:
    """TREC run (`qid Q0 docno rank score tag [ignored...]`) -> {qid: {docno: score}}; the
    rank column is ignored (`retrieval` ranks by score, as trec_eval does).
    A docno twice for one query is an InputError unless `dedupe` (keeps the highest score)."""
    spath = str(path)
    text = _read_text(path)
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
