"""All SQL of production logs: staging and merging an import, the sample, evaluations, trends.

Import guarantees (`LogStaging`):
- An import is staged in TEMP tables of the importing connection: SQLite keeps them in a
  temporary file of their own, so staging takes no lock on the database and memory stays
  bounded (pages spill to that file). Nothing reaches the database file until `merge`.
- `merge` copies everything staged in ONE `BEGIN IMMEDIATE` transaction: every record of
  every file given, or (a bad line, a full disk, a crash) none. Records are keyed by id:
  `INSERT OR IGNORE`, so a record already stored is never changed (re-importing a file adds
  nothing) and one whose content differs is counted, not overwritten.
- Callers stage scrubbed rows only (builder/logs/scrub.py): nothing here sees a raw value.

JSON columns are written with `jsoncols`; times are ISO-8601 UTC text, so a day is its first
10 characters.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from builder.store.db import Store
from builder.store.jsoncols import decode, to_json
from builder.store.timeutil import utcnow

RECORD_COLUMNS = (
    "id", "at", "session_id", "query", "answer", "retrieved_ids", "context_hashes",
    "latency_ms", "prompt_tokens", "completion_tokens", "cost", "model", "thumbs",
    "feedback_reason", "reasked", "handed_off", "flagged", "sample_key", "metadata", "source",
    "content_hash",
)
RECORD_JSON = ("retrieved_ids", "context_hashes", "metadata")
EVALUATION_JSON = {"metrics": {}, "details": {}, "unscored": []}
_KEY = "logs.pseudonym_key"
_BATCH = 900


def pseudonym_key(store: Store) -> bytes:
    """This database's key for pseudonymising ids (created once, kept in `meta`)."""
    with store.write() as db:
        db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)",
                   [_KEY, os.urandom(32).hex()])
        return bytes.fromhex(db.execute("SELECT value FROM meta WHERE key = ?",
                                        [_KEY]).fetchone()[0])


# ---------------------------------------------------------------- import

@dataclass
class MergeCounts:
    import_id: int
    added: int
    unchanged: int
    differing: int


