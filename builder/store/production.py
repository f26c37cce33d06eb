"""All SQL of production items: log records promoted to `production` candidates, the links of
records to existing items, and the neighbours a new question is compared with.

Guarantees:
- `promote_records` writes every new candidate and every link of one promotion in ONE
  transaction; candidate ids and links are deterministic (INSERT OR IGNORE), so promoting the
  same records again adds nothing.
- A promoted record is linked to exactly the candidate it became or was found to duplicate
  (`production_links`, similarity 1.0 for its own candidate), so a record is promoted once.
- The review columns are never written here: production candidates start pending, and their
  reference and chunks come from a reviewer (builder/store/review_log.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from builder.store.candidates import CANDIDATE_COLUMNS, CANDIDATE_JSON
from builder.store.db import Store
from builder.store.jsoncols import decode, to_json
from builder.store.logs import rows_for_ids
from builder.store.timeutil import utcnow

_WORD = re.compile(r"\w{3,}", re.UNICODE)  # the trigram index matches 3+ characters


def question_neighbours(store: Store, question: str, k: int = 20) -> list[dict]:
    """Candidates whose question (or its reviewer's edit) shares words with `question`, best
    first (BM25 over the trigram index of migration m004): id, effective question, status,
    duplicate_of. Words are quoted terms, never FTS5 syntax."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(question)))[:32]
    if not words:
        return []
    query = "{question edit_question} : (" + " OR ".join(
        '"' + w.replace('"', '""') + '"' for w in words) + ")"
    return store.query(
        "SELECT c.id, coalesce(c.edit_question, c.question) AS question, c.status,"
        " c.duplicate_of FROM candidates_fts f JOIN candidates c ON c.rowid = f.rowid"
        " WHERE candidates_fts MATCH ? ORDER BY bm25(candidates_fts), c.id LIMIT ?",
        [query, k])


def promote_records(store: Store, candidates: Sequence[dict[str, Any]],
                    links: Sequence[tuple[str, str, float, dict]]) -> int:
    """Insert the new `production` candidates (dicts of CANDIDATE_COLUMNS + provenance) and the
    (candidate id, record id, similarity, provenance) links in one transaction. Returns how
    many candidates were new."""
    now = utcnow()
    columns = (*CANDIDATE_COLUMNS, "provenance")
    new = 0
    with store.write() as db:
        for row in candidates:
            values = {c: row.get(c) for c in columns}
            values["created_at"] = values["updated_at"] = now
            for c in (*CANDIDATE_JSON, "provenance"):
                values[c] = to_json(values[c])
            cur = db.execute(
                f"INSERT OR IGNORE INTO candidates ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' * len(columns))})", [values[c] for c in columns])
            new += cur.rowcount
        db.conn.executemany(
            "INSERT OR IGNORE INTO production_links (candidate_id, record_id, similarity,"
            " provenance, linked_at) VALUES (?, ?, ?, ?, ?)",
            [(cid, rid, sim, to_json(prov), now) for cid, rid, sim, prov in links])
    return new


def links_of(store: Store, candidate_ids: Iterable[str]) -> dict[str, list[dict]]:
    """candidate id -> its linked log records (record_id, similarity, provenance decoded),
    oldest link first; candidates without links are absent."""
    out: dict[str, list[dict]] = {}
    for row in rows_for_ids(store, "SELECT candidate_id, record_id, similarity, provenance,"
                            " linked_at FROM production_links WHERE candidate_id IN ({marks})"
                            " ORDER BY linked_at, record_id", candidate_ids):
        out.setdefault(row.pop("candidate_id"), []).append(decode(row, ("provenance",)))
    return out
