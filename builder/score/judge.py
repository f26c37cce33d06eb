"""LLM-judged answer metrics, through the `LLM` protocol with role="judge".

Per item (each a value in the item's flat metrics, and a score + reason in its judge record):

- `faithfulness`: the answer is split into claims (`judge_claims`), every claim is checked
  against the retrieved contexts (`judge_faithfulness`); `faithfulness_supported` is the
  supported share and `faithfulness` = 1 + round(4 x share), a 1-5 score.
  `hallucination_rate` is 1 when faithfulness <= 2. Not applicable to refusals, to answers
  with no claims, or without contexts.
- `answer_relevancy` and `correctness` (against the reference): 1-5 with a reason.
- refusal (`judge_refusal`, the LLM decides, no keyword lists): on unanswerable items
  `correct_refusal_rate` is 1 for a refusal; on answerable ones `wrong_refusal_rate` is 1.
  Unanswerable items get no other judge metric.
- `context_relevance`: share of the first `max_contexts` retrieved chunks the judge finds
  useful for the question, one call per chunk.

Guarantees: one failed or invalid reply never ends the run and never becomes a silent zero
or NaN: the metric is left out of that item and listed in `unscored` with the reason. Once
the budget is spent (or the client gives up on the endpoint) every remaining call is listed
as unscored with that reason and `Judge.stopped` says why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from builder.llm.prompts import Prompt, load_prompt
from builder.errors import JobError
from builder.llm.types import LLM, BudgetExceeded

JUDGE_METRICS = (
    "faithfulness", "faithfulness_supported", "hallucination_rate", "answer_relevancy",
    "correctness", "context_relevance", "wrong_refusal_rate", "correct_refusal_rate",
)
PROMPTS = ("judge_claims", "judge_faithfulness", "judge_relevancy", "judge_correctness",
           "judge_refusal", "judge_context")


class Claims(BaseModel):
    claims: list[str] = Field(default_factory=list)


class ClaimVerdict(BaseModel):
    claim: int
    supported: bool
    reason: str = ""


class ClaimVerdicts(BaseModel):
    verdicts: list[ClaimVerdict]


class Score(BaseModel):
    score: int = Field(ge=1, le=5)
    reason: str = ""


class RefusalVerdict(BaseModel):
    refusal: bool
    reason: str = ""


class ContextVerdict(BaseModel):
    useful: bool
    reason: str = ""


@dataclass
class JudgeInput:
    query_id: str
    question: str
    reference: str
    answer: str
    contexts: list[str]
    answerable: bool


@dataclass
class JudgeOutcome:
    """One item's judge metrics (flat numbers), details (scores and reasons) and failures."""

    metrics: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    unscored: list[dict[str, str]] = field(default_factory=list)


