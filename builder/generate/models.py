"""Pydantic models at the generator's boundaries: what each prompt must return, the options a
run takes, and the summary it hands back.

LLM output models are deliberately small and flat (small local models follow short schemas
far better), and every list has a default so a partial but valid reply still validates.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator, model_validator

from builder.vocabulary import TYPES


# Default mix: 45% harder items composed from verified single-hop ones (compose.py), 15%
# defensive (unanswerable, ambiguous). A kind the knowledge base offers no material for gives its
# places to single-hop items (nothing is relabelled).
DEFAULT_MIX = {
    "single_hop": 0.55, "reasoning": 0.10, "multi_hop": 0.10, "comparative": 0.10,
    "unanswerable": 0.10, "ambiguous": 0.05,
}
DEFAULT_DIFFICULTY = {"easy": 0.4, "medium": 0.3, "hard": 0.3}


# ------------------------------------------------------------------ LLM outputs

def one_as_list(data, many: str, one: str):
    """A reply holding one `one` instead of the list `many` (an endpoint that ignores the
    schema, an older prompt), read as a list of one."""
    if isinstance(data, dict) and many not in data and one in data:
        return {many: [data[one]]}
    return data


class WrittenQuestions(BaseModel):
    """The question writer's reply (`question.prompt`): a few differently worded questions for
    one answer; code keeps the first that passes its checks (questions.py). A reply with one
    `question` (an endpoint that ignores the schema, an older prompt) is read as a list of one."""

    questions: list[str] = Field(min_length=1, max_length=5)

    @model_validator(mode="before")
    @classmethod
    def _one_question(cls, data):
        return one_as_list(data, "questions", "question")


class ReaderReply(BaseModel):
    """The reader's reply (`reader.prompt`): the sentence it answered from (0: none) and the
    shortest words of it that answer. Both required: a reply without them is repaired or
    recorded as invalid, never read as "not found"."""

    sentence: int = Field(description="number of the sentence that answers; 0 when none does")
    answer: str = Field(description="the shortest words of that sentence that answer")


# ------------------------------------------------------------------ run options / summary

class GenerateOptions(BaseModel):
    """What `golden generate` (or the demo) asks for."""

    n: int = Field(20, ge=1, le=100_000)
    mix: dict[str, float] | None = None
    types: list[str] | None = None
    difficulty: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_DIFFICULTY))
    docs: str | None = None
    prompts_dir: str | None = None
    seed: int = 0
    concurrency: int = Field(4, ge=1, le=256)
    max_rounds: int = Field(4, ge=1, le=10)
    min_defensive: float = 0.15

    @field_validator("types")
    @classmethod
    def _known_types(cls, value):
        if value is not None:
            bad = [t for t in value if t not in TYPES]
            if bad:
                raise ValueError(f"unknown type(s) {bad}; known: {', '.join(TYPES)}")
        return value


class TypeCounts(BaseModel):
    planned: int = 0
    generated: int = 0
    verified: int = 0
    rejected: int = 0
    duplicates: int = 0
    top_reasons: list[tuple[str, int]] = Field(default_factory=list)
    note: str = ""


class DocumentCoverage(BaseModel):
    document_id: str
    chunks: int = 0
    chunks_asked: int = 0
    verified: int = 0


class GenerateSummary(BaseModel):
    """What a run did: per type counts (over the whole pool, this run's work included), the
    LLM spend of this run, per-document coverage and the difficulty mix reached."""

    n_target: int
    plan: dict[str, int]
    types: dict[str, TypeCounts]
    difficulty: dict[str, int] = Field(default_factory=dict)
    difficulty_target: dict[str, float] = Field(default_factory=dict)
    difficulty_short: dict[str, int] = Field(
        default_factory=dict, description="level -> items missing against the target share")
    documents: list[DocumentCoverage] = Field(default_factory=list)
    spans: dict[str, int] = Field(
        default_factory=dict, description="answer spans code found in scope, per kind")
    llm: dict = Field(default_factory=dict)
    llm_calls_by_stage: dict[str, int] = Field(default_factory=dict)
    llm_failures: int = 0
    seconds: float = 0.0
    first_item_seconds: float | None = None
    stopped: str | None = None
    dry_run: bool = False
    notes: list[str] = Field(default_factory=list)

    @property
    def verified_total(self) -> int:
        return sum(t.verified for t in self.types.values())
