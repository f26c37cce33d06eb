"""LLM-judged answer metrics, through the `LLM` protocol with role="judge".

Per item (each a value in the item's flat metrics, and a score + reason in its judge record):

- `faithfulness`: code first (`signals`): the answer is cut into claims (sentences); a claim
  with a number, date, unit, quoted string, name or identifier found in no context is
  unsupported, one whose values are all found and whose words are stated in the contexts (word
  for word, or every content word in one passage) is supported. The LLM (`judge_claim`)
  judges only the claims code leaves undecided, one claim at a time against the few context
  sentences most like it. `faithfulness_supported` is the supported share,
  `faithfulness` = 1 + round(4 x share), a 1-5 score, and `hallucination_rate` is 1 when any
  claim is unsupported (an answer with a hallucination). Each claim's detail says whether code
  or the LLM decided it. Not applicable to refusals, to answers with no claims, or without
  contexts.
- `answer_relevancy` and `correctness` (against the reference): 1-5 with a reason.
- refusal, code first (`refusal.check_refusal`: refusal phrases per language; an answer that
  carries claims is never a refusal); the LLM (`judge_refusal`) only for answers code finds
  unclear ("Yes.", "Blue."). On unanswerable items `correct_refusal_rate` is 1 for a
  refusal; on answerable ones `wrong_refusal_rate` is 1. Unanswerable items get no
  relevancy, correctness or context relevance.
- `faithfulness` is judged for every answer except a pure refusal found by code, refusal
  verdict or not, answerable or not: a partial refusal's claims and an answer to an
  unanswerable question are checked against the contexts like any other. (A refusal verdict
  used to skip faithfulness, so a judge that mistook answers for refusals hid hallucinations.)
- `context_relevance`: share of the first `max_contexts` retrieved chunks the judge finds
  useful for the question, one call per chunk.

Guarantees: one failed or invalid reply never ends the run and never becomes a silent zero
or NaN: the metric is left out of that item and listed in `unscored` with the reason. Once
the budget is spent (or the client gives up on the endpoint) every remaining call is listed
as unscored with that reason and `Judge.stopped` says why. `planned_calls` counts the calls
an item needs before any is made, for the progress estimate.

Library use (no CLI needed): build `JudgeInput` records and call `judge_records(llm, items)`
(or `await Judge(llm).judge_all(items)`); each `JudgeOutcome` has plain-number metrics.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

import time
from collections.abc import Callable

from builder.errors import JobError
from builder.llm.prompts import Prompt, load_prompt
from builder.llm.types import LLM, BudgetExceeded
from builder.score.directions import JUDGE_METRICS  # noqa: F401  (re-exported)
from builder.score.refusal import RefusalCheck, check_refusal
from builder.score.signals import SIGNALS_VERSION, ClaimCheck, check_answer

# The embedded model's judge calls on a 2-core machine (measured: ~13 s each for qwen-0.5b, and
# 13.0 s for qwen-1.5b in bench_judge: 40 calls in 519 s on a shared machine); only the first
# progress line uses it, later ones extrapolate from the calls so far.
LOCAL_SECONDS_PER_CALL = 13.0

# What `Judge(metrics=...)` can be limited to (a log without reference answers cannot be judged
# for correctness; a benchmark may want faithfulness and refusals only).
ASPECTS = ("refusal", "faithfulness", "answer_relevancy", "correctness", "context_relevance")
PROMPTS = ("judge_claim", "judge_relevancy", "judge_correctness", "judge_refusal",
           "judge_context")


class ClaimVerdict(BaseModel):
    reason: str = ""
    supported: bool


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


class JudgeProgress:
    """Progress of a judging run for people watching a terminal or a CI log: a line when it
    starts (answers, planned calls), then at most every `every_s` seconds and at the end, with
    the calls done, elapsed time and an estimate of the time left from the calls so far."""

    def __init__(self, emit: Callable[[str], None], *, every_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic):
        self.emit = emit
        self.every_s = every_s
        self.clock = clock
        self.items = self.items_done = self.calls = self.calls_done = 0
        self.started = self.last = 0.0

    def start(self, items: int, calls: int, model: str, code_refusals: int, *,
              seconds_per_call: float | None = None) -> None:
        self.items, self.calls = items, calls
        self.started = self.last = self.clock()
        guess = (f", roughly {_duration(calls * seconds_per_call)} at ~{seconds_per_call:g} s a "
                 "call" if seconds_per_call else "")
        self.emit(f"judging {items} answers with {model}: about {calls} LLM calls{guess} "
                  f"(refusal decided by code for {code_refusals} of {items}); progress every "
                  f"{self.every_s:g} s")

    def call_done(self) -> None:
        self.calls_done += 1
        self._maybe_emit()

    def item_done(self) -> None:
        self.items_done += 1
        self._maybe_emit(force=self.items_done == self.items)

    def _maybe_emit(self, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self.last < self.every_s:
            return
        self.last = now
        elapsed = now - self.started
        line = (f"judge: {self.items_done}/{self.items} answers, {self.calls_done}/"
                f"~{self.calls} calls, {_duration(elapsed)} elapsed")
        left = max(0, self.calls - self.calls_done)
        if self.calls_done and left and self.items_done < self.items:
            line += f", about {_duration(elapsed / self.calls_done * left)} left"
        self.emit(line)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class Judge:
    """Scores items with one LLM client; `concurrency` items are judged at a time."""

    def __init__(self, llm: LLM, *, prompts_dir: str | None = None, max_contexts: int = 10,
                 concurrency: int = 4, progress: JudgeProgress | None = None,
                 metrics: Sequence[str] = ASPECTS, settle_hallucination: bool = False):
        """`settle_hallucination`: once code finds an unsupported claim, ask the LLM nothing
        more about that answer's claims (its `hallucination_rate` is settled; its faithfulness
        score is then left out). For benchmarks of hallucination detection, where it saves
        most of the calls."""
        unknown = sorted(set(metrics) - set(ASPECTS))
        if unknown:
            raise ValueError(f"unknown judge aspects {unknown}; known: {', '.join(ASPECTS)}")
        self.aspects = frozenset(metrics)
        self.llm = llm
        self.prompts_dir = prompts_dir
        self.prompts: dict[str, Prompt] = {n: load_prompt(n, prompts_dir) for n in PROMPTS}
        self.max_contexts = max_contexts
        self.concurrency = concurrency
        self.progress = progress
        self.stopped: str | None = None  # why judging stopped early (budget, endpoint down)
        self.settle_hallucination = settle_hallucination

    @property
    def model(self) -> str:
        return self.llm.model_for("judge")

    def prompt_versions(self) -> dict[str, str]:
        """Each prompt's version, plus `signals`: the version of the code checks."""
        return {**{name: p.version for name, p in self.prompts.items()},
                "signals": SIGNALS_VERSION}


    def claim_checks(self, item: JudgeInput) -> list[ClaimCheck]:
        return check_answer(item.answer, item.contexts[: self.max_contexts], self.prompts_dir,
                            item.question)

    def _llm_claims(self, checks: Sequence[ClaimCheck]) -> list[ClaimCheck]:
        undecided = [c for c in checks if c.verdict is None]
        if self.settle_hallucination and any(c.verdict == "unsupported" for c in checks):
            return []
        return undecided

    def planned_calls(self, item: JudgeInput, check: RefusalCheck | None = None) -> int:
        """LLM calls `judge_item` makes for this item when every call succeeds."""
        check = check or check_refusal(item.answer, self.prompts_dir)
        contexts = len(item.contexts[: self.max_contexts])
        on = self.aspects
        calls = 0 if check.decided or "refusal" not in on else 1
        if contexts and not check.is_refusal and "faithfulness" in on:
            calls += len(self._llm_claims(self.claim_checks(item)))  # what code leaves open
        if item.answerable:
            calls += ("answer_relevancy" in on) + ("correctness" in on)
            calls += contexts if "context_relevance" in on else 0
        return calls

    async def judge_all(self, items: Sequence[JudgeInput]) -> dict[str, JudgeOutcome]:
        """Judge every item; results keyed by query id, in input order."""
        gate = asyncio.Semaphore(self.concurrency)
        if self.progress is not None:
            checks = [check_refusal(i.answer, self.prompts_dir) for i in items]
            self.progress.start(len(items), sum(map(self.planned_calls, items, checks)),
                                self.model, sum(c.decided for c in checks),
                                seconds_per_call=(LOCAL_SECONDS_PER_CALL
                                                  if getattr(self.llm, "local", False) else None))

        async def one(item: JudgeInput) -> JudgeOutcome:
            async with gate:
                outcome = await self.judge_item(item)
            if self.progress is not None:
                self.progress.item_done()
            return outcome

        outcomes = await asyncio.gather(*(one(i) for i in items))
        return {item.query_id: out for item, out in zip(items, outcomes)}

    async def _call(self, name: str, variables: dict[str, Any], output: type[BaseModel]):
        if self.stopped:
            raise _Failed(self.stopped)
        try:
            try:
                result = await self.llm.structured(self.prompts[name], variables, output,
                                                   stage=name, role="judge")
            finally:
                if self.progress is not None:
                    self.progress.call_done()
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
        on = self.aspects
        check = check_refusal(item.answer, self.prompts_dir)
        refusal: bool | None = None
        if "refusal" not in on:
            pass
        elif check.decided:
            refusal = check.is_refusal
            out.details["refusal"] = {"refusal": refusal, "partial": check.verdict == "partial",
                                      "decided_by": "code", "reason": _code_reason(check)}
        else:
            verdict = await attempt("refusal", self._call("judge_refusal", qa, RefusalVerdict))
            if verdict is not None:
                refusal = verdict.refusal
                out.details["refusal"] = {"refusal": refusal, "partial": False,
                                          "decided_by": "llm", "reason": verdict.reason}
        if refusal is not None:
            key = "wrong_refusal_rate" if item.answerable else "correct_refusal_rate"
            out.metrics[key] = 1.0 if refusal else 0.0

        if item.answerable and "answer_relevancy" in on:
            relevancy = await attempt("answer_relevancy",
                                      self._call("judge_relevancy", qa, Score))
            if relevancy is not None:
                out.metrics["answer_relevancy"] = float(relevancy.score)
                out.details["answer_relevancy"] = relevancy.model_dump()
        if item.answerable and "correctness" in on:
            correctness = await attempt("correctness", self._call(
                "judge_correctness", {**qa, "reference": item.reference}, Score))
            if correctness is not None:
                out.metrics["correctness"] = float(correctness.score)
                out.details["correctness"] = correctness.model_dump()

        contexts = item.contexts[: self.max_contexts]
        # only a pure refusal (found by code) has no claims to check
        if contexts and not check.is_refusal and "faithfulness" in on:
            await attempt("faithfulness", self._faithfulness(item, contexts, out))
        if contexts and item.answerable and "context_relevance" in on:
            await attempt("context_relevance", self._context_relevance(item, contexts, out))
        return out

    async def _faithfulness(self, item: JudgeInput, contexts: list[str],
                            out: JudgeOutcome) -> None:
        checks = check_answer(item.answer, contexts, self.prompts_dir, item.question)
        if not checks:
            out.details["faithfulness"] = {"claims": [], "reason": "the answer states no claims"}
            return
        asked = self._llm_claims(checks)
        verdicts = await asyncio.gather(*(
            self._call("judge_claim", {"question": item.question, "claim": c.claim,
                                       "evidence": _numbered(c.evidence)}, ClaimVerdict)
            for c in asked), return_exceptions=True)
        failed = [v for v in verdicts if isinstance(v, BaseException)]
        if failed:
            first = failed[0]
            reason = first.reason if isinstance(first, _Failed) else repr(first)
            raise _Failed(f"{len(failed)} of {len(asked)} claims not judged ({reason})")
        by_claim = {id(c): v for c, v in zip(asked, verdicts)}
        checked = []
        for c in checks:
            v = by_claim.get(id(c))
            if v is not None:
                checked.append({"claim": c.claim, "supported": v.supported, "reason": v.reason,
                                "decided_by": "llm", "evidence": c.evidence})
            elif c.verdict is not None:
                checked.append({"claim": c.claim, "supported": c.verdict == "supported",
                                "reason": c.reason, "decided_by": "code"})
        unsupported = [c["claim"] for c in checked if not c["supported"]]
        out.metrics["hallucination_rate"] = 1.0 if unsupported else 0.0
        if len(checked) < len(checks):  # settled by code before every claim was judged
            out.details["faithfulness"] = {
                "claims": checked, "reason": f"{len(unsupported)} claim(s) not supported by "
                "the contexts (found by code; the rest not judged)"}
            return
        share = sum(c["supported"] for c in checked) / len(checked)
        score = 1 + round(4 * share)
        out.metrics["faithfulness"] = float(score)
        out.metrics["faithfulness_supported"] = share
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


