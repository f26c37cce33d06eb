"""All SQL for the `llm_calls` log/cache (and the client's remembered response-format modes).

Every structured call that reached the network (or failed trying) is one row; a row with
status 'ok' doubles as the cache entry for its `cache_key`. Rows are append-only: a re-run
of a failed call adds a new row, so the log keeps the whole history.

Callers pass already-scrubbed data: this module never sees API keys or HTTP headers.
"""

from __future__ import annotations

from typing import Any

from builder.store.db import Store
from builder.store.jsoncols import decode, to_json
from builder.store.timeutil import utcnow

_JSON_COLUMNS = ("params", "messages", "parsed")
_MODE_KEY = "llm.response_format:"


def find_cached(store: Store, cache_key: str) -> dict[str, Any] | None:
    """The newest 'ok' row for `cache_key`, with JSON columns decoded; None on a miss."""
    rows = store.query(
        "SELECT id, model, parsed, prompt_tokens, completion_tokens FROM llm_calls "
        "WHERE cache_key = ? AND status = 'ok' ORDER BY id DESC LIMIT 1",
        (cache_key,),
    )
    if not rows:
        return None
    row = rows[0]
    return decode(row, ("parsed",))


def record_call(store: Store, **fields: Any) -> int:
    """Append one call (one transaction) and return its id. Dict/list values are JSON-encoded."""
    row = {k: to_json(v) if k in _JSON_COLUMNS else v for k, v in fields.items()}
    row.setdefault("created_at", utcnow())
    columns = ", ".join(row)  # keys come from the client's code, never from data
    marks = ", ".join("?" for _ in row)
    with store.write() as db:
        cur = db.conn.execute(f"INSERT INTO llm_calls ({columns}) VALUES ({marks})", tuple(row.values()))
        return cur.lastrowid


def load_response_modes(store: Store) -> dict[str, str]:
    """Remembered response-format mode per "base_url|model" (json_schema/json_object/text)."""
    rows = store.query("SELECT key, value FROM meta WHERE key LIKE ?", (_MODE_KEY + "%",))
    return {r["key"][len(_MODE_KEY):]: r["value"] for r in rows}


def save_response_mode(store: Store, endpoint_model: str, mode: str) -> None:
    """Remember which response-format mode works for an endpoint+model (idempotent)."""
    with store.write() as db:
        db.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                   (_MODE_KEY + endpoint_model, mode))
