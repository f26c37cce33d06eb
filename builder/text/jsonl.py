"""Reading a small input file a user hands golden (human scores, a review log): the whole text
(`read_input_text`, from `input_files`: FIFOs refused, a bad byte named by its line), and its
JSONL lines parsed one by one, every failure an `InputError` naming the file and line.

Lines are split on "\\n" only (not `splitlines()`: U+2028 and other separators are data inside
a JSON string); blank lines are skipped.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from builder.errors import InputError
from builder.text.input_files import read_input_text  # noqa: F401  (re-exported)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def parse_json(text: str, path: str, line: int, *, label: str = "malformed JSON") -> Any:
    """One JSON value parsed from a line of a user's file; every way it can fail is an
    InputError naming the file and line, `label` first ("malformed JSON (...)"): bad syntax
    (with the column), nesting too deep for the parser, and an integer longer than Python
    converts (`sys.get_int_max_str_digits()`, 4300 digits: a ValueError that is not a
    JSONDecodeError, and so escaped the readers that caught only that).

    A string or key holding a lone surrogate (a `\\ud800` escape without its pair) is refused
    too, naming the field: it is valid JSON but not Unicode text, so it could be neither
    stored (SQLite) nor printed, and replacing it would silently change the user's text."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{label} ({exc.msg} at column {exc.colno})", path=path,
                         line=line) from None
    except RecursionError:
        raise InputError(f"{label} (nested too deeply)", path=path, line=line) from None
    except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion"
        raise InputError(f"{label} (a number with more than {sys.get_int_max_str_digits()} "
                         "digits)", path=path, line=line) from None
    if _SURROGATE_ESCAPE.search(text):
        where = lone_surrogate(value)
        if where is not None:
            raise InputError(f"field \"{where}\": lone surrogate (a \\ud800-\\udfff escape "
                             "without its pair is not Unicode text)", path=path, line=line)
    return value


def lone_surrogate(value: Any, where: str = "") -> str | None:
    """Dotted path of the first key or string in `value` holding a lone surrogate, or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where or "record"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = lone_surrogate(key, where or "record") or lone_surrogate(
                item, f"{where}.{key}" if where else str(key))
            if found:
                return found
    elif isinstance(value, list):
        for k, item in enumerate(value):
            found = lone_surrogate(item, f"{where}.{k}" if where else str(k))
            if found:
                return found
    return None


def jsonl_rows(text: str, path: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for each non-blank line of `text`."""
    for n, line in enumerate(text.split("\n"), 1):
        if line.strip():
            yield n, parse_json(line, path, n)
