"""Pydantic models at the generator's boundaries: what each prompt must return, the options a
run takes, and the summary it hands back.

LLM output models are deliberately small and flat (small local models follow short schemas
far better), and every list has a default so a partial but valid reply still validates.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from builder.vocabulary import TYPES


# Default mix: 25% defensive (the floor is 15%). Only single-hop items can measure easy
# (difficulty.py), so with the default 40/30/30 difficulty target the runner plans more
# single-hop slots than this mix gives, taken from reasoning / multi-hop / comparative
# (plan.py `steer_for_difficulty`).
DEFAULT_MIX = {
    "single_hop": 0.35, "reasoning": 0.15, "multi_hop": 0.15, "comparative": 0.10,
    "temporal": 0.10, "unanswerable": 0.10, "ambiguous": 0.05,
}
DEFAULT_DIFFICULTY = {"easy": 0.4, "medium": 0.3, "hard": 0.3}


# ------------------------------------------------------------------ LLM outputs

class ExtractedFact(BaseModel):
    fact: str
    evidence: str = ""
    entities: list[str] = Field(default_factory=list)
    dates: list[str] = Field(default_factory=list)


class FactsOutput(BaseModel):
    facts: list[ExtractedFact] = Field(default_factory=list)


class EvolvedQuestion(BaseModel):
    question: str
    answer: str = ""


class ProposedQuestions(BaseModel):
    questions: list[str] = Field(default_factory=list)


class InventedEntityQuestion(BaseModel):
    name: str
    question: str


class RoundTripReply(BaseModel):
    """The round-trip answering call (`roundtrip.prompt`): the passage it answers from (0 when
    none does) and the shortest phrase of that passage that answers. Both fields are required:
    a reply without them is repaired or recorded as invalid, never read as "not found"."""

    passage: int = Field(description="number of the passage that answers; 0 when none does")
    answer: str = Field(description="the shortest phrase from that passage that answers")


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
    facts: Literal["auto", "llm", "text"] = Field(
        "auto", description="fact extractor: the LLM, the code splitter (statements.py), or "
                            "auto = code for the embedded local model, LLM otherwise")
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
    chunks_with_facts: int = 0
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
    facts: int = 0
    facts_dropped: int = 0
    facts_extractor: str = "llm"
    llm: dict = Field(default_factory=dict)
    llm_calls_by_stage: dict[str, int] = Field(default_factory=dict)
    llm_failures: int = 0
    seconds: float = 0.0
    stopped: str | None = None
    dry_run: bool = False
    notes: list[str] = Field(default_factory=list)

    @property
    def verified_total(self) -> int:
        return sum(t.verified for t in self.types.values())