class LogStaging:
    """The staging area of one import (see the module docstring). Use as a context manager:
    the TEMP tables are dropped on exit, merged or not."""

    def __init__(self, store: Store):
        self.store = store
        conn = store.conn
        conn.execute("DROP TABLE IF EXISTS temp.log_stage")
        conn.execute("DROP TABLE IF EXISTS temp.ctx_stage")
        conn.execute("DROP TABLE IF EXISTS temp.span_stage")
        cols = ", ".join(c if c != "id" else "id TEXT PRIMARY KEY" for c in RECORD_COLUMNS)
        conn.execute(f"CREATE TEMP TABLE log_stage ({cols})")
        conn.execute("CREATE TEMP TABLE ctx_stage (hash TEXT PRIMARY KEY, text TEXT NOT NULL)")
        conn.execute("CREATE TEMP TABLE span_stage (trace_id TEXT NOT NULL, start_ns INTEGER,"
                     " seq INTEGER NOT NULL, source TEXT NOT NULL, origin TEXT NOT NULL,"
                     " facts TEXT NOT NULL)")
        self._insert = (f"INSERT OR IGNORE INTO temp.log_stage ({', '.join(RECORD_COLUMNS)})"
                        f" VALUES ({', '.join('?' * len(RECORD_COLUMNS))})")

    def __enter__(self) -> "LogStaging":
        return self

    def __exit__(self, *exc) -> None:
        conn = self.store.conn
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        for table in ("log_stage", "ctx_stage", "span_stage"):
            conn.execute(f"DROP TABLE IF EXISTS temp.{table}")

    @contextlib.contextmanager
    def _temp_write(self) -> Iterator[Any]:
        """A transaction that writes TEMP tables only: it never locks the database file."""
        conn = self.store.conn
        conn.execute("BEGIN DEFERRED")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def add(self, records: Sequence[Sequence[Any]], contexts: Iterable[tuple[str, str]],
            spans: Sequence[tuple[str, int | None, int, str, str, str]]) -> int:
        """Stage one batch: record rows (values in RECORD_COLUMNS order), (hash, text) contexts
        and spans (trace id, start ns, seq, source format, origin "file index:line", facts JSON).
        Returns how many records were new to this import (a second record with the same id in
        the input is ignored)."""
        with self._temp_write() as conn:
            before = conn.total_changes
            if records:
                conn.executemany(self._insert, records)
            new = conn.total_changes - before
            conn.executemany("INSERT OR IGNORE INTO temp.ctx_stage (hash, text) VALUES (?, ?)",
                             contexts)
            if spans:
                conn.executemany("INSERT INTO temp.span_stage (trace_id, start_ns, seq, source,"
                                 " origin, facts) VALUES (?, ?, ?, ?, ?, ?)", spans)
        return new

    def traces(self) -> Iterator[tuple[str, list[tuple[str, str, str]]]]:
        """(trace id, its spans' (source, origin, facts JSON) by start time) for every staged
        trace, from one cursor over an index built once (bounded memory whatever the number of
        spans)."""
        conn = self.store.conn
        conn.execute("CREATE INDEX IF NOT EXISTS temp.span_stage_trace"
                     " ON span_stage(trace_id, start_ns, seq)")
        cur = conn.execute("SELECT trace_id, source, origin, facts FROM temp.span_stage"
                           " ORDER BY trace_id, start_ns, seq")
        current: str | None = None
        spans: list[tuple[str, str, str]] = []
        while rows := cur.fetchmany(2000):
            for trace_id, source, origin, facts in rows:
                if trace_id != current:
                    if current is not None:
                        yield current, spans
                    current, spans = trace_id, []
                spans.append((source, origin, facts))
        if current is not None:
            yield current, spans

    def merge(self, *, paths: Sequence[str], lines: int, records: int,
              scrubbed: dict[str, int]) -> MergeCounts:
        """Copy everything staged into the database in one transaction (see the module doc)."""
        cols = ", ".join(RECORD_COLUMNS)
        with self.store.write() as db:
            conn = db.conn
            import_id = conn.execute(
                "INSERT INTO log_imports (paths, lines, records, added, unchanged, differing,"
                " scrubbed, at) VALUES (?, ?, ?, 0, 0, 0, ?, ?)",
                [to_json(list(paths)), lines, records, to_json(scrubbed), utcnow()]).lastrowid
            same, differing = conn.execute(
                "SELECT coalesce(sum(r.content_hash = s.content_hash), 0),"
                " coalesce(sum(r.content_hash <> s.content_hash), 0)"
                " FROM temp.log_stage s JOIN log_records r ON r.id = s.id").fetchone()
            conn.execute("INSERT OR IGNORE INTO log_contexts (hash, text)"
                         " SELECT hash, text FROM temp.ctx_stage")
            added = conn.execute(
                f"INSERT OR IGNORE INTO log_records ({cols}, import_id)"
                f" SELECT {cols}, ? FROM temp.log_stage ORDER BY id", [import_id]).rowcount
            conn.execute("UPDATE log_imports SET added = ?, unchanged = ?, differing = ?"
                         " WHERE id = ?", [added, same, differing, import_id])
        return MergeCounts(import_id, added, same, differing)


# ---------------------------------------------------------------- reading records

def rows_for_ids(store: Store, sql: str, ids: Iterable[str], *, before: Sequence = ()
                 ) -> Iterator[dict]:
    """The rows of `sql`, whose `{marks}` is an IN list, for each distinct id of `ids`, in
    batches far below SQLite's bound on host parameters (`before`: parameters ahead of them)."""
    wanted = sorted(set(ids))
    for start in range(0, len(wanted), _BATCH):
        batch = wanted[start:start + _BATCH]
        yield from store.query(sql.format(marks=", ".join("?" * len(batch))), [*before, *batch])


def _window(since: str | None, until: str | None, alias: str = "r") -> tuple[str, list]:
    clauses, params = [], []
    if since is not None:
        clauses.append(f"{alias}.at >= ?")
        params.append(since)
    if until is not None:
        clauses.append(f"{alias}.at < ?")
        params.append(until)
    return " AND ".join(clauses) or "1", params


