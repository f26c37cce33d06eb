"""Scored RAG runs (`runs`, `run_items`); the human scores beside them are in `calibration.py`.

A scored run is written in one transaction: the `runs` row and all its `run_items` appear
together or not at all, and scoring the same run id again replaces it (idempotent).

`run_items` columns hold JSON text: `contexts` and `retrieved_ids` lists, `judge` (scores and
reasons per judge metric). The items' metrics are not on their rows: they are packed into one
value on the run (`runs.item_metrics`, see `pack_item_metrics`): floats as doubles, one zlib
stream, not a JSON text of 22 numbers per row. A 10,000-query save then writes one value
instead of 10,000 (`golden score --qrels --trec-run` saves by default, issue 33). Runs saved
by earlier goldens keep a list per row (values in `options.metric_keys` order) or an object
per row, which read back as they did. Read items through `list_run_items` (`golden calibrate`
does), which gives every item its metrics as a {name: value} dict whichever form they are in.
"""

from __future__ import annotations

import json
import sys
import zlib
from array import array
from collections.abc import Iterable, Mapping
from itertools import chain, repeat
from typing import Any

from builder.errors import InputError
from builder.store.db import Store
from builder.store.jsoncols import decode, from_json, to_json
from builder.store.timeutil import utcnow


_ITEM_FIELDS = ("question", "reference", "answer", "contexts", "retrieved_ids", "judge")
_JSON_FIELDS = frozenset(("contexts", "retrieved_ids", "judge"))


def save_run(
    store: Store, *, run_id: str, name: str | None, golden_path: str | None,
    run_path: str | None, judge_model: str | None, options: Mapping[str, Any],
    summary: Mapping[str, Any], items: Iterable[Mapping[str, Any]],
) -> None:
    """Write (or replace) one scored run and its items, all-or-nothing.

    Each item: query_id, question, reference, answer, contexts (list), retrieved_ids (list),
    metrics (dict), judge (dict or None).

    Speed: `golden score` saves by default, so this is on every run's clock (10,000 queries
    in a few hundredths of a second): one transaction; the items' metrics packed into one
    value on the run (`pack_item_metrics`) instead of a JSON text per row; the rows inserted
    by one statement from one JSON array (SQLite reads it in C: a third of the time of
    `executemany`, which binds row by row), naming only the columns some item fills. As in
    `documents.py`, a run with a NUL character in any text is bound row by row instead, since
    json_extract cuts a string at a NUL.
    """
    items = list(items)
    query_ids = [item["query_id"] for item in items]
    keys, packed = pack_item_metrics(query_ids, [item.get("metrics") or {} for item in items])
    names, columns = ["query_id"], [query_ids]
    for field in _ITEM_FIELDS:
        column = [item.get(field) for item in items]
        if column.count(None) < len(column):
            names.append(field)
            columns.append(list(map(_json, column)) if field in _JSON_FIELDS else column)
    rows = _ENCODE(list(zip(*columns)))

    with store.write():
        conn = store.conn
        conn.execute("DELETE FROM run_items WHERE run_id = ?", [run_id])
        conn.execute("DELETE FROM runs WHERE id = ?", [run_id])
        conn.execute(
            "INSERT INTO runs (id, name, golden_path, run_path, judge_model, options, summary,"
            " created_at, item_metrics) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, name, golden_path, run_path, judge_model,
             to_json({**options, "metric_keys": keys}),
             to_json(dict(summary)), utcnow(), packed))
        insert = f"INSERT INTO run_items (run_id, {', '.join(names)}) "
        if "\\u0000" in rows:  # json_extract would cut a string at its NUL: bind the values
            conn.executemany(insert + f"VALUES (?{', ?' * len(names)})",
                             zip(repeat(run_id), *columns))
        else:
            conn.execute(insert + "SELECT ?, " + ", ".join(
                f"json_extract(value, '$[{k}]')" for k in range(len(names))) +
                " FROM json_each(?)", [run_id, rows])


