"""golden's vocabulary: the question (and item) types, difficulties, verdicts, review statuses and reject
reasons, defined once. The generator writes these values, the store filters and validates
them, the review UI offers them, export and score group by them, and the benchmarks build rows
from them; all of them import them from here.

Each is a `Literal` (for pydantic models at the boundaries) and the tuple of its values, in the
order lists and menus show them. Adding a value here adds it everywhere at once.

The database does not repeat them as CHECK constraints: SQLite adds a CHECK to an existing
column only by rebuilding the table (copying every candidate, recreating its indexes, FTS index
and triggers), a long exclusive migration on a large database, and every write already goes
through `builder.store`, where the review log rejects a value not listed here.
"""

from __future__ import annotations

from typing import Literal, get_args

QuestionType = Literal["single_hop", "reasoning", "multi_hop", "comparative", "temporal",
                       "unanswerable", "ambiguous"]
TYPES: tuple[str, ...] = get_args(QuestionType)
"""The types the generator writes (and `--types`/`--mix` of `golden generate` name), in its order."""
DEFENSIVE: tuple[str, ...] = ("unanswerable", "ambiguous", "temporal")
"""The types that test a RAG system's defences: refusing, asking back, preferring the newer."""

PRODUCTION = "production"
ItemType = Literal[QuestionType, "production"]
ITEM_TYPES: tuple[str, ...] = get_args(ItemType)
"""Every type a candidate or golden item can have: the generated ones, then `production` (a
real user question from production logs, made a candidate by `golden logs promote`; its
reference answer and relevant chunks come from a reviewer, never from the generator)."""

Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[str, ...] = get_args(Difficulty)

Verdict = Literal["passed", "failed", "pending"]
VERDICTS: tuple[str, ...] = get_args(Verdict)
"""Automatic verification: pending until verified, then passed or failed."""

ReviewStatus = Literal["pending", "accepted", "rejected", "skipped"]
STATUSES: tuple[str, ...] = get_args(ReviewStatus)
"""Human review: pending until a reviewer decides."""

RejectReason = Literal["wrong_answer", "not_grounded", "ambiguous", "duplicate", "trivial",
                       "other"]
REJECT_REASONS: tuple[str, ...] = get_args(RejectReason)

Decision = Literal["accept", "reject", "skip"]
DECISIONS: tuple[str, ...] = get_args(Decision)
"""What one annotator says about one candidate (their vote); skip means "someone else, please"."""
DECIDED_STATUS: dict[str, str] = {"accept": "accepted", "reject": "rejected", "skip": "skipped"}
"""The status a decision gives a candidate once it is settled."""