def count_records(store: Store, since: str | None = None, until: str | None = None) -> int:
    where, params = _window(since, until)
    return store.query(f"SELECT count(*) AS n FROM log_records r WHERE {where}", params)[0]["n"]


def sample_records(store: Store, rate: float, since: str | None = None,
                   until: str | None = None) -> list[dict]:
    """The records of the window in the deterministic sample (`sample_key < rate`) or flagged
    by feedback, oldest first, JSON columns decoded, with `sampled` = 1 for the former."""
    where, params = _window(since, until)
    rows = store.query(
        f"SELECT r.*, r.sample_key < ? AS sampled FROM log_records r"
        f" WHERE (r.sample_key < ? OR r.flagged = 1) AND {where} ORDER BY r.at, r.id",
        [rate, rate, *params])
    return [decode(r, RECORD_JSON) for r in rows]


def records_by_id(store: Store, ids: Iterable[str]) -> dict[str, dict]:
    return {row["id"]: decode(row, RECORD_JSON) for row in rows_for_ids(
        store, "SELECT * FROM log_records WHERE id IN ({marks})", ids)}


def context_texts(store: Store, hashes: Iterable[str]) -> dict[str, str]:
    """hash -> text for the stored contexts among `hashes`."""
    return {row["hash"]: row["text"] for row in rows_for_ids(
        store, "SELECT hash, text FROM log_contexts WHERE hash IN ({marks})", hashes)}


def log_summary(store: Store) -> dict[str, Any]:
    """Counts for `golden stats`: records, date range, flagged, evaluated, promoted."""
    row = store.query(
        "SELECT count(*) AS records, min(at) AS first, max(at) AS last,"
        " coalesce(sum(flagged), 0) AS flagged,"
        " coalesce(sum(thumbs = 'up'), 0) AS thumbs_up FROM log_records")[0]
    row["evaluated"] = store.query(
        "SELECT count(DISTINCT record_id) AS n FROM log_evaluations")[0]["n"]
    row["promoted"] = store.query(
        "SELECT count(DISTINCT record_id) AS n FROM production_links")[0]["n"]
    return row


# ---------------------------------------------------------------- evaluations

def evaluations(store: Store, judge_key: str, ids: Iterable[str]) -> dict[str, dict]:
    """record id -> its evaluation under `judge_key` (metrics, details, unscored decoded)."""
    return {row["record_id"]: decode(row, EVALUATION_JSON) for row in rows_for_ids(
        store, "SELECT record_id, judge_model, metrics, details, unscored, judged_at"
        " FROM log_evaluations WHERE judge_key = ? AND record_id IN ({marks})", ids,
        before=[judge_key])}


def save_evaluations(store: Store, judge_key: str, judge_model: str | None,
                     rows: Iterable[tuple[str, dict, dict, list]]) -> int:
    """Store (record id, metrics, details, unscored) under `judge_key`, replacing an earlier
    evaluation of the same record and judge, in one transaction. Returns rows written."""
    now = utcnow()
    values = [(rid, judge_key, judge_model, to_json(m), to_json(d), to_json(u), now)
              for rid, m, d, u in rows]
    with store.write() as db:
        db.conn.executemany(
            "INSERT OR REPLACE INTO log_evaluations (record_id, judge_key, judge_model, metrics,"
            " details, unscored, judged_at) VALUES (?, ?, ?, ?, ?, ?, ?)", values)
    return len(values)


