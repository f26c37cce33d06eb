"""Reading what `golden score` is given: golden JSONL and run JSONL (TREC qrels and runs are
read by `trec`, re-exported here).

Every reader validates each line with a pydantic model and raises `InputError` naming the
file and line for anything malformed: bad JSON, a missing field, duplicate queries, a docno
twice in one ranking (trec_eval refuses these too; `dedupe=True` keeps the first, best-ranked
occurrence instead), an empty file, relevance that is not an integer. Messages name a query by
its text, not by an internal id.

A run line whose query is not in the golden file is skipped and reported to the caller
(`UnknownQuery`), as trec_eval ignores run queries without judgments: a run over a whole
question set can then be scored against one split.

Golden files come in two formats, told apart per line:
- native (golden's export): `id`, `query`, `expected_answer`, `relevant_chunk_ids`, `type`,
  `difficulty`, optional `relevance` ({chunk id: grade}) for graded judgments; other fields
  are kept but unused.
- seed: `query`, `expectedAnswer`, `relevantChunkIds`, `intent` and no id. Such items get
  the id `q-<first 12 hex of sha1(query)>` and a run names them by `query` text instead.

Run JSONL rankings are the `retrieved_ids` list order; `scores`, when given, are kept for the
report but never re-sort the list. TREC runs are read as {docno: score} per query and ranked
by `retrieval` as trec_eval does (score descending, then docno descending; rank column
ignored).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator,
)

from builder.errors import InputError
from builder.score.trec import MAX_GRADE, read_qrels, read_trec_run  # noqa: F401  (re-exported)
from builder.text.input_files import input_lines
from builder.text.jsonl import parse_json

UNANSWERABLE = "unanswerable"


Grade = Annotated[int, Field(ge=-MAX_GRADE, le=MAX_GRADE)]


class NativeGoldenRecord(BaseModel):
    """One line of golden's own export (see builder/schemas/native.schema.json)."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1)
    query: str = Field(min_length=1)
    expected_answer: str = ""
    relevant_chunk_ids: list[str] = Field(default_factory=list)
    type: str = "unknown"
    difficulty: str | None = None
    relevance: dict[str, Grade] | None = None


class SeedGoldenRecord(BaseModel):
    """One line of the seed format: no id, matched to the run by query text."""

    model_config = ConfigDict(extra="allow")

    query: str = Field(min_length=1)
    expectedAnswer: str = ""
    relevantChunkIds: list[str] = Field(default_factory=list)
    intent: str | None = None


# The largest latency (ms), cost or token count a run line may hold: 1e12 ms is 31 years, and
# a sum of a billion such values is still a finite float. `Infinity` (Python's json reads it)
# or 1e308 would turn the report's means and totals into inf or NaN, which JSON cannot hold:
# such a run is refused while it is read, before anything is saved.
MAX_MEASURE = 1e12


def within(low: float, high: float) -> AfterValidator:
    """A pydantic check that a number lies in [low, high]: NaN and infinities are refused
    too, with one message a user can act on."""

    def check(value: float) -> float:
        if not low <= value <= high:  # False for NaN
            raise ValueError(f"must be a number from {low:g} to {high:g}")
        return value

    return AfterValidator(check)


Measure = Annotated[float, within(0, MAX_MEASURE)]
Count = Annotated[int, within(0, MAX_MEASURE)]


