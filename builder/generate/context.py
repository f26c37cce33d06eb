"""What every stage gets: the store, the LLM, the loaded prompts, the options and the run's
counters; plus `run_units`, the one place that runs units of work concurrently.

Concurrency model: units run as asyncio tasks (at most `concurrency` at a time); each unit
awaits its LLM call and then writes its result synchronously in one transaction, so writes
never interleave. `BudgetExceeded` (or any other exception, including Ctrl-C) cancels the
units still waiting; a cancelled unit has written nothing, a finished one is committed.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from contextvars import ContextVar
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from rich.progress import Progress

from builder.llm.prompts import Prompt, load_prompt, load_sentences
from builder.llm.types import LLM, LLMResult, stop_if_deferred
from builder.store.db import Store

from builder.generate.models import GenerateOptions

T = TypeVar("T")
_IN_UNIT: ContextVar[bool] = ContextVar("in_unit", default=False)  # set inside run_units' tasks

# the sentence files composed items are written with (file -> the placeholder each line must
# hold), read and checked once when a run starts, like the prompts: a bad override stops the
# run before any call, not in the middle of composing
SENTENCE_FILES = {"refusals.md": None, "threshold_ceiling.md": "{amount}",
                  "threshold_floor.md": "{amount}", "compare_greater.md": None,
                  "compare_later.md": None, "compare_difference.md": None}
PROMPT_NAMES = (
    "question", "reader", "compose_ambiguous", "compose_multi_hop", "compose_unanswerable",
)


@dataclass
class RunContext:
    store: Store
    llm: LLM
    options: GenerateOptions
    prompts: dict[str, Prompt] = field(default_factory=dict)
    sentences: dict[str, dict[str, str]] = field(default_factory=dict)  # file -> {language: text}
    progress: Progress | None = None
    calls: Counter = field(default_factory=Counter)       # stage -> LLM calls made this run
    failures: Counter = field(default_factory=Counter)    # stage -> failed calls
    spans: Counter = field(default_factory=Counter)  # answer spans code found, per kind
    notes: list[str] = field(default_factory=list)
    observer: Any = None  # progress.RunObserver: told of every call and every verified item

    @classmethod
    def create(cls, store: Store, llm: LLM, options: GenerateOptions,
               progress: Progress | None = None) -> "RunContext":
        prompts = {name: load_prompt(name, options.prompts_dir) for name in PROMPT_NAMES}
        sentences = {name: load_sentences(name, options.prompts_dir, needs)
                     for name, needs in SENTENCE_FILES.items()}
        return cls(store=store, llm=llm, options=options, prompts=prompts, progress=progress,
                   sentences=sentences)

    def model(self, role: str = "generator", stage: str | None = None) -> str:
        try:
            return self.llm.model_for(role, stage)
        except Exception:  # a client without per-stage models
            return getattr(self.llm, "model", "unknown")

    async def call(self, name: str, variables: dict[str, Any], output: type,
                   *, role: str = "generator") -> LLMResult:
        """One structured call through the LLM protocol, counted per stage.

        With `--batch`, a call made outside a step's units whose request was staged ends the
        pass here: the code after it would decide on a reply that is not there yet."""
        self.calls[name] += 1
        result = await self.llm.structured(self.prompts[name], variables, output, stage=name,
                                           role=role)
        if result.status == "deferred" and not _IN_UNIT.get():
            stop_if_deferred(self.llm)
        if not result.ok:
            self.failures[name] += 1
        if self.observer is not None:
            self.observer.call_done(result)
        return result


async def run_units(ctx: RunContext, label: str, items: Iterable[T],
                    work: Callable[[T], Awaitable[None]]) -> None:
    """Run `work(item)` for every item, `ctx.options.concurrency` at a time, with a progress
    bar. The first exception cancels the rest and is re-raised (unwrapped from the group).

    A step ends here: with `--batch`, a pass that staged requests (in these units, or in calls
    made since the last step) stops at this point (`stop_if_deferred`)."""
    stop_if_deferred(ctx.llm)
    items = list(items)
    if not items:
        return
    task_id = ctx.progress.add_task(label, total=len(items)) if ctx.progress else None
    limit = asyncio.Semaphore(ctx.options.concurrency)

    async def one(item: T) -> None:
        _IN_UNIT.set(True)  # this task's own context: a deferred call ends the unit, not the pass
        async with limit:
            await work(item)
        if ctx.progress is not None:
            ctx.progress.advance(task_id)

    try:
        async with asyncio.TaskGroup() as group:
            for item in items:
                group.create_task(one(item))
    except BaseExceptionGroup as eg:  # noqa: F821 - builtin on 3.11
        raise _first_leaf(eg) from None
    stop_if_deferred(ctx.llm)


def _first_leaf(eg: BaseExceptionGroup) -> BaseException:
    from builder.llm.types import BudgetExceeded

    leaves: list[BaseException] = []

    def walk(e: BaseException) -> None:
        if isinstance(e, BaseExceptionGroup):
            for sub in e.exceptions:
                walk(sub)
        else:
            leaves.append(e)

    walk(eg)
    for leaf in leaves:  # a budget stop is the most useful thing to report
        if isinstance(leaf, BudgetExceeded):
            return leaf
    return leaves[0]
