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
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ValidationError

MODES = ("json_schema", "json_object", "text")

_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder(strict=False)  # strict=False: raw newlines inside strings are fine
# A model declining the task itself (not a RAG answer's "I don't know": that is
# prompts/refusal_phrases.md, every language). English only: golden's prompts are English.
# A refusal in another language costs one repair call before it fails as 'invalid'.
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


@dataclass
class Reading:
    """What one chat completion means for a structured call.

    `status` is final ("ok", "refusal", "empty", "truncated", "invalid") or names the next
    request the call needs: "longer" (the same request with twice the room) or "repair" (the
    conversation plus `content` and the repair prompt showing `error`).
    """

    status: str
    value: BaseModel | None = None
    parsed: dict[str, Any] | None = None
    error: str | None = None
    content: str | None = None


def read_reply(data: dict[str, Any], output: type[BaseModel], *, enlarged: bool, repaired: bool,
               max_tokens: int) -> Reading:
    """Read one decoded chat.completion body the way every structured call does, live or
    imported from a batch engine's results: a refusal (the `refusal` field, a content filter,
    or a reply with no JSON that opens like one) is final; a reply cut off at max_tokens is
    never parsed -- it asks for twice the room once, then is "truncated"; content that does not
    validate against `output` asks for one repair round, then is "invalid"."""
    choices = data.get("choices") or []
    if not choices:
        return Reading("empty", error="reply has no choices")
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message")
    message = message if isinstance(message, dict) else {}
    refusal = message.get("refusal")
    if refusal:
        return Reading("refusal", error=str(refusal)[:500])
    if choice.get("finish_reason") == "content_filter":
        return Reading("refusal", error="blocked by the endpoint's content filter")
    if choice.get("finish_reason") == "length":
        if not enlarged:
            return Reading("longer")
        return Reading("truncated", error=f"reply cut off at max_tokens={max_tokens}")
    content = text_of(message.get("content"))
    if not content.strip():
        return Reading("empty", error="empty reply")
    try:
        value = output.model_validate(extract_json(content))
    except NoJSON as exc:
        if looks_like_refusal(content):
            return Reading("refusal", error=content.strip()[:500])
        problem = str(exc)
    except ValidationError as exc:
        problem = summarize_validation_error(exc)
    else:
        return Reading("ok", value=value, parsed=value.model_dump(mode="json"))
    if repaired:
        return Reading("invalid", error=problem)
    return Reading("repair", error=problem, content=content)


def text_of(content: Any) -> str:
    """Message content as text (a string, or a list of content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""