class _Failed(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Judge:
    """Scores items with one LLM client; `concurrency` items are judged at a time."""

    def __init__(self, llm: LLM, *, prompts_dir: str | None = None, max_contexts: int = 10,
                 concurrency: int = 4):
        self.llm = llm
        self.prompts: dict[str, Prompt] = {n: load_prompt(n, prompts_dir) for n in PROMPTS}
        self.max_contexts = max_contexts
        self.concurrency = concurrency
        self.stopped: str | None = None  # why judging stopped early (budget, endpoint down)

    @property
    def model(self) -> str:
        return self.llm.model_for("judge")

    def prompt_versions(self) -> dict[str, str]:
        return {name: p.version for name, p in self.prompts.items()}

    async def judge_all(self, items: Sequence[JudgeInput]) -> dict[str, JudgeOutcome]:
        """Judge every item; results keyed by query id, in input order."""
        gate = asyncio.Semaphore(self.concurrency)

        async def one(item: JudgeInput) -> JudgeOutcome:
            async with gate:
                return await self.judge_item(item)

        outcomes = await asyncio.gather(*(one(i) for i in items))
        return {item.query_id: out for item, out in zip(items, outcomes)}

    async def _call(self, name: str, variables: dict[str, Any], output: type[BaseModel]):
        if self.stopped:
            raise _Failed(self.stopped)
        try:
            result = await self.llm.structured(self.prompts[name], variables, output,
                                               stage=name, role="judge")
        except BudgetExceeded:
            self.stopped = "budget exhausted"
            raise _Failed(self.stopped) from None
        except JobError as exc:  # the client gave up for good (endpoint unreachable...)
            self.stopped = f"judge stopped: {exc}"
            raise _Failed(self.stopped) from None
        except Exception as exc:  # one bad reply must never end the run
            raise _Failed(f"{type(exc).__name__}: {exc}") from None
        if not result.ok:
            raise _Failed(f"{result.status}: {result.error or 'no value'}"[:300])
        return result.value

    async def judge_item(self, item: JudgeInput) -> JudgeOutcome:
        out = JudgeOutcome()

        async def attempt(metric: str, coro):
            try:
                return await coro
            except _Failed as exc:
                out.unscored.append({"query_id": item.query_id, "metric": metric,
                                     "reason": exc.reason})
                return None

        qa = {"question": item.question, "answer": item.answer}
        refusal = await attempt("refusal", self._call("judge_refusal", qa, RefusalVerdict))
        if refusal is not None:
            out.details["refusal"] = {"refusal": refusal.refusal, "reason": refusal.reason}
            key = "wrong_refusal_rate" if item.answerable else "correct_refusal_rate"
            out.metrics[key] = 1.0 if refusal.refusal else 0.0
        if not item.answerable:
            return out

        relevancy = await attempt("answer_relevancy",
                                  self._call("judge_relevancy", qa, Score))
        if relevancy is not None:
            out.metrics["answer_relevancy"] = float(relevancy.score)
            out.details["answer_relevancy"] = relevancy.model_dump()
        correctness = await attempt("correctness", self._call(
            "judge_correctness", {**qa, "reference": item.reference}, Score))
        if correctness is not None:
            out.metrics["correctness"] = float(correctness.score)
            out.details["correctness"] = correctness.model_dump()

        contexts = item.contexts[: self.max_contexts]
        is_refusal = refusal is not None and refusal.refusal
        if contexts and not is_refusal:
            await attempt("faithfulness", self._faithfulness(item, contexts, out))
        if contexts:
            await attempt("context_relevance", self._context_relevance(item, contexts, out))
        return out

    async def _faithfulness(self, item: JudgeInput, contexts: list[str],
                            out: JudgeOutcome) -> None:
        claims = await self._call("judge_claims",
                                  {"question": item.question, "answer": item.answer}, Claims)
        texts = [c.strip() for c in claims.claims if c.strip()]
        if not texts:
            out.details["faithfulness"] = {"claims": [], "reason": "the answer states no claims"}
            return
        verdicts = await self._call("judge_faithfulness", {
            "contexts": _numbered(contexts), "claims": _numbered(texts),
        }, ClaimVerdicts)
        by_number = {v.claim: v for v in verdicts.verdicts}
        if sorted(by_number) != list(range(1, len(texts) + 1)):
            raise _Failed(f"judge returned verdicts for claims {sorted(by_number)}, "
                          f"expected 1..{len(texts)}")
        checked = [{"claim": text, "supported": by_number[n].supported,
                    "reason": by_number[n].reason} for n, text in enumerate(texts, 1)]
        share = sum(c["supported"] for c in checked) / len(checked)
        score = 1 + round(4 * share)
        out.metrics["faithfulness"] = float(score)
        out.metrics["faithfulness_supported"] = share
        out.metrics["hallucination_rate"] = 1.0 if score <= 2 else 0.0
        unsupported = [c["claim"] for c in checked if not c["supported"]]
        out.details["faithfulness"] = {
            "score": score, "supported_share": share, "claims": checked,
            "reason": (f"{len(unsupported)} of {len(checked)} claims not supported by the "
                       "contexts" if unsupported else "every claim is supported"),
        }

    async def _context_relevance(self, item: JudgeInput, contexts: list[str],
                                 out: JudgeOutcome) -> None:
        verdicts = await asyncio.gather(*(
            self._call("judge_context", {"question": item.question, "passage": ctx},
                       ContextVerdict)
            for ctx in contexts
        ), return_exceptions=True)
        failed = [v for v in verdicts if isinstance(v, BaseException)]
        if failed:
            first = failed[0]
            reason = first.reason if isinstance(first, _Failed) else repr(first)
            raise _Failed(f"{len(failed)} of {len(contexts)} chunks not judged ({reason})")
        useful = [v.useful for v in verdicts]
        out.metrics["context_relevance"] = sum(useful) / len(useful)
        out.details["context_relevance"] = {
            "useful": useful, "reasons": [v.reason for v in verdicts],
        }


def _numbered(texts: Sequence[str]) -> str:
    return "\n\n".join(f"[{n}] {t}" for n, t in enumerate(texts, 1))
