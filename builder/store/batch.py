"""All SQL for requests staged for batch engines (`batch_requests`) and the result lines
imported for them (`batch_replies`); the tables are described in migration m006.

A request's life: `staged` when written to a request file (or `pending`, a follow-up the
import asked for and no pass has written yet); then, when a result line for it is imported,
`done` (its outcome logged in llm_calls), `continued` (the reply asked for a larger retry or a
repair round: a follow-up row with the next step is added) or `failed` (the engine could not
run it: the next pass stages it again). A key's rows form its chain, step 0 first.

Each imported line is one savepoint inside the importer's transaction: its llm_calls row, its
request's new status and its `batch_replies` row land together or not at all, so an import
killed at any point is resumed by importing the same files again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from builder.store.db import Store
from builder.store.jsoncols import decode, to_json
from builder.store.llm_calls import record_call
from builder.store.timeutil import utcnow

_JSON = ("params", "messages", "state")
_COLUMNS = ("custom_id", "cache_key", "step", "status", "batch_dir", "file", "job", "stage",
            "prompt_name", "prompt_version", "role", "base_url", "model", "params", "messages",
            "output", "state", "call_id", "staged_at", "updated_at")


def _row(values: dict[str, Any]) -> tuple:
    return tuple(to_json(values.get(c)) if c in _JSON else values.get(c) for c in _COLUMNS)


def latest_step(store: Store, cache_key: str) -> dict[str, Any] | None:
    """The newest row of a key's chain (decoded), or None when it was never staged."""
    rows = store.query("SELECT * FROM batch_requests WHERE cache_key = ? ORDER BY step DESC "
                       "LIMIT 1", (cache_key,))
    return decode(rows[0], _JSON) if rows else None


def request(store: Store, custom_id: str) -> dict[str, Any] | None:
    rows = store.query("SELECT * FROM batch_requests WHERE custom_id = ?", (custom_id,))
    return decode(rows[0], _JSON) if rows else None


def call_outcome(store: Store, call_id: int) -> dict[str, Any] | None:
    """Status, error and tokens of a logged call (a request's final outcome)."""
    rows = store.query("SELECT id, status, error, prompt_tokens, completion_tokens FROM llm_calls "
                       "WHERE id = ?", (call_id,))
    return rows[0] if rows else None


def record_staged(store: Store, rows: Iterable[dict[str, Any]]) -> int:
    """Insert newly staged requests, or mark existing ones (a failed or pending step written
    again) staged in their new file. One transaction; returns the number of rows."""
    now = utcnow()
    count = 0
    marks = ", ".join("?" for _ in _COLUMNS)
    with store.write() as db:
        for values in rows:
            values = {**values, "status": "staged", "staged_at": now, "updated_at": now}
            db.conn.execute(
                f"INSERT INTO batch_requests ({', '.join(_COLUMNS)}) VALUES ({marks}) "
                "ON CONFLICT(custom_id) DO UPDATE SET status = 'staged', file = excluded.file, "
                "batch_dir = excluded.batch_dir, staged_at = excluded.staged_at, "
                "updated_at = excluded.updated_at", _row(values))
            count += 1
    return count


def forget_chain(store: Store, cache_key: str) -> None:
    """Drop a key's chain, so that the next pass asks afresh (a failure the finished job got,
    or a chain whose outcome no longer serves). Its logged calls stay in llm_calls."""
    with store.write() as db:
        db.execute("DELETE FROM batch_requests WHERE cache_key = ?", (cache_key,))


def release_file(store: Store, file: str) -> int:
    """Requests of a request file that will never get results (its batch failed, expired or
    was cancelled without them): marked failed, so the next pass stages them again."""
    with store.write() as db:
        cur = db.execute("UPDATE batch_requests SET status = 'failed', updated_at = ? "
                         "WHERE file = ? AND status = 'staged'", (utcnow(), file))
        return cur.rowcount


def reply_seen(store: Store, reply_id: str) -> bool:
    return bool(store.query("SELECT 1 FROM batch_replies WHERE reply_id = ?", (reply_id,)))


def note_reply(store: Store, reply_id: str, custom_id: str, outcome: str) -> None:
    """Remember an imported line (one that changed nothing included: a duplicate)."""
    with store.write() as db:
        db.execute("INSERT OR IGNORE INTO batch_replies (reply_id, custom_id, outcome, "
                   "imported_at) VALUES (?, ?, ?, ?)", (reply_id, custom_id, outcome, utcnow()))


def settle(store: Store, req: dict[str, Any], *, reply_id: str, outcome: str, status: str,
           call: dict[str, Any] | None = None, state: dict[str, Any] | None = None,
           follow_up: dict[str, Any] | None = None) -> int | None:
    """Apply one imported line to its request, atomically: log `call` in llm_calls (when
    given), set the request's `status` (and `state`), add the `follow_up` row (pending), and
    remember the line. Returns the llm_calls id."""
    now = utcnow()
    with store.write() as db:
        call_id = record_call(store, **call) if call is not None else None
        db.execute(
            "UPDATE batch_requests SET status = ?, state = ?, call_id = COALESCE(?, call_id), "
            "messages = CASE WHEN ? = 'done' THEN NULL ELSE messages END, updated_at = ? "
            "WHERE custom_id = ?",
            (status, to_json(state if state is not None else req.get("state")), call_id, status,
             now, req["custom_id"]))
        if follow_up is not None:
            values = {**follow_up, "status": "pending", "updated_at": now}
            db.conn.execute(
                f"INSERT OR REPLACE INTO batch_requests ({', '.join(_COLUMNS)}) VALUES "
                f"({', '.join('?' for _ in _COLUMNS)})", _row(values))
        db.execute("INSERT OR IGNORE INTO batch_replies (reply_id, custom_id, outcome, "
                   "imported_at) VALUES (?, ?, ?, ?)", (reply_id, req["custom_id"], outcome, now))
    return call_id


def counts(store: Store, batch_dir: str | None = None) -> dict[str, int]:
    """Requests per status (of one --batch folder, or all)."""
    where, params = ("WHERE batch_dir = ?", (batch_dir,)) if batch_dir else ("", ())
    rows = store.query(f"SELECT status, count(*) AS n FROM batch_requests {where} GROUP BY status",
                       params)
    return {r["status"]: r["n"] for r in rows}


def answered_totals(store: Store, batch_dir: str) -> dict[str, Any]:
    """Replies logged for the requests of a --batch folder: calls, tokens and cost."""
    rows = store.query(
        "SELECT count(*) AS calls, COALESCE(SUM(c.prompt_tokens), 0) AS prompt_tokens, "
        "COALESCE(SUM(c.completion_tokens), 0) AS completion_tokens, "
        "SUM(c.cost_usd) AS cost_usd FROM llm_calls c WHERE c.id IN "
        "(SELECT call_id FROM batch_requests WHERE batch_dir = ? AND call_id IS NOT NULL)",
        (batch_dir,))
    return rows[0]
