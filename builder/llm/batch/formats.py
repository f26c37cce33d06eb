"""The files batch engines read and write: OpenAI Batch API input and output JSONL.

`vllm run-batch` and the Ray Data example (examples/ray_batch.py) read and write the same
shapes. Input, one request per line::

    {"custom_id": "<golden's cache key>", "method": "POST", "url": "/v1/chat/completions",
     "body": {...exactly what golden would POST to /chat/completions...}}

Output, one line per request, in any order (OpenAI does not promise one; vLLM keeps the
input's; errors may sit in a separate file)::

    {"id": "...", "custom_id": "...",
     "response": {"status_code": 200, "request_id": "...", "body": {chat.completion}},
     "error": null}

A request that did not run has `error` set -- a string (vLLM, for an exception) or an object
(OpenAI `{"code", "message"}`; vLLM's ErrorResponse `{"error": {...}}` or, in older
releases, the flat `{"object": "error", "message", "code"}`) -- and/or a response whose
`status_code` is not 200 with an error body. `read_results` turns each line into a
`ResultLine`; a line that is none of these is an input error naming the file and line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from builder.errors import InputError
from builder.text.input_files import input_lines
from builder.text.jsonl import parse_json

ENDPOINT = "/v1/chat/completions"
MAX_LINES = 50_000            # OpenAI Batch API: requests per input file
MAX_BYTES = 200_000_000       # and bytes per input file (200 MB)


def request_line(custom_id: str, body: dict[str, Any]) -> bytes:
    """One input line (UTF-8, newline-terminated)."""
    line = {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow")

    status_code: int = 200
    request_id: str | None = None
    body: dict[str, Any] | None = None


class _OutputLine(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    custom_id: str
    response: _Response | None = None
    error: str | dict[str, Any] | None = None


@dataclass
class ResultLine:
    """One output or error line, read: a completion, or why the request did not run."""

    reply_id: str                   # the line's "id", else the sha256 of the line
    custom_id: str
    completion: dict[str, Any] | None = None   # the chat.completion body (HTTP 200)
    raw: str | None = None                     # that body as JSON text, as logged
    error: str | None = None
    status_code: int | None = None
    code: str | None = None


def _error_fields(error: Any) -> tuple[str, str | None, int | None]:
    """(message, code, HTTP status) of an `error` value in any of the engines' shapes."""
    if isinstance(error, str):
        return error, None, None
    if isinstance(error, dict):
        inner = error.get("error") if isinstance(error.get("error"), dict) else error
        message = inner.get("message") or json.dumps(error, ensure_ascii=False)[:300]
        code = inner.get("code")
        status = code if isinstance(code, int) else None
        return str(message), (str(code) if code is not None else None), status
    return json.dumps(error, ensure_ascii=False)[:300], None, None


def parse_result(text: str, *, path: str, line_no: int) -> ResultLine:
    """Read one output/error line; InputError naming the file and line when it is not one."""
    data = parse_json(text, path, line_no, label="not JSON: not a batch output line")
    if isinstance(data, dict) and "body" in data and "method" in data and "response" not in data:
        raise InputError("this is a request line (method/url/body), not a result: import the "
                         "output file the batch engine wrote for it", path=path, line=line_no)
    try:
        line = _OutputLine.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "line"
        raise InputError(f"not a batch output line ({where}: {err['msg']})", path=path,
                         line=line_no) from None
    reply_id = line.id or hashlib.sha256(text.encode("utf-8")).hexdigest()
    out = ResultLine(reply_id=reply_id, custom_id=line.custom_id)
    response = line.response
    if response is not None:
        out.status_code = response.status_code
    if line.error is not None:
        out.error, out.code, status = _error_fields(line.error)
        out.status_code = out.status_code if out.status_code not in (None, 200) else status
        return out
    if response is None:
        raise InputError("a batch output line needs a response or an error", path=path,
                         line=line_no)
    if response.status_code != 200:
        body = response.body or {}
        out.error, out.code, _ = _error_fields(body.get("error", body) or f"HTTP {response.status_code}")
        return out
    if response.body is None:
        raise InputError("response.body is missing", path=path, line=line_no)
    out.completion = response.body
    out.raw = json.dumps(response.body, ensure_ascii=False)
    return out


def read_results(path: str | Path) -> Iterator[tuple[int, ResultLine]]:
    """(line number, ResultLine) for every non-blank line of an output or error file,
    streamed. Raises InputError for an unreadable file (a FIFO included: `open_input`), a
    line that is not UTF-8 or a malformed line, naming the file and line."""
    name = str(path)
    for line_no, text in input_lines(path):
        yield line_no, parse_result(text, path=name, line_no=line_no)
