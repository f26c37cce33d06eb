"""Traces as production records: OpenTelemetry spans exported as JSON lines, read with the
OpenTelemetry GenAI and the OpenInference semantic conventions, one record per trace.

Two line shapes (both may be mixed with golden's own lines in one file):

- **OTLP/JSON**, as the OpenTelemetry Collector's file exporter writes it: each line a
  `{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}` with typed attribute lists
  (`{"key": "input.value", "value": {"stringValue": "..."}}`), hex ids and Unix-nanosecond
  times as strings.
- **One span per line**, as Phoenix exports spans and the OpenTelemetry SDK's console exporter
  prints them: `{"name", "context": {"trace_id", "span_id"}, "parent_id", "start_time",
  "end_time", "span_kind"?, "attributes": {...}}` with ISO times; attributes dotted
  (`"retrieval.documents.0.document.id"`) or nested (`{"retrieval": {"documents": [...]}}`).

From each span only what a record needs is kept (`SpanFacts`), scrubbed before it is staged:

- query: the root span's `input.value` (of a JSON input, its `query`/`question`/`input`
  field), else the retriever's query (`input.value`, GenAI `gen_ai.retrieval.query.text`),
  else the LLM's last user message (`llm.input_messages.N.message.*`, GenAI
  `gen_ai.input.messages`);
- answer: the root's `output.value`, else the LLM's output (`llm.output_messages.0.message.
  content`, GenAI `gen_ai.output.messages` text parts);
- retrieved_ids and contexts: `retrieval.documents.N.document.id` / `.content` of RETRIEVER
  spans (GenAI: `gen_ai.retrieval.documents` items' `id` / `content` of `retrieval`
  operations), in start order;
- session_id: `session.id` (GenAI `gen_ai.conversation.id`);
- tokens and model: `llm.token_count.prompt` / `.completion` (GenAI `gen_ai.usage.input_tokens`
  / `output_tokens`) summed over LLM spans; `llm.model_name` (GenAI `gen_ai.response.model`,
  `gen_ai.request.model`) of the last one;
- timestamp and latency_ms: the root span's start, and its end minus start;
- feedback: `feedback.thumbs` (up/down), `feedback.reason`, `feedback.reasked`,
  `feedback.handed_off` on any span (golden's own names: neither convention has any).

The trace id is the record id. A trace whose spans carry no question (a health check, an
embedding job) is not a RAG request: it is skipped and counted.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from builder.errors import InputError
from builder.logs.scrub import Scrubber

_ANSWER_KEYS = ("answer", "output", "response", "result", "text", "content")
_QUERY_KEYS = ("query", "question", "input", "user_input", "prompt")
_LLM_OPERATIONS = {"chat", "text_completion", "generate_content", "completion"}


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    start_ns: int | None
    end_ns: int | None
    kind: str | None          # OpenInference span kind, upper case, when known
    attributes: dict[str, Any]


@dataclass
class SpanFacts:
    """What one span contributes to its trace's record (stored as JSON in staging)."""

    span_id: str
    parent_id: str | None
    start_ns: int | None
    end_ns: int | None
    kind: str | None
    input: str | None = None
    output: str | None = None
    retrieval_query: str | None = None
    documents: list[list[str | None]] = field(default_factory=list)  # [id, content]
    user_message: str | None = None
    session_id: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    model: str | None = None
    thumbs: str | None = None
    reason: str | None = None
    reasked: bool = False
    handed_off: bool = False

    def scrubbed_json(self, scrubber: Scrubber) -> str:
        """These facts as JSON with every string scrubbed (the session id pseudonymised), as
        they are staged: the raw text of a span is never written anywhere."""
        data = asdict(self)
        before = scrubber.total
        for name in ("input", "output", "retrieval_query", "user_message", "model", "reason"):
            if data[name] is not None:
                data[name] = scrubber.text(data[name])
        if data["session_id"] is not None:
            data["session_id"] = scrubber.pseudonym(data["session_id"])
        data["documents"] = [[scrubber.text(d) if d is not None else None for d in doc]
                             for doc in data["documents"]]
        data["scrubbed"] = scrubber.total - before
        return json.dumps(data, ensure_ascii=False)


def is_otlp(obj: dict) -> bool:
    return "resourceSpans" in obj