def _code_reason(check: RefusalCheck) -> str:
    if check.verdict == "partial":
        return (f"says part is missing ({check.refusal_clauses[0][:80]!r}) but states claims "
                f"({check.claim_clauses[0][:80]!r}): not a refusal")
    if check.verdict == "refusal":
        first = check.refusal_clauses[0][:80] if check.refusal_clauses else "empty answer"
        return f"refusal phrase: {first!r}"
    return f"states claims ({check.claim_clauses[0][:80]!r})"


def judge_records(llm: LLM, items: Sequence[JudgeInput], *, prompts_dir: str | None = None,
                  max_contexts: int = 10, concurrency: int = 4,
                  progress: JudgeProgress | None = None, metrics: Sequence[str] = ASPECTS,
                  settle_hallucination: bool = False,
                  ) -> tuple[dict[str, JudgeOutcome], Judge]:
    """Judge plain records outside `golden score` (e.g. answers from production logs): the
    outcomes by query id, and the `Judge` (its `model`, `prompt_versions()`, `stopped`).
    `metrics` limits the aspects judged (see `ASPECTS`)."""
    judge = Judge(llm, prompts_dir=prompts_dir, max_contexts=max_contexts,
                  concurrency=concurrency, progress=progress, metrics=metrics,
                  settle_hallucination=settle_hallucination)
    return asyncio.run(judge.judge_all(items)), judge


def prompt_versions(prompts_dir: str | None = None) -> dict[str, str]:
    """What `Judge.prompt_versions` will say, without a client (for checks before judging)."""
    return {**{name: load_prompt(name, prompts_dir).version for name in PROMPTS},
            "signals": SIGNALS_VERSION}
