"""The review queue: which candidates a review list shows, in what order, one page at a time;
its counts and progress; the filter pickers' values; and everything the detail pane shows of one
candidate.

Guarantees:
- Read-only: nothing here writes (decisions are `review_log.py`).
- Lists are read one page at a time (LIMIT/OFFSET or keyset paging over an index that matches
  the sort, migrations m003/m004); nothing here loads every candidate.
- User text (search words, tags) only ever reaches SQL as bound parameters.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, replace
from typing import Any

from builder.errors import ReviewError
from builder.store.db import Store
from builder.store.jsoncols import decode
from builder.vocabulary import STATUSES

DUPLICATES = ("exclude", "include", "only")
NOW_SQL = "((julianday('now') - 2440587.5) * 86400.0)"
"""The current time in unix seconds, in SQL (lease expiry times are unix seconds)."""
OPEN_SQL = "(c.status IN ('pending', 'skipped') AND c.conflict = 0)"
"""A candidate still open to annotators: nobody settled it, and no conflict waits for an
adjudicator (a skipped one is open to everyone; see review_leases.claim_next)."""

# Sort orders: name -> (key expressions, direction). The expressions match the indexes made by
# migration m003 character for character, so SQLite walks an index instead of sorting.
SORTS: dict[str, tuple[tuple[str, ...], str]] = {
    "queue": (("(c.status <> 'pending')", "c.created_at", "c.id"), "ASC"),
    "oldest": (("c.created_at", "c.id"), "ASC"),
    "newest": (("c.created_at", "c.id"), "DESC"),
    "type": (("COALESCE(c.edit_type, c.type)", "c.created_at", "c.id"), "ASC"),
}


@dataclass(frozen=True)
class CandidateFilter:
    """Which candidates a list shows and in what order. `None` in a field means "any".

    The default is the review queue: verdict passed, duplicates hidden, pending first.
    `conflict=True` is the adjudication queue (annotators disagree, no final decision yet);
    `reviewer` keeps the candidates that annotator has decided (accept, reject or skip);
    `parts="rejected"` keeps the harder items built on a part a reviewer rejected (such an
    item repeats its part's question or answer, so it is wrong too: one bulk reject settles them).
    """

    status: str | None = None
    conflict: bool | None = None
    reviewer: str | None = None
    type: str | None = None
    difficulty: str | None = None
    tag: str | None = None
    document_id: str | None = None
    verdict: str | None = "passed"
    duplicates: str = "exclude"
    text: str = ""
    sort: str = "queue"
    parts: str | None = None

    def without_status(self) -> "CandidateFilter":
        return replace(self, status=None)

    def describe(self) -> str:
        """One line for the header, e.g. `verdict=passed · no duplicates · sort=queue`."""
        shown = []
        if self.conflict is not None:
            shown.append("conflicts only" if self.conflict else "no conflicts")
        for name in ("status", "reviewer", "type", "difficulty", "tag", "document_id",
                     "verdict"):
            value = getattr(self, name)
            if value is not None:
                shown.append(f"{name.replace('_id', '')}={value}")
        if self.parts is not None:
            shown.append(PART_FILTERS[self.parts])
        shown.append({"exclude": "no duplicates", "include": "with duplicates",
                      "only": "duplicates only"}[self.duplicates])
        if self.text:
            shown.append(f"search={self.text!r}")
        shown.append(f"sort={self.sort}")
        return " · ".join(shown)



def where_clause(f: CandidateFilter, store: Store | None = None, *, rowid_cap: int | None = None
           ) -> tuple[str, list[Any]]:
    """`FROM ... WHERE ...` selecting the candidates (alias c) matching `f`, and its params.

    A tag filter drives the query from candidate_tags (CROSS JOIN fixes that loop order):
    tags are sparse, and walking the ordered candidates index to find a few tagged rows
    costs a full scan.

    Free text is a case-insensitive substring of question, answer, or their edits, or an exact
    id. Given `store`, a search of 3+ characters first asks the trigram index (m004) for the
    matching rowids; when there are few (<= `rowid_cap`, default SEARCH_ROWIDS; counts
    allow COUNT_ROWIDS) the query is driven by them
    (`NOT INDEXED` stops SQLite from walking a sort index instead) and the exact LIKE test is
    kept as a recheck, so results never depend on the index being in step. Otherwise, and
    for 1-2 characters, the LIKE scan runs alone: with that many matches a walk in sort order
    finds a page of them within a few thousand rows."""
    clauses: list[str] = []
    params: list[Any] = []
    source = "candidates c"
    text = f.text.strip()
    rowids = (_search_rowids(store, text, rowid_cap or SEARCH_ROWIDS)
              if store is not None and text else None)
    if f.tag is not None:
        source = "candidate_tags t CROSS JOIN candidates c ON c.id = t.candidate_id"
        clauses.append("t.tag = ?")
        params.append(f.tag)
    elif rowids is not None:
        source = "candidates c NOT INDEXED"
    if rowids is not None:
        clauses.append("c.rowid IN (SELECT value FROM json_each(?)"
                       " UNION ALL SELECT rowid FROM candidates WHERE id = ?)")
        params.extend([json.dumps(rowids), text])
    for value, column in ((f.status, "c.status"), (f.verdict, "c.verdict"),
                          (f.type, "COALESCE(c.edit_type, c.type)"),
                          (f.difficulty, "COALESCE(c.edit_difficulty, c.difficulty)"),
                          (f.document_id, "c.document_id")):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if f.conflict is not None:
        clauses.append("c.conflict = ?")
        params.append(int(f.conflict))
    if f.reviewer is not None:
        clauses.append("EXISTS (SELECT 1 FROM review_votes v WHERE v.candidate_id = c.id"
                       " AND v.annotator = ?)")
        params.append(f.reviewer)
    if f.parts == "rejected":
        clauses.append("c.part_ids IS NOT NULL AND json_valid(c.part_ids) AND EXISTS ("
                       "SELECT 1 FROM json_each(c.part_ids) j JOIN candidates p ON p.id = j.value"
                       " WHERE p.status = 'rejected')")
    if f.duplicates == "exclude":
        clauses.append("c.duplicate_of IS NULL")
    elif f.duplicates == "only":
        clauses.append("c.duplicate_of IS NOT NULL")
    if text:
        pattern = "%" + _like_escape(text) + "%"
        clauses.append(
            "(c.question LIKE ? ESCAPE '\\' OR c.answer LIKE ? ESCAPE '\\'"
            " OR c.edit_question LIKE ? ESCAPE '\\' OR c.edit_answer LIKE ? ESCAPE '\\'"
            " OR c.id = ?)")
        params.extend([pattern] * 4 + [text])
    return f"FROM {source} WHERE {' AND '.join(clauses) or '1'}", params


PART_FILTERS = {"rejected": "built on a rejected part"}
"""`CandidateFilter.parts` values and how the header names them."""

SEARCH_ROWIDS = 2000
"""Above this many trigram matches a page query runs as a plain LIKE walk (see `_where`)."""
COUNT_ROWIDS = 30000
"""The same for counts, position and stats, which read every match: up to here the index
wins (a broad search's background refresh 1.3 s -> ~0.1 s at 100k, measured)."""


def _search_rowids(store: Store, text: str, cap: int | None = None) -> list[int] | None:
    """Rowids of candidates whose question/answer/edits contain `text` per the trigram index,
    or None when the index cannot help: fewer than 3 characters (no trigram), more than
    `cap` matches, or no index (a file not migrated to m004). The text is passed as
    ONE quoted FTS5 string (inner quotes doubled), never as query syntax: `AND`, `NEAR(`,
    `*`, `^` or quotes are searched for literally."""
    if len(text) < 3:
        return None
    cap = SEARCH_ROWIDS if cap is None else cap
    phrase = '"' + text.replace('"', '""') + '"'
    try:
        rows = store.conn.execute(
            "SELECT rowid FROM candidates_fts WHERE candidates_fts MATCH ? LIMIT ?",
            (phrase, cap + 1)).fetchall()
    except sqlite3.OperationalError:
        return None
    if len(rows) > cap:
        return None
    return [r[0] for r in rows]


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _sort(f: CandidateFilter) -> tuple[tuple[str, ...], str]:
    if f.sort not in SORTS:
        raise ReviewError(f"unknown sort {f.sort!r} (one of {', '.join(SORTS)})")
    if f.sort == "queue" and f.status is not None:
        # "pending first" is constant under a status filter: plain age order, which the
        # (verdict, status, created_at, id) index serves as a seek.
        return SORTS["oldest"]
    return SORTS[f.sort]


_LIST_COLUMNS = """
    c.id, c.status, COALESCE(c.edit_type, c.type) AS type,
    COALESCE(c.edit_difficulty, c.difficulty) AS difficulty, c.verdict,
    substr(COALESCE(c.edit_question, c.question), 1, 240) AS question,
    (c.edit_question IS NOT NULL OR c.edit_answer IS NOT NULL OR c.edit_type IS NOT NULL
     OR c.edit_difficulty IS NOT NULL) AS edited,
    c.duplicate_of, c.created_at, c.votes, c.conflict,
    (SELECT group_concat(tg.tag, ' ') FROM candidate_tags tg WHERE tg.candidate_id = c.id)
     AS tags,
    (SELECT group_concat(l.annotator, char(31)) FROM review_leases l WHERE l.candidate_id = c.id
     AND l.expires_at > """ + NOW_SQL + """) AS held_by
"""


def count_candidates(store: Store, f: CandidateFilter) -> int:
    """How many candidates match `f`."""
    where, params = where_clause(f, store, rowid_cap=COUNT_ROWIDS)
    return store.conn.execute(f"SELECT count(*) {where}",
                              params).fetchone()[0]


def page_candidates(store: Store, f: CandidateFilter, offset: int, limit: int,
                    after: tuple | None = None) -> list[dict]:
    """Rows `offset .. offset+limit` of the filtered list in the filter's sort order or, when
    `after` (a row's `sort_key`) is given, the `limit` rows that follow that row (keyset paging:
    no deep OFFSET walk, and rows that moved meanwhile are neither skipped nor repeated).

    Each row: id, status, type and difficulty (edited values win), verdict, question (the
    first 240 characters, edited value wins), edited (0/1), duplicate_of, created_at,
    tags (space-separated or None), and `sort_key` (a tuple).
    """
    keys, direction = _sort(f)
    where, params = where_clause(f, store)
    order = ", ".join(f"{k} {direction}" for k in keys)
    key_cols = ", ".join(f"{k} AS _k{i}" for i, k in enumerate(keys))
    if after is not None:
        rows = _keyset_page(store, f, after, limit)
    else:
        rows = store.query(
            f"SELECT {_LIST_COLUMNS}, {key_cols} {where}"
            f" ORDER BY {order} LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
    for row in rows:
        row["sort_key"] = tuple(row.pop(f"_k{i}") for i in range(len(keys)))
    return rows


def _key_steps(keys: tuple[str, ...], direction: str, key: tuple, before: bool = False
               ) -> list[tuple[str, list, str]]:
    """(condition, params, ORDER BY) steps selecting the rows strictly after (or before) `key`
    in sort order, to run in turn: `k0 = v0 AND (k1, ..) > (v1, ..)` ordered by k1.., then
    `k0 > v0` ordered by the whole key. Split like this each step is an index range seek with
    no sort; a single row value over the whole key is neither (k0 is an expression).
    """
    op = ">" if (direction == "ASC") != before else "<"

    def order(ks: tuple[str, ...]) -> str:
        return ", ".join(f"{k} {direction}" for k in ks)

    if len(keys) <= 2:
        return [(f"({', '.join(keys)}) {op} ({', '.join('?' * len(keys))})", list(key),
                 order(keys))]
    rest = keys[1:]
    return [
        (f"{keys[0]} = ? AND ({', '.join(rest)}) {op} ({', '.join('?' * len(rest))})",
         list(key), order(rest)),
        (f"{keys[0]} {op} ?", [key[0]], order(keys)),
    ]


def _keyset_page(store: Store, f: CandidateFilter, after: tuple, limit: int) -> list[dict]:
    keys, direction = _sort(f)
    where, params = where_clause(f, store)
    key_cols = ", ".join(f"{k} AS _k{i}" for i, k in enumerate(keys))
    rows: list[dict] = []
    for cond, kparams, order in _key_steps(keys, direction, after):
        if len(rows) >= limit:
            break
        rows += store.query(
            f"SELECT {_LIST_COLUMNS}, {key_cols} {where} AND {cond}"
            f" ORDER BY {order} LIMIT ?", [*params, *kparams, limit - len(rows)])
    return rows


def position_of(store: Store, f: CandidateFilter, candidate_id: str) -> int | None:
    """Index of the candidate in the filtered, sorted list (None if it does not match `f`)."""
    keys, direction = _sort(f)
    where, params = where_clause(f, store, rowid_cap=COUNT_ROWIDS)
    row = store.conn.execute(
        f"SELECT {', '.join(keys)} {where} AND c.id = ?",
        [*params, candidate_id]).fetchone()
    if row is None:
        return None
    return sum(
        store.conn.execute(f"SELECT count(*) {where} AND {cond}",
                           [*params, *kparams]).fetchone()[0]
        for cond, kparams, _ in _key_steps(keys, direction, tuple(row), before=True))


def review_stats(store: Store, f: CandidateFilter) -> dict[str, Any]:
    """Progress over `f` ignoring its status: {total, reviewed (accepted + rejected: a skipped
    item is still open), pending, accepted, rejected, skipped, waiting (open, with some of the
    votes it needs), conflicts (waiting for an adjudicator), by_type: {type: {total, reviewed,
    accepted, rejected}}}. One grouped scan and one partial-index count."""
    where, params = where_clause(f.without_status(), store, rowid_cap=COUNT_ROWIDS)
    # Grouped by plain columns (the edit wins in Python), so the narrow covering index of
    # m004 answers it without reading the wide rows.
    rows = [(ctype if edit_type is None else edit_type, status, n)
            for status, ctype, edit_type, n in store.conn.execute(
                f"SELECT c.status, c.type, c.edit_type, count(*) {where}"
                " GROUP BY c.status, c.type, c.edit_type", params)]
    stats: dict[str, Any] = {"total": 0, "reviewed": 0, **{s: 0 for s in STATUSES},
                             "waiting": 0, "conflicts": 0, "by_type": {}}
    # Open items with votes (waiting for more, or for an adjudicator): few, behind a partial
    # index (m006), counted apart so the grouped scan above stays on its narrow index.
    for conflict, n in store.conn.execute(
            f"SELECT c.conflict, count(*) {where} AND c.status = 'pending' AND c.votes > 0"
            " GROUP BY c.conflict", params):
        stats["conflicts" if conflict else "waiting"] += n
    for ctype, status, n in rows:
        stats["total"] += n
        stats[status] = stats.get(status, 0) + n
        t = stats["by_type"].setdefault(ctype, {"total": 0, "reviewed": 0, "accepted": 0,
                                                "rejected": 0})
        t["total"] += n
        if status in t:
            t[status] += n
        if status in ("accepted", "rejected"):
            stats["reviewed"] += n
            t["reviewed"] += n
    return stats


def filter_choices(store: Store) -> dict[str, list]:
    """Values the filter pickers offer: types, difficulties, verdicts, tags, reviewers, and documents
    ([id, title]) that have candidates. Small distinct scans over indexed columns."""
    q = store.conn.execute
    return {
        "type": [r[0] for r in q("SELECT DISTINCT type FROM candidates ORDER BY 1")],
        "difficulty": [r[0] for r in q("SELECT DISTINCT difficulty FROM candidates"
                                       " WHERE difficulty IS NOT NULL ORDER BY 1")],
        "verdict": [r[0] for r in q("SELECT DISTINCT verdict FROM candidates ORDER BY 1")],
        "tag": [r[0] for r in q("SELECT DISTINCT tag FROM candidate_tags ORDER BY 1")],
        "reviewer": [r[0] for r in q("SELECT DISTINCT annotator FROM review_votes"
                                     " ORDER BY 1 LIMIT 200")],
        "document": [list(r) for r in q(
            "SELECT d.id, COALESCE(d.title, d.id) FROM documents d WHERE d.id IN"
            " (SELECT DISTINCT document_id FROM candidates) ORDER BY 2 LIMIT 500")],
    }


def change_marker(store: Store) -> int:
    """`PRAGMA data_version`: changes whenever ANOTHER connection commits to the file. Polling
    it is the cheap way to notice the generator's new rows or another annotator's decisions."""
    return store.conn.execute("PRAGMA data_version").fetchone()[0]


def get_candidate(store: Store, candidate_id: str) -> dict | None:
    """Everything the detail view shows: the candidate row (JSON columns parsed), `tags`,
    `decisions` (every annotator's current decision, oldest first: annotator, final, decision,
    reason, note, at), `held_by` (annotators holding a live lease on it), and
    `sources`: one entry per hop in order, each a list of chunks {id, text, title,
    heading_path (list), document_id, document_title, pages (PDF page numbers, else []),
    evidence: [{quote, start, end}]} -- the chunks a reviewer marked (`edit_chunk_ids`,
    decoded: None while unmarked) when there are some, one hop each; and for a production
    item its `provenance` (decoded) and `linked_records` (how many log records ask it); for a
    harder item, `parts`: the verified items it was built from, in order, each {id, question
    (as edited, if it was), status, edited: whether a reviewer edited its question or answer}
    (an id no longer in the database: status None)."""
    rows = store.query("SELECT * FROM candidates WHERE id = ?", (candidate_id,))
    if not rows:
        return None
    cand = rows[0]
    decode(cand, {"chunk_ids": [], "hops": None, "evidence": [], "verification": [],
                  "rejection_reasons": [], "difficulty_signals": {}, "prompts": {},
                  "fact_ids": [], "edit_chunk_ids": None, "provenance": None, "part_ids": []})
    if cand["provenance"] is not None:
        cand["linked_records"] = store.conn.execute(
            "SELECT count(*) FROM production_links WHERE candidate_id = ?",
            (candidate_id,)).fetchone()[0]
    cand["tags"] = candidate_tags(store.conn, candidate_id)
    cand["parts"] = _parts(store, cand["part_ids"])
    cand["decisions"] = store.query(
        "SELECT annotator, final, decision, reason, note, at FROM review_votes"
        " WHERE candidate_id = ? ORDER BY at, log_id", (candidate_id,))
    cand["held_by"] = [r[0] for r in store.conn.execute(
        f"SELECT annotator FROM review_leases WHERE candidate_id = ? AND expires_at > {NOW_SQL}"
        " ORDER BY annotator", (candidate_id,))]
    hops = cand["hops"] if isinstance(cand["hops"], list) and cand["hops"] else [
        [cid] for cid in cand["chunk_ids"]]
    if isinstance(cand["edit_chunk_ids"], list):
        hops = [[cid] for cid in cand["edit_chunk_ids"]]
    hops = [h if isinstance(h, list) else [h] for h in hops]
    wanted = sorted({str(cid) for hop in hops for cid in hop})
    chunks: dict[str, dict] = {}
    if wanted:
        for row in store.query(
            "SELECT ch.id, ch.text, ch.title, ch.heading_path, ch.document_id, ch.metadata,"
            " COALESCE(d.title, d.id) AS document_title FROM chunks ch"
            " LEFT JOIN documents d ON d.id = ch.document_id"
            f" WHERE ch.id IN ({', '.join('?' * len(wanted))})", wanted,
        ):
            decode(row, {"heading_path": [], "metadata": {}})
            pages = (row.pop("metadata") or {}).get("pages")
            row["pages"] = [p for p in pages if isinstance(p, int)] if isinstance(
                pages, list) else []
            row["evidence"] = []
            chunks[row["id"]] = row
    for ev in cand["evidence"] if isinstance(cand["evidence"], list) else []:
        if isinstance(ev, dict) and ev.get("chunk_id") in chunks:
            chunks[ev["chunk_id"]]["evidence"].append(ev)
    cand["sources"] = [
        [chunks.get(str(cid)) or {"id": str(cid), "missing": True, "text": "", "evidence": [],
                                  "heading_path": [], "document_title": None}
         for cid in hop]
        for hop in hops
    ]
    return cand


def _parts(store: Store, part_ids) -> list[dict]:
    ids = [str(i) for i in part_ids] if isinstance(part_ids, list) else []
    found = {r["id"]: {**r, "edited": bool(r["edited"])} for r in store.query(
        "SELECT id, COALESCE(edit_question, question) AS question, status,"
        " edit_question IS NOT NULL OR edit_answer IS NOT NULL AS edited FROM candidates"
        f" WHERE id IN ({', '.join('?' * len(ids))})", ids)} if ids else {}
    return [found.get(i) or {"id": i, "question": "", "status": None, "edited": False}
            for i in ids]


def candidate_tags(conn: sqlite3.Connection, candidate_id: str) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT tag FROM candidate_tags WHERE candidate_id = ? ORDER BY tag", (candidate_id,))]

