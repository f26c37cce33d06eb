"""Structured output: request shapes per response-format mode, and reading JSON out of replies.

The ladder, most to least constrained: `json_schema` (strict when the schema allows it) ->
`json_object` -> `text`. Whatever the mode, a reply is parsed with `extract_json`, which
tolerates ```json fences, prose around the object and raw newlines inside strings, and is then
validated with the stage's pydantic model -- an endpoint that silently ignores
`response_format` still works. A reply that was cut off is never parsed (the client checks
finish_reason first).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ValidationError

MODES = ("json_schema", "json_object", "text")

_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder(strict=False)  # strict=False: raw newlines inside strings are fine
_REFUSAL = re.compile(
    r"^\W*(i'?m sorry|i am sorry|sorry, (but )?i|i can(no|')t|i cannot|i won'?t|i am unable|"
    r"i'?m unable|i'?m not able|as an ai)\b", re.IGNORECASE)


class NoJSON(ValueError):
    """The reply holds no JSON object."""


def extract_json(text: str) -> dict[str, Any]:
    """The first JSON object in `text`: whole text, then fenced blocks, then any `{...}` span.

    Raises NoJSON when there is none. Never evaluates anything: json decoding only.
    """
    stripped = text.strip().lstrip("\ufeff")
    candidates = [stripped] + [m.group(1).strip() for m in _FENCE.finditer(stripped)]
    for candidate in candidates:
        try:
            value = _DECODER.decode(candidate)
        except (ValueError, RecursionError):  # RecursionError: hostile nesting depth
            continue
        if isinstance(value, dict):
            return value
    for source in candidates:
        pos = source.find("{")
        while pos != -1:
            try:
                value, _ = _DECODER.raw_decode(source, pos)
            except (ValueError, RecursionError):
                pos = source.find("{", pos + 1)
                continue
            if isinstance(value, dict):
                return value
            pos = source.find("{", pos + 1)
    raise NoJSON("reply contains no JSON object")


def looks_like_refusal(text: str) -> bool:
    """A reply with no JSON that opens like a refusal ("I'm sorry, I can't ...")."""
    return bool(_REFUSAL.match(text.strip()))


def summarize_validation_error(exc: ValidationError, limit: int = 5) -> str:
    """Short, model-readable list of what was wrong (field path and message, no input values)."""
    parts = []
    for err in exc.errors()[:limit]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{loc}: {err['msg']}")
    more = len(exc.errors()) - limit
    if more > 0:
        parts.append(f"... and {more} more")
    return "; ".join(parts)


@lru_cache(maxsize=256)
def schema_for(output: type[BaseModel]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(plain JSON schema, strict schema or None if the model cannot be strict).

    Strict mode (OpenAI) needs every property required and no additional properties; models
    with optional/defaulted fields are sent non-strict rather than rewritten.
    """
    plain = output.model_json_schema()
    try:
        from openai.lib._pydantic import to_strict_json_schema

        strict = to_strict_json_schema(output)
    except Exception:  # pragma: no cover - schema features the converter does not handle
        return plain, None
    return plain, (strict if _all_required(plain) else None)


def _all_required(node: Any) -> bool:
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            if set(node.get("required", [])) != set(node["properties"]):
                return False
        return all(_all_required(v) for v in node.values())
    if isinstance(node, list):
        return all(_all_required(v) for v in node)
    return True


def response_format(mode: str, output: type[BaseModel]) -> dict[str, Any] | None:
    """The `response_format` request field for a mode (None for plain text)."""
    if mode == "json_schema":
        plain, strict = schema_for(output)
        spec: dict[str, Any] = {"name": _schema_name(output), "schema": strict or plain}
        if strict is not None:
            spec["strict"] = True
        return {"type": "json_schema", "json_schema": spec}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def _schema_name(output: type[BaseModel]) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", output.__name__)[:64] or "output"


def schema_text(output: type[BaseModel]) -> str:
    """The schema as compact JSON, for the format instructions in json_object/text modes."""
    return json.dumps(schema_for(output)[0], ensure_ascii=False, separators=(",", ":"))


def cache_schema(output: type[BaseModel]) -> dict[str, Any]:
    """What goes into the cache key for the output model."""
    return {"name": output.__name__, "schema": schema_for(output)[0]}
