"""Export record models, one per output format, and the functions that build them.

Every format is derived from the native record, so all formats agree on what an item says.
Each model has a JSON Schema in `builder/schemas/<format>.schema.json` (checked by the tests);
the models are the boundary, the schemas the published contract.

Field names of the external formats follow the libraries that read them:
- ragas: `SingleTurnSample` (user_input, reference, reference_contexts, reference_context_ids).
- deepeval: `deepeval.dataset.Golden` (input, expected_output, context, source_file, plus
  additional_metadata carrying the golden id, chunk ids, type and difficulty so a run can be
  traced back to the item).
- seed: `{"query", "expectedAnswer", "relevantChunkIds", "intent"}` with intent = type.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from builder.vocabulary import Difficulty


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EvidenceSpan(_Record):
    """A verbatim quote of a chunk that supports the answer, with offsets into the chunk text."""

    chunk_id: str
    quote: str
    start: int | None = None
    end: int | None = None


class SourceDocument(_Record):
    id: str
    title: str | None = None
    path: str | None = None


class LinkedRecord(_Record):
    """A production log record linked to this item (it asked the same question)."""

    record_id: str
    at: str | None
    signals: list[str]
    cause: str | None
    similarity: float


class Provenance(_Record):
    """Where a `production` item came from: the log record that was promoted, and the other
    records found to ask the same question."""

    source: str                             # production_log
    record_id: str
    at: str | None                          # when the user asked (ISO-8601 UTC)
    session_id: str | None
    picked_as: str                          # bad case | thumbs up | selected
    signals: list[str]                      # what picked it: unfaithful, thumbs_down, ...
    cause: str | None                       # generation | retrieval | knowledge base | unknown
    evidence: list[str]
    linked_records: list[LinkedRecord]


class NativeRecord(_Record):
    """golden's own format: everything known about a reviewed item."""

    id: str
    query: str
    expected_answer: str
    relevant_chunk_ids: list[str]          # hop order
    relevant_contexts: list[str]           # texts of relevant_chunk_ids, same order
    type: str
    difficulty: Difficulty | None
    language: str | None
    evidence: list[EvidenceSpan]
    source_documents: list[SourceDocument]  # documents of the chunks, first-seen order
    tags: list[str]
    seed_fact_id: str | None                # leakage group: variants of one fact share it
    status: str
    edited: list[str]                       # fields the reviewer's edit replaced (chunks: marked)
    generator_model: str | None
    reviewer: str | None
    reviewed_at: str | None
    reject_reason: str | None = None        # why a rejected item was rejected (else null)
    reject_note: str | None = None
    dataset_version: str
    split: str | None
    provenance: Provenance | None = None    # production items only


class SeedRecord(_Record):
    query: str
    expectedAnswer: str
    relevantChunkIds: list[str]
    intent: str


class RagasRecord(_Record):
    user_input: str
    reference: str
    reference_contexts: list[str]
    reference_context_ids: list[str]


class DeepEvalMetadata(_Record):
    id: str
    chunk_ids: list[str]
    type: str
    difficulty: Difficulty | None
    split: str | None
    provenance: Provenance | None = None


class DeepEvalRecord(_Record):
    input: str
    expected_output: str
    context: list[str]
    source_file: str | None
    additional_metadata: DeepEvalMetadata


# The converters below copy fields of a validated NativeRecord, so they build their models
# with `model_construct` (no second validation of the same values: a third of the export time).

def to_seed(rec: NativeRecord) -> SeedRecord:
    return SeedRecord.model_construct(query=rec.query, expectedAnswer=rec.expected_answer,
                                      relevantChunkIds=rec.relevant_chunk_ids, intent=rec.type)


def to_ragas(rec: NativeRecord) -> RagasRecord:
    return RagasRecord.model_construct(user_input=rec.query, reference=rec.expected_answer,
                                       reference_contexts=rec.relevant_contexts,
                                       reference_context_ids=rec.relevant_chunk_ids)


def to_deepeval(rec: NativeRecord) -> DeepEvalRecord:
    source = rec.source_documents[0] if rec.source_documents else None
    return DeepEvalRecord.model_construct(
        input=rec.query, expected_output=rec.expected_answer, context=rec.relevant_contexts,
        source_file=(source.path or source.id) if source else None,
        additional_metadata=DeepEvalMetadata.model_construct(
            id=rec.id, chunk_ids=rec.relevant_chunk_ids, type=rec.type,
            difficulty=rec.difficulty, split=rec.split, provenance=rec.provenance,
        ),
    )


FORMATS: dict[str, Callable[[NativeRecord], BaseModel]] = {
    "native": lambda rec: rec,
    "seed": to_seed,
    "ragas": to_ragas,
    "deepeval": to_deepeval,
}


def encode_line(record: BaseModel) -> bytes:
    """One JSONL line: compact, UTF-8, fields in model order (so bytes are reproducible).

    Control characters are escaped by JSON itself; U+2028/U+2029 are escaped too, because
    `str.splitlines()` and JavaScript treat them as line ends (they can only occur inside JSON
    strings, where the escape means the same character).
    """
    data = record.model_dump_json().encode("utf-8")
    if b"\xe2\x80" in data:
        data = data.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")
    return data + b"\n"


def parse_json_list(text: str | None) -> list:
    """A JSON list column, or [] when NULL or not a list (stored text is untrusted)."""
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def parse_evidence(text: str | None) -> list[dict]:
    """Evidence spans (as dicts for `EvidenceSpan`) from the candidates.evidence column;
    malformed entries are dropped, out-of-type offsets become null."""
    spans = []
    for item in parse_json_list(text):
        if not isinstance(item, dict):
            continue
        chunk_id, quote = item.get("chunk_id"), item.get("quote")
        if not isinstance(chunk_id, str) or not isinstance(quote, str):
            continue
        start, end = item.get("start"), item.get("end")
        spans.append({
            "chunk_id": chunk_id, "quote": quote,
            "start": start if isinstance(start, int) and not isinstance(start, bool) else None,
            "end": end if isinstance(end, int) and not isinstance(end, bool) else None,
        })
    return spans
