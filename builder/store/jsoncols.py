"""JSON columns: the one way the store writes Python values into TEXT columns and reads them
back (lists and objects such as `chunk_ids`, `evidence`, `heading_path`, `metadata`, `info`,
run metrics, LLM messages).

Written with `ensure_ascii=False` (text stays readable in the file); `sort_keys=True` where a
stored value is compared with a new one (documents and chunks on re-ingest). Read back with
`decode`, which never raises: NULL, an empty string or text that is not JSON (a file edited by
hand, a newer golden's value) becomes the column's default, so one bad cell cannot stop a
review session or a run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any


def to_json(value: Any, *, sort_keys: bool = False) -> str | None:
    """`value` as JSON text; None stays NULL."""
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)


def from_json(text: str | None, default: Any = None) -> Any:
    """The value of one JSON cell, or `default` when it is NULL, empty or not JSON."""
    if not text:
        return default
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return default


def decode(row: dict, columns: Iterable[str] | Mapping[str, Any]) -> dict:
    """Decode `columns` of `row` in place (those it has) and return it. Given a mapping, its
    values are the defaults (copied per row, so a default list is never shared)."""
    defaults = columns if isinstance(columns, Mapping) else dict.fromkeys(columns)
    for col, default in defaults.items():
        if col in row:
            value = row[col]
            fallback = default.copy() if isinstance(default, (list, dict)) else default
            row[col] = from_json(value, fallback) if isinstance(value, str) or value is None \
                else value
    return row