class RunRecord(BaseModel):
    """One line of a run file (builder/schemas/run.schema.json)."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    query_id: str | None = None
    query: str | None = None
    retrieved_ids: list[str]
    scores: list[float] | None = None
    contexts: list[str] | None = None
    answer: str | None = None
    latency_ms: Measure | None = None
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
    cost: Measure | None = None

    @field_validator("retrieved_ids")
    @classmethod
    def _ids_are_strings(cls, ids: list[str]) -> list[str]:
        if any(not isinstance(i, str) or not i for i in ids):
            raise ValueError("retrieved_ids must be non-empty strings")
        return ids


@dataclass
class GoldenItem:
    """A golden question as the scorer sees it, whatever its file format."""

    id: str
    query: str
    reference: str
    relevance: dict[str, int]         # chunk id -> grade (1 when the file has plain ids)
    type: str
    difficulty: str
    line: int
    seed: bool = False

    @property
    def answerable(self) -> bool:
        """Unanswerable items (type unanswerable or no relevant ids) skip retrieval metrics."""
        return self.type != UNANSWERABLE and any(g > 0 for g in self.relevance.values())


@dataclass
class GoldenSet:
    path: str
    items: dict[str, GoldenItem]                      # by id, file order
    by_query: dict[str, str] = field(default_factory=dict)  # normalised query text -> id

    def judgments(self) -> dict[str, dict[str, int]]:
        """The qrels of the answerable items (what retrieval metrics are computed against)."""
        return {i.id: i.relevance for i in self.items.values() if i.answerable}


@dataclass(frozen=True)
class UnknownQuery:
    """A run line naming a query the golden file does not hold (skipped, never scored)."""

    line: int
    query: str          # the line's query text, or its query_id when it has no text

    @property
    def label(self) -> str:
        return self.query


@dataclass
class RunItem:
    query_id: str
    ranking: list[str]
    record: RunRecord
    line: int


def seed_id(query: str) -> str:
    """Stable id of a seed-format item: reordering the file keeps it."""
    return "q-" + hashlib.sha1(normalise_query(query).encode("utf-8")).hexdigest()[:12]


def normalise_query(text: str) -> str:
    return " ".join(text.split())


def _json_object(text: str, path: str, line: int) -> dict[str, Any]:
    obj = parse_json(text, path, line)
    if not isinstance(obj, dict):
        raise InputError("expected a JSON object on each line", path=path, line=line)
    return obj


def _validation_message(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "record"
    return f"{where}: {err['msg'].removeprefix('Value error, ')}"


def read_golden(path: str | Path) -> GoldenSet:
    """Load a golden JSONL file (native or seed lines) into a `GoldenSet`."""
    spath = str(path)
    golden = GoldenSet(path=spath, items={})
    for n, text in input_lines(path):
        obj = _json_object(text, spath, n)
        try:
            if "id" not in obj and ("expectedAnswer" in obj or "relevantChunkIds" in obj
                                    or "intent" in obj):
                item = _from_seed(SeedGoldenRecord.model_validate(obj), n)
            else:
                item = _from_native(NativeGoldenRecord.model_validate(obj), n)
        except ValidationError as exc:
            raise InputError(_validation_message(exc), path=spath, line=n) from None
        if item.id in golden.items:
            what = f"query {_short(item.query)!r}" if item.seed else f"id {item.id!r}"
            raise InputError(f"duplicate {what} (first on line "
                             f"{golden.items[item.id].line})", path=spath, line=n)
        golden.items[item.id] = item
        golden.by_query.setdefault(normalise_query(item.query), item.id)
    if not golden.items:
        raise InputError("no golden items (the file is empty)", path=spath)
    return golden


def _from_native(rec: NativeGoldenRecord, line: int) -> GoldenItem:
    relevance = {cid: 1 for cid in rec.relevant_chunk_ids}
    if rec.relevance:
        relevance.update(rec.relevance)
    return GoldenItem(
        id=rec.id, query=rec.query, reference=rec.expected_answer, relevance=relevance,
        type=rec.type or "unknown", difficulty=rec.difficulty or "unknown", line=line,
    )


def _from_seed(rec: SeedGoldenRecord, line: int) -> GoldenItem:
    intent = (rec.intent or "unknown").strip() or "unknown"
    return GoldenItem(
        id=seed_id(rec.query), query=rec.query, reference=rec.expectedAnswer,
        relevance={cid: 1 for cid in rec.relevantChunkIds}, type=intent,
        difficulty="unknown", line=line, seed=True,
    )


def _short(text: str, limit: int = 80) -> str:
    text = normalise_query(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def read_run(path: str | Path, golden: GoldenSet, *, dedupe: bool = False,
             unknown: list[UnknownQuery] | None = None) -> dict[str, RunItem]:
    """Load a run JSONL file, matching each line to a golden item by `query_id` (or by `query`
    text). Lines naming a query the golden file lacks are skipped and appended to `unknown`;
    a repeated query and a docno twice in one ranking are InputErrors, and so is a run none
    of whose lines matches the golden file."""
    spath = str(path)
    items: dict[str, RunItem] = {}
    skipped: list[UnknownQuery] = []
    for n, text in input_lines(path):
        obj = _json_object(text, spath, n)
        try:
            rec = RunRecord.model_validate(obj)
        except ValidationError as exc:
            raise InputError(_validation_message(exc), path=spath, line=n) from None
        qid = _match_query(rec, golden, spath, n)
        if qid is None:
            skipped.append(UnknownQuery(line=n, query=_short(rec.query or rec.query_id or "")))
            continue
        if qid in items:
            raise InputError(f"duplicate query {_short(golden.items[qid].query)!r} (first on "
                             f"line {items[qid].line})", path=spath, line=n)
        if rec.scores is not None and len(rec.scores) != len(rec.retrieved_ids):
            raise InputError(f"scores has {len(rec.scores)} values for "
                             f"{len(rec.retrieved_ids)} retrieved_ids", path=spath, line=n)
        ranking = _unique(rec.retrieved_ids, dedupe, spath, n)
        items[qid] = RunItem(query_id=qid, ranking=ranking, record=rec, line=n)
    if unknown is not None:
        unknown.extend(skipped)
    if not items:
        if skipped:
            raise InputError(f"none of the run's {len(skipped)} queries is in the golden file "
                             f"{golden.path}; this line's: {skipped[0].label!r}", path=spath,
                             line=skipped[0].line)
        raise InputError("the run is empty (no lines)", path=spath)
    return items


def _match_query(rec: RunRecord, golden: GoldenSet, path: str, line: int) -> str | None:
    """The golden id a run line names, or None when the golden file has no such query."""
    if rec.query_id is not None:
        if rec.query_id in golden.items:
            return rec.query_id
        if rec.query is None:
            return None
    if rec.query is not None:
        return golden.by_query.get(normalise_query(rec.query))
    raise InputError("each line needs query_id (or query, for golden files without ids)",
                     path=path, line=line)


def _unique(ids: list[str], dedupe: bool, path: str, line: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for docno in ids:
        if docno in seen:
            if not dedupe:
                raise InputError(f"{docno!r} appears twice in retrieved_ids (trec_eval refuses "
                                 "duplicate docs; --dedupe keeps the first)", path=path, line=line)
            continue
        seen.add(docno)
        out.append(docno)
    return out