_ENCODE = json.JSONEncoder(ensure_ascii=False).encode  # what to_json writes, without its checks


def _json(value: Any) -> str | None:
    return None if value is None else _ENCODE(value)


def pack_item_metrics(query_ids: list[str], metrics: list[dict[str, Any]]
                      ) -> tuple[list[str], bytes]:
    """(keys, packed): every name the items' metrics use (first-seen order) and all the values
    as one zlib-compressed value: a JSON header line {"query_ids": [...], "keys": [...],
    "columns": [...]}, then the body. A column (one per key) whose values are all floats is
    "f8" in the header and its values are in the body as little-endian doubles, item by item
    (the first item's "f8" values, then the second's, ...); any other column (a missing value
    as null, ints, booleans, text) is its JSON list in the header. Doubles keep every float bit
    for bit, so what `unpack_item_metrics` gives back equals what was saved."""
    shapes = dict.fromkeys(map(tuple, metrics))
    keys = list(dict.fromkeys(chain.from_iterable(shapes)))
    if len(shapes) == 1:  # the usual case: every item has the same names in the same order
        rows: list[tuple] | map = map(dict.values, metrics)
    else:  # items of several shapes (judged and not, say)
        rows = [tuple(m.get(k) for k in keys) for m in metrics]
    flat = list(chain.from_iterable(rows))
    if set(map(type, flat)) <= {float}:  # the usual case: every value a float
        header: list[Any] = ["f8"] * len(keys)
    else:
        width = len(keys)
        columns = [flat[i::width] for i in range(width)]
        header = ["f8" if c and set(map(type, c)) == {float} else c for c in columns]
        flat = list(chain.from_iterable(zip(*(c for c, h in zip(columns, header) if h == "f8"))))
    floats = array("d", flat)
    if sys.byteorder != "little":
        floats.byteswap()
    head = _ENCODE({"query_ids": query_ids, "keys": keys, "columns": header})
    return keys, zlib.compress(head.encode() + b"\n" + floats.tobytes(), 1)


def unpack_item_metrics(packed: bytes | None) -> dict[str, dict[str, Any]] | None:
    """{query_id: {name: value}} from `pack_item_metrics` (missing values left out, names in
    the run's key order); None when there is nothing packed or it cannot be read (a damaged
    file must not stop the reader: those items then have no metrics, as a NULL cell)."""
    if not packed:
        return None
    try:
        head_text, _, body = zlib.decompress(packed).partition(b"\n")
        head = json.loads(head_text)
        query_ids, keys, header = head["query_ids"], head["keys"], head["columns"]
        floats = array("d", body)
    except (zlib.error, ValueError, TypeError, KeyError):
        return None
    if not all(isinstance(x, list) for x in (query_ids, keys, header)):
        return None
    n, width = len(query_ids), header.count("f8")
    if not (len(keys) == len(header) and len(floats) == n * width
            and all(c == "f8" or isinstance(c, list) and len(c) == n for c in header)):
        return None
    if sys.byteorder != "little":
        floats.byteswap()
    values = floats.tolist()
    at = iter(range(width))
    columns = [values[next(at)::width] if c == "f8" else c for c in header]
    rows = zip(*columns) if columns else [()] * n
    return {qid: {k: v for k, v in zip(keys, row) if v is not None}
            for qid, row in zip(query_ids, rows)}


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
    run = store.conn.execute("SELECT options, item_metrics FROM runs WHERE id = ?",
                             [run_id]).fetchone()
    keys = (from_json(run[0]) or {}).get("metric_keys") or [] if run else []
    packed = unpack_item_metrics(run[1]) if run else None
    out = []
    for row in store.query(sql, params):
        decode(row, ("contexts", "retrieved_ids", "metrics", "judge"))
        if isinstance(row["metrics"], list):  # the compact form: values in metric_keys order
            row["metrics"] = {k: v for k, v in zip(keys, row["metrics"]) if v is not None}
        elif row["metrics"] is None and packed is not None:
            row["metrics"] = packed.get(row["query_id"])
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
