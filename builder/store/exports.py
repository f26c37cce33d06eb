"""Read queries for `golden export`: a consistent snapshot, a streamed key scan, batched fetches.

The export reads the database twice (keys first, whole records second). Both passes run inside
`read_snapshot`, one read transaction: in WAL mode it sees one committed state of the file for
its whole length, so a reviewer accepting or editing items meanwhile cannot make the two passes
disagree, and writers are never blocked by it.

Memory stays bounded: `iter_selection_keys` streams from one cursor (rows are never all fetched),
and `fetch_candidates` / `fetch_tags` / `fetch_documents` take one batch of keys.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from builder.store.db import Store

# Columns of a candidate as exported: reviewer edits win over the generated text.
_CANDIDATE_COLUMNS = """
    rowid AS rowid, id, coalesce(edit_question, question) AS query,
    coalesce(edit_answer, answer) AS expected_answer,
    coalesce(edit_type, type) AS type, coalesce(edit_difficulty, difficulty) AS difficulty,
    edit_question IS NOT NULL AS edited_question, edit_answer IS NOT NULL AS edited_answer,
    edit_type IS NOT NULL AS edited_type, edit_difficulty IS NOT NULL AS edited_difficulty,
    edit_chunk_ids IS NOT NULL AS edited_chunks,
    language, coalesce(edit_chunk_ids, chunk_ids) AS chunk_ids, evidence, seed_fact_id,
    document_id, generator_model, status, verdict, reviewer, reviewed_at, reject_reason,
    reject_note, provenance
"""

_BATCH_LIMIT = 900  # stays far below SQLite's bound on host parameters


class SelectionKey(NamedTuple):
    """The little that the split needs to know about one selected candidate."""

    rowid: int
    id: str
    seed_fact_id: str | None
    type: str
    difficulty: str | None
    updated_at: str


def _selection_where(statuses: Sequence[str], types: Sequence[str] | None) -> tuple[str, list]:
    """WHERE clause of the export selection (see `iter_selection_keys`)."""
    params: list = list(statuses)
    clause = (
        f"status IN ({', '.join('?' * len(statuses))}) AND duplicate_of IS NULL"
        " AND (status = 'accepted' OR verdict IS NULL OR verdict <> 'failed')"
        " AND (type <> 'production' OR (status = 'accepted' AND edit_chunk_ids IS NOT NULL))"
    )
    if types:
        clause += f" AND coalesce(edit_type, type) IN ({', '.join('?' * len(types))})"
        params.extend(types)
    return clause, params


@contextlib.contextmanager
def read_snapshot(store: Store) -> Iterator[None]:
    """One read transaction around several queries: they all see the same committed state.

    Joins a transaction already open on this connection instead of nesting one.
    """
    if store.conn.in_transaction:
        yield
        return
    store.conn.execute("BEGIN DEFERRED")
    try:
        yield
    finally:
        if store.conn.in_transaction:
            store.conn.execute("COMMIT")


def iter_selection_keys(store: Store, statuses: Sequence[str],
                        types: Sequence[str] | None = None) -> Iterator[SelectionKey]:
    """Stream the keys of the candidates an export selects, in rowid (creation) order.

    Selected: status in `statuses`; never a duplicate (duplicate_of set); effective type (the
    reviewer's edit, else the generated one) in `types` when given. An item a human accepted is
    taken whatever the automatic verdict says; any other status is taken only when the automatic
    verification did not fail it (verdict pending or passed). A `production` item (promoted
    from logs) only once a reviewer accepted it with its relevant chunks marked: before that
    it has no reviewed reference, whatever `statuses` asks for.

    Scans the table in rowid order from one cursor (no sort, no full fetch): O(table), bounded
    memory, whatever the share of rows selected.
    """
    where, params = _selection_where(statuses, types)
    cur = store.conn.execute(
        "SELECT rowid, id, seed_fact_id, coalesce(edit_type, type),"
        " coalesce(edit_difficulty, difficulty), updated_at"
        f" FROM candidates NOT INDEXED WHERE {where} ORDER BY rowid",
        params,
    )
    try:
        while True:
            rows = cur.fetchmany(2000)
            if not rows:
                return
            for row in rows:
                yield SelectionKey(*row)
    finally:
        cur.close()


def group_name(candidate_id: str, seed_fact_id: str | None) -> str:
    """The leakage group a candidate starts in: its seed fact (a question and its variants),
    else itself."""
    return seed_fact_id or "id:" + candidate_id


def part_links(store: Store) -> list[tuple[str, str]]:
    """(group of a harder item, group of one of its parts) for every part every harder item
    names (`part_ids`), whatever its status: a comparative repeats both parts' questions and
    answers, so it must share a split with each of them, and two items built on one part with
    each other."""
    rows = store.conn.execute(
        "SELECT c.id, c.seed_fact_id, p.id, p.seed_fact_id FROM candidates c"
        " JOIN json_each(CASE WHEN json_valid(c.part_ids) THEN c.part_ids ELSE '[]' END) j"
        " JOIN candidates p ON p.id = j.value WHERE c.part_ids IS NOT NULL").fetchall()
    return [(group_name(cid, cseed), group_name(pid, pseed)) for cid, cseed, pid, pseed in rows]


def count_candidates(store: Store) -> int:
    """All candidates in the database (for the message when a selection is empty)."""
    return store.conn.execute("SELECT count(*) FROM candidates").fetchone()[0]


def _batched(keys: Sequence, size: int = _BATCH_LIMIT) -> Iterator[Sequence]:
    for start in range(0, len(keys), size):
        yield keys[start:start + size]


def fetch_candidates(store: Store, rowids: Sequence[int]) -> list[dict]:
    """The export columns of the candidates with these rowids, in the order of `rowids`.

    Rowids that no longer exist are left out (cannot happen inside one `read_snapshot`).
    """
    by_rowid: dict[int, dict] = {}
    for batch in _batched(list(rowids)):
        for row in store.query(
            f"SELECT {_CANDIDATE_COLUMNS} FROM candidates"
            f" WHERE rowid IN ({', '.join('?' * len(batch))})",
            list(batch),
        ):
            by_rowid[row["rowid"]] = row
    return [by_rowid[r] for r in rowids if r in by_rowid]


def fetch_documents(store: Store, document_ids: Sequence[str]) -> dict[str, dict]:
    """document id -> {id, title, path} for the ids that exist."""
    out: dict[str, dict] = {}
    ids = sorted(set(document_ids))
    for batch in _batched(ids):
        for row in store.query(
            f"SELECT id, title, path FROM documents WHERE id IN ({', '.join('?' * len(batch))})",
            list(batch),
        ):
            out[row["id"]] = row
    return out


def fetch_tags(store: Store, candidate_ids: Sequence[str]) -> dict[str, list[str]]:
    """candidate id -> its tags, sorted; candidates without tags are absent."""
    out: dict[str, list[str]] = {}
    ids = sorted(set(candidate_ids))
    for batch in _batched(ids):
        for row in store.query(
            "SELECT candidate_id, tag FROM candidate_tags"
            f" WHERE candidate_id IN ({', '.join('?' * len(batch))}) ORDER BY candidate_id, tag",
            list(batch),
        ):
            out.setdefault(row["candidate_id"], []).append(row["tag"])
    return out
