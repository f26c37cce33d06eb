"""Reading a small input file a user hands golden (human scores, a review log): the whole text,
and its JSONL lines parsed one by one, every failure an `InputError` naming the file and line.

Lines are split on "\\n" only (not `splitlines()`: U+2028 and other separators are data inside
a JSON string); blank lines are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from builder.errors import InputError


def read_input_text(path: str | Path, encoding: str = "utf-8") -> str:
    """The file's text; InputError when it is missing, unreadable or not in `encoding`."""
    p = Path(path)
    if not p.is_file():
        raise InputError("file not found", path=str(path))
    try:
        return p.read_text(encoding=encoding)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ({exc})", path=str(path)) from None


def jsonl_rows(text: str, path: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for each non-blank line of `text`."""
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON ({exc.msg})", path=path, line=n) from None
        except RecursionError:
            raise InputError("malformed JSON (nested too deeply)", path=path, line=n) from None