def promotable_records(store: Store, since: str | None = None, until: str | None = None
                       ) -> Iterator[dict]:
    """Records that may become golden items, oldest first: flagged, thumbs up, or evaluated;
    each with its newest evaluation (`metrics`, `details`, `judge_model`; empty when none)
    and `linked_to`, the candidate it is already linked to (None when not promoted yet).
    Streamed from one cursor."""
    where, params = _window(since, until)
    cur = store.conn.execute(
        "WITH picked AS ("
        f" SELECT r.id FROM log_records r WHERE r.flagged = 1 AND {where}"
        f" UNION SELECT r.id FROM log_records r WHERE r.thumbs = 'up' AND {where}"
        " UNION SELECT r.id FROM log_evaluations e JOIN log_records r ON r.id = e.record_id"
        f" WHERE {where})"
        " SELECT r.*, e.metrics AS metrics, e.details AS details, e.judge_model AS judge_model,"
        " (SELECT l.candidate_id FROM production_links l WHERE l.record_id = r.id"
        "  ORDER BY l.linked_at LIMIT 1) AS linked_to"
        " FROM picked p JOIN log_records r ON r.id = p.id"
        " LEFT JOIN log_evaluations e ON e.rowid = (SELECT e2.rowid FROM log_evaluations e2"
        "  WHERE e2.record_id = r.id ORDER BY e2.judged_at DESC LIMIT 1)"
        " ORDER BY r.at, r.id", params * 3)
    cols = [c[0] for c in cur.description]
    try:
        while rows := cur.fetchmany(500):
            for row in rows:
                yield decode(dict(zip(cols, row)), {**dict.fromkeys(RECORD_JSON),
                                                    "metrics": {}, "details": {}})
    finally:
        cur.close()


# ---------------------------------------------------------------- trends

def trend_counts(store: Store, since: str | None, until: str | None) -> list[dict]:
    """Per day (UTC) of the window: records, thumbs up/down, hand-offs, re-asks, mean latency,
    over every record (no judge needed)."""
    where, params = _window(since, until)
    return store.query(
        "SELECT substr(r.at, 1, 10) AS day, count(*) AS records,"
        " sum(r.thumbs = 'up') AS thumbs_up, sum(r.thumbs = 'down') AS thumbs_down,"
        " sum(r.handed_off) AS handed_off, sum(r.reasked) AS reasked,"
        " sum(r.latency_ms) AS latency_sum, count(r.latency_ms) AS latency_n"
        f" FROM log_records r WHERE {where} GROUP BY day ORDER BY day", params)


def trend_judged(store: Store, judge_key: str, rate: float, metrics: Sequence[str],
                 since: str | None, until: str | None) -> list[dict]:
    """Per day of the window, over the sampled records (`sample_key < rate`) judged under
    `judge_key`: how many, and for each metric its sum and count (averaged by the caller,
    so days add up to weeks exactly)."""
    where, params = _window(since, until)
    parts = []
    for m in metrics:  # metric names come from golden's own list, never from input
        path = f"'$.{m}'"
        parts.append(f"sum(json_extract(e.metrics, {path})) AS \"{m}_sum\","
                     f" count(json_extract(e.metrics, {path})) AS \"{m}_n\"")
    return store.query(
        f"SELECT substr(r.at, 1, 10) AS day, count(*) AS judged, {', '.join(parts)}"
        " FROM log_records r JOIN log_evaluations e ON e.record_id = r.id AND e.judge_key = ?"
        f" WHERE r.sample_key < ? AND {where} GROUP BY day ORDER BY day",
        [judge_key, rate, *params])


def last_record_at(store: Store) -> str | None:
    """The time of the newest record (None when there is none): an index lookup."""
    return store.query("SELECT max(at) AS at FROM log_records")[0]["at"]


def newest_evaluations(store: Store, ids: Iterable[str]) -> dict[str, dict]:
    """record id -> its newest evaluation under any judge (metrics, details decoded)."""
    out: dict[str, dict] = {}
    for row in rows_for_ids(store, "SELECT record_id, judge_model, metrics, details, judged_at"
                            " FROM log_evaluations WHERE record_id IN ({marks})"
                            " ORDER BY judged_at", ids):
        out[row["record_id"]] = decode(row, {"metrics": {}, "details": {}})  # newest wins
    return out


def linked_candidates(store: Store, ids: Iterable[str]) -> dict[str, str]:
    """record id -> the candidate it was promoted to or linked with."""
    return {row["record_id"]: row["candidate_id"] for row in rows_for_ids(
        store, "SELECT record_id, candidate_id FROM production_links WHERE record_id IN"
        " ({marks}) ORDER BY linked_at DESC, candidate_id DESC", ids)}
