"""One production record: golden's own log line (JSON Schema `builder/schemas/log.schema.json`),
and what every other format is mapped onto before it is scrubbed and stored.

A line is one request of the RAG system:

    {"id": "req-81", "timestamp": "2025-03-02T10:15:00Z", "session_id": "s-9",
     "query": "Can I return a worn jacket?", "answer": "Yes, within 30 days...",
     "retrieved_ids": ["returns.md#a1", "outerwear.md#c3"], "contexts": ["...", "..."],
     "latency_ms": 840, "prompt_tokens": 1200, "completion_tokens": 90, "cost": 0.0021,
     "model": "gpt-4o-mini",
     "feedback": {"thumbs": "down", "reason": "wrong period", "reasked": true,
                  "handed_off": false},
     "metadata": {"channel": "web"}}

Only `query` and `timestamp` are required. `timestamp` is ISO 8601 (no zone = UTC) or a Unix
time in seconds (milliseconds when larger than 2e10). Without an `id` the record's id is a hash
of its time, session, question and answer. Unknown top-level fields are ignored; `metadata` is
kept (scrubbed). `retrieved_ids` are in rank order, in your retriever's id space (golden reads
the ingested chunk texts for them when `contexts` is absent).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from builder.errors import InputError
from builder.logs.scrub import Scrubber
from builder.score.inputs import Count, Measure


class Feedback(BaseModel):
    model_config = ConfigDict(extra="forbid")

    thumbs: Literal["up", "down"] | None = None
    reason: str | None = None
    reasked: bool = False        # the user asked (nearly) the same again
    handed_off: bool = False     # the conversation went to a human


def _text_id(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class LogRecord(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str | None = Field(None, min_length=1)
    timestamp: datetime
    query: str
    answer: str | None = None
    retrieved_ids: list[str] | None = None
    contexts: list[str] | None = None
    session_id: str | None = None
    # bounded as in a run file, so the trends' means and totals stay finite
    latency_ms: Measure | None = None
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
    cost: Measure | None = None
    model: str | None = None
    feedback: Feedback | None = None
    metadata: dict[str, Any] | None = None

    _ids = field_validator("id", "session_id", mode="before")(_text_id)

    @field_validator("retrieved_ids", mode="before")
    @classmethod
    def _id_list(cls, value: Any) -> Any:
        return [_text_id(v) for v in value] if isinstance(value, list) else value

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is empty")
        return value


_FIELDS = frozenset(LogRecord.model_fields) | frozenset(Feedback.model_fields)


def parse_record(data: Any, path: str, line: int) -> LogRecord:
    """Validate one golden log line; InputError naming the field, never echoing the value
    (it may hold personal data), nor a field name that is not one of the format's own (an
    e-mail address used as a key): the path stops before it."""
    try:
        return LogRecord.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        known: list[str] = []
        for part in err["loc"]:
            if not (isinstance(part, int) or part in _FIELDS):
                break
            known.append(str(part))
        else:
            where = ".".join(known) or "record"
            raise InputError(f"{where}: {err['msg']}", path=path, line=line) from None
        where = ".".join(known) or "record"
        reason = ("a field that is not part of the format (its name is not shown: it may hold "
                  "personal data)" if err["type"] == "extra_forbidden" else err["msg"])
        raise InputError(f"{where}: {reason}", path=path, line=line) from None


def utc_iso(moment: datetime) -> str:
    """ISO-8601 UTC text as golden stores times (a naive time is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def sample_key(record_id: str) -> float:
    """[0, 1) from a hash of the id: `sample_key < rate` is the same sample every time, and a
    higher rate keeps every record a lower one picked."""
    digest = hashlib.sha256(record_id.encode("utf-8")).digest()
    return (int.from_bytes(digest[:8], "big") >> 11) / float(1 << 53)


@lru_cache(maxsize=20_000)
def context_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def stored_row(record: LogRecord, scrubber: Scrubber, source: str
               ) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The `log_records` row of a record (every string scrubbed first) and its contexts as
    (hash, text) pairs. The id is pseudonymised when it held personal data; without one it is
    a hash of the scrubbed record."""
    scrub = scrubber.text
    feedback = record.feedback or Feedback()
    contexts = ([scrubber.repeated(c) for c in record.contexts]
                if record.contexts is not None else None)
    row: dict[str, Any] = {
        "at": utc_iso(record.timestamp),
        "session_id": scrubber.pseudonym(record.session_id) if record.session_id else None,
        "query": scrub(record.query),
        "answer": scrub(record.answer) if record.answer is not None else None,
        "retrieved_ids": ([scrub(i) for i in record.retrieved_ids]
                          if record.retrieved_ids is not None else None),
        "latency_ms": record.latency_ms, "prompt_tokens": record.prompt_tokens,
        "completion_tokens": record.completion_tokens, "cost": record.cost,
        "model": scrub(record.model) if record.model else None,
        "thumbs": feedback.thumbs,
        "feedback_reason": scrub(feedback.reason) if feedback.reason else None,
        "reasked": int(feedback.reasked), "handed_off": int(feedback.handed_off),
        "flagged": int(feedback.thumbs == "down" or feedback.reasked or feedback.handed_off),
        "metadata": scrubber.value(record.metadata) if record.metadata else None,
        "source": source,
    }
    pairs = [(context_hash(c), c) for c in contexts] if contexts is not None else []
    row["context_hashes"] = [h for h, _ in pairs] if contexts is not None else None
    if record.id is not None:
        row["id"] = scrubber.pseudonym(record.id)
    else:
        basis = json.dumps([row["at"], row["session_id"], row["query"], row["answer"]],
                           ensure_ascii=False)
        row["id"] = "h-" + hashlib.sha256(basis.encode("utf-8")).hexdigest()[:24]
    row["sample_key"] = sample_key(row["id"])
    row["content_hash"] = hashlib.sha256(json.dumps(
        row, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()[:32]
    return row, pairs
