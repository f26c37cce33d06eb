"""Scored RAG runs (`runs`, `run_items`); the human scores beside them are in `calibration.py`.

A scored run is written in one transaction: the `runs` row and all its `run_items` appear
together or not at all, and scoring the same run id again replaces it (idempotent).

`run_items` columns hold JSON text: `contexts` and `retrieved_ids` lists, `metrics` (flat
numbers keyed like the report's `per_query`), `judge` (scores and reasons per judge metric).
The review UI's calibration mode reads them through `list_run_items`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from builder.errors import InputError
from builder.store.db import Store
from builder.store.jsoncols import decode, to_json
from builder.store.timeutil import utcnow


def save_run(
    store: Store, *, run_id: str, name: str | None, golden_path: str | None,
    run_path: str | None, judge_model: str | None, options: Mapping[str, Any],
    summary: Mapping[str, Any], items: Iterable[Mapping[str, Any]],
) -> None:
    """Write (or replace) one scored run and its items, all-or-nothing.

    Each item: query_id, question, reference, answer, contexts (list), retrieved_ids (list),
    metrics (dict), judge (dict or None).
    """
    rows = [
        {
            "run_id": run_id,
            "query_id": item["query_id"],
            "question": item.get("question"),
            "reference": item.get("reference"),
            "answer": item.get("answer"),
            "contexts": to_json(item.get("contexts")),
            "retrieved_ids": to_json(item.get("retrieved_ids")),
            "metrics": to_json(item.get("metrics")),
            "judge": to_json(item.get("judge")),
        }
        for item in items
    ]
    with store.write() as db:
        db.execute("DELETE FROM run_items WHERE run_id = ?", [run_id])
        db.execute("DELETE FROM runs WHERE id = ?", [run_id])
        db["runs"].insert(
            {
                "id": run_id, "name": name, "golden_path": golden_path, "run_path": run_path,
                "judge_model": judge_model, "options": to_json(dict(options)),
                "summary": to_json(dict(summary)), "created_at": utcnow(),
            }
        )
        if rows:
            db["run_items"].insert_all(rows, batch_size=500)


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
    """A run's items ordered by query id, JSON columns decoded (pages with limit/offset)."""
    sql = ("SELECT run_id, query_id, question, reference, answer, contexts, retrieved_ids, "
           "metrics, judge FROM run_items WHERE run_id = ? ORDER BY query_id")
    params: list[Any] = [run_id]
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        params += [limit, offset]
    return [decode(row, ("contexts", "retrieved_ids", "metrics", "judge"))
            for row in store.query(sql, params)]


def require_run(store: Store, run_id: str | None = None) -> dict:
    """`get_run`, or the one-line InputError `golden calibrate` and `golden review
    --calibrate` both give when there is no such run (or no scored run at all)."""
    run = get_run(store, run_id)
    if run is None:
        raise InputError(f"no scored run {run_id!r}" if run_id else
                         "no scored run in the database: run `golden score` first")
    return run