def is_span(obj: dict) -> bool:
    context = obj.get("context")
    return isinstance(context, dict) and ("trace_id" in context or "span_id" in context)


# ---------------------------------------------------------------- parsing lines

def spans_of_line(obj: dict, path: str, line: int) -> list[Span]:
    """The spans of one OTLP or span line; InputError naming the line when malformed."""
    try:
        if is_otlp(obj):
            return list(_otlp_spans(obj))
        return [_flat_span(obj)]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"not a valid span ({_reason(exc)})", path=path, line=line) from None


class _SpanError(ValueError):
    """A malformed span, in words that hold no value of the line (safe to print)."""


def _reason(exc: Exception) -> str:
    """Why a span was refused, never echoing a value of the line: KeyErrors name keys golden
    looked up (its own names), _SpanErrors are golden's words; anything else (Python's own
    messages quote the value: "invalid literal for int() with base 10: '...'") is described by
    its type only."""
    if isinstance(exc, KeyError):
        return f"missing {exc.args[0]!r}"
    if isinstance(exc, _SpanError):
        return str(exc)
    return f"a value of the wrong type or form ({type(exc).__name__})"


def _otlp_spans(obj: dict):
    for resource in obj["resourceSpans"] or []:
        for scope in resource.get("scopeSpans") or resource.get("instrumentationLibrarySpans") or []:
            for s in scope.get("spans") or []:
                attrs = {kv["key"]: _any_value(kv.get("value") or {})
                         for kv in s.get("attributes") or []}
                trace_id = _hex_id(s["traceId"], "traceId")
                yield Span(trace_id=trace_id, span_id=_hex_id(s["spanId"], "spanId"),
                           parent_id=_hex_id(s.get("parentSpanId"), "parentSpanId") or None,
                           start_ns=_nanos(s.get("startTimeUnixNano")),
                           end_ns=_nanos(s.get("endTimeUnixNano")),
                           kind=_kind(attrs, None), attributes=attrs)


def _any_value(v: dict) -> Any:
    """An OTLP AnyValue as a plain value."""
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            raise _SpanError("an intValue that is not an integer") from None
    if "doubleValue" in v:
        try:
            return float(v["doubleValue"])
        except (TypeError, ValueError):
            raise _SpanError("a doubleValue that is not a number") from None
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return [_any_value(x) for x in (v["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in v:
        return {kv["key"]: _any_value(kv.get("value") or {})
                for kv in (v["kvlistValue"] or {}).get("values") or []}
    return None


def _flat_span(obj: dict) -> Span:
    context = obj["context"]
    attrs = flatten(obj.get("attributes") or {})
    parent = obj.get("parent_id")
    return Span(trace_id=_hex_id(context["trace_id"], "context.trace_id"),
                span_id=_hex_id(context["span_id"], "context.span_id"),
                parent_id=_hex_id(parent, "parent_id") or None,
                start_ns=_nanos(obj.get("start_time")), end_ns=_nanos(obj.get("end_time")),
                kind=_kind(attrs, obj.get("span_kind")), attributes=attrs)


def flatten(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nested attributes as dotted keys ({"a": {"b": [{"c": 1}]}} -> {"a.b.0.c": 1}); lists
    of plain values stay lists."""
    out = {} if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        for i, v in enumerate(value):
            flatten(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = value
    return out


def _hex_id(value: Any, name: str) -> str:
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise _SpanError(f"{name} is not a string")
    text = value.strip().lower()
    return text[2:] if text.startswith("0x") else text


def _nanos(value: Any) -> int | None:
    """Unix nanoseconds from an OTLP number (or numeric string) or an ISO-8601 time."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        if value.strip().isdigit():
            return int(value)
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise _SpanError("a time that is neither Unix nanoseconds nor ISO 8601") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000
    raise _SpanError(f"not a time: {type(value).__name__}")


def _kind(attrs: dict[str, Any], span_kind: Any) -> str | None:
    kind = attrs.get("openinference.span.kind") or span_kind
    if isinstance(kind, str) and kind.strip():
        return kind.strip().upper()
    operation = attrs.get("gen_ai.operation.name")
    if operation == "retrieval":
        return "RETRIEVER"
    if operation in _LLM_OPERATIONS:
        return "LLM"
    if isinstance(operation, str) and operation:
        return operation.upper()
    return None


# ---------------------------------------------------------------- what a span says

def facts_of(span: Span) -> SpanFacts:
    a = span.attributes
    facts = SpanFacts(span_id=span.span_id, parent_id=span.parent_id, start_ns=span.start_ns,
                      end_ns=span.end_ns, kind=span.kind)
    facts.input = _io_text(a.get("input.value"), a.get("input.mime_type"), _QUERY_KEYS)
    facts.output = _io_text(a.get("output.value"), a.get("output.mime_type"), _ANSWER_KEYS)
    facts.retrieval_query = _str(a.get("gen_ai.retrieval.query.text"))
    facts.documents = _documents(a)
    facts.user_message = _last_user_message(a)
    if facts.output is None:
        facts.output = _llm_output(a)
    facts.session_id = _str(a.get("session.id") or a.get("gen_ai.conversation.id"))
    facts.prompt_tokens = _int(a.get("llm.token_count.prompt", a.get(
        "gen_ai.usage.input_tokens", a.get("gen_ai.usage.prompt_tokens"))))
    facts.completion_tokens = _int(a.get("llm.token_count.completion", a.get(
        "gen_ai.usage.output_tokens", a.get("gen_ai.usage.completion_tokens"))))
    facts.model = _str(a.get("llm.model_name") or a.get("gen_ai.response.model")
                       or a.get("gen_ai.request.model"))
    thumbs = _str(a.get("feedback.thumbs"))
    facts.thumbs = thumbs.lower() if thumbs and thumbs.lower() in ("up", "down") else None
    facts.reason = _str(a.get("feedback.reason"))
    facts.reasked = a.get("feedback.reasked") is True
    facts.handed_off = a.get("feedback.handed_off") is True
    return facts


def _str(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value
    return None


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


def _io_text(value: Any, mime: Any, keys: tuple[str, ...]) -> str | None:
    """An input/output value as text: a JSON object's first text field among `keys` (or its
    last user message), a JSON string as the string, plain text as itself."""
    text = _str(value)
    if text is None:
        return None
    looks_json = mime == "application/json" or text.lstrip().startswith(("{", "[", '"'))
    if not looks_json:
        return text
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return _text_in(parsed, keys) or (None if mime == "application/json" else text)


def _text_in(value: Any, keys: tuple[str, ...]) -> str | None:
    if isinstance(value, str):
        return _str(value)
    if isinstance(value, dict):
        for key in keys:
            found = _text_in(value.get(key), keys) if key in value else None
            if found:
                return found
        messages = value.get("messages")
        if isinstance(messages, list):
            return _last_user(messages)
    if isinstance(value, list):
        return _last_user(value)
    return None


def _last_user(messages: list) -> str | None:
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") in ("user", "human"):
            return _message_text(m)
    return None


def _message_text(message: dict) -> str | None:
    """The text of a chat message: `content` (a string or parts), or GenAI `parts`."""
    content = message.get("content")
    if isinstance(content, str):
        return _str(content)
    parts = message.get("parts") if content is None else content
    if isinstance(parts, list):
        texts = [p.get("content") or p.get("text") for p in parts
                 if isinstance(p, dict) and p.get("type", "text") == "text"]
        joined = "\n".join(t for t in texts if isinstance(t, str))
        return _str(joined)
    return None


def _indexed(a: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Items of a flattened list `prefix.N.rest` as dicts of rest -> value, in N order."""
    items: dict[int, dict[str, Any]] = {}
    for key, value in a.items():
        if not key.startswith(prefix):
            continue
        head, _, rest = key[len(prefix):].partition(".")
        if head.isdigit():
            items.setdefault(int(head), {})[rest] = value
    return [items[i] for i in sorted(items)]


def _documents(a: dict[str, Any]) -> list[list[str | None]]:
    docs = []
    for item in _indexed(a, "retrieval.documents."):
        doc_id = item.get("document.id")
        docs.append([str(doc_id) if doc_id is not None else None,
                     _str(item.get("document.content"))])
    raw = a.get("gen_ai.retrieval.documents")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raw = None
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict):
                doc_id = item.get("id")
                docs.append([str(doc_id) if doc_id is not None else None,
                             _str(item.get("content"))])
    return docs


def _json_list(value: Any) -> list | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, list) else None


def _last_user_message(a: dict[str, Any]) -> str | None:
    messages = [{"role": m.get("message.role"), "content": m.get("message.content")}
                for m in _indexed(a, "llm.input_messages.")]
    found = _last_user(messages)
    if found:
        return found
    found = _last_user(_json_list(a.get("gen_ai.input.messages")) or [])
    if found:
        return found
    legacy = [{"role": m.get("role"), "content": m.get("content")}
              for m in _indexed(a, "gen_ai.prompt.")]
    return _last_user(legacy)


def _llm_output(a: dict[str, Any]) -> str | None:
    for m in _indexed(a, "llm.output_messages."):
        text = _str(m.get("message.content"))
        if text:
            return text
    for m in _json_list(a.get("gen_ai.output.messages")) or []:
        if isinstance(m, dict):
            text = _message_text(m)
            if text:
                return text
    for m in _indexed(a, "gen_ai.completion."):
        text = _str(m.get("content"))
        if text:
            return text
    return None


# ---------------------------------------------------------------- a trace as one record

def trace_record(trace_id: str, spans: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The record of one trace (a dict for `LogRecord`), from its spans' facts in start order;
    None when no span carries a question."""
    ids = {s["span_id"] for s in spans}
    roots = [s for s in spans if not s["parent_id"] or s["parent_id"] not in ids] or spans
    root = roots[0]
    retrievers = [s for s in spans if s["kind"] == "RETRIEVER" or s["documents"]]
    llms = [s for s in spans if s["kind"] == "LLM"]
    query = (root["input"] if root["kind"] not in ("LLM", "RETRIEVER") else None) \
        or next((s["input"] for s in spans if s["kind"] in ("CHAIN", "AGENT") and s["input"]),
                None) \
        or next((s["retrieval_query"] or s["input"] for s in retrievers
                 if s["retrieval_query"] or s["input"]), None) \
        or next((s["user_message"] for s in llms if s["user_message"]), None) \
        or root["input"]
    if not query:
        return None
    answer = (root["output"] if root["kind"] not in ("RETRIEVER",) else None) \
        or next((s["output"] for s in reversed(llms) if s["output"]), None)
    documents = [d for s in retrievers for d in s["documents"]]
    record: dict[str, Any] = {"id": trace_id, "query": query, "answer": answer}
    start = root["start_ns"] if root["start_ns"] is not None else min(
        (s["start_ns"] for s in spans if s["start_ns"] is not None), default=None)
    if start is None:
        raise ValueError("no span of the trace has a start time")
    record["timestamp"] = datetime.fromtimestamp(start / 1e9, tz=timezone.utc)
    if root["end_ns"] is not None and root["start_ns"] is not None:
        record["latency_ms"] = max(0, root["end_ns"] - root["start_ns"]) / 1e6
    if documents and all(d[0] for d in documents):
        record["retrieved_ids"] = list(dict.fromkeys(d[0] for d in documents))
    if documents and all(d[1] for d in documents):
        if "retrieved_ids" in record:  # the text of each id, first occurrence
            text_of: dict[str, str] = {}
            for doc_id, text in documents:
                text_of.setdefault(doc_id, text)
            record["contexts"] = [text_of[i] for i in record["retrieved_ids"]]
        else:
            record["contexts"] = [d[1] for d in documents]
    record["session_id"] = next((s["session_id"] for s in spans if s["session_id"]), None)
    prompt = [s["prompt_tokens"] for s in llms if s["prompt_tokens"] is not None]
    completion = [s["completion_tokens"] for s in llms if s["completion_tokens"] is not None]
    record["prompt_tokens"] = sum(prompt) if prompt else None
    record["completion_tokens"] = sum(completion) if completion else None
    record["model"] = next((s["model"] for s in reversed(llms) if s["model"]), None)
    thumbs = next((s["thumbs"] for s in spans if s["thumbs"]), None)
    reason = next((s["reason"] for s in spans if s["reason"]), None)
    reasked = any(s["reasked"] for s in spans)
    handed_off = any(s["handed_off"] for s in spans)
    if thumbs or reason or reasked or handed_off:
        record["feedback"] = {"thumbs": thumbs, "reason": reason, "reasked": reasked,
                              "handed_off": handed_off}
    return record
