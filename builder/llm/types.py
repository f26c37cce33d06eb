"""The contract every LLM caller in golden codes against.

Generation, verification and judging call `LLM.structured(...)` with a prompt, its variables and
a pydantic output model; they never see HTTP, retries, caching or the local server. The real
implementation is `builder.llm.client.OpenAIClient`; tests use `tests/fakes.py`'s scripted one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from builder.errors import JobError
from builder.llm.prompts import Prompt

T = TypeVar("T", bound=BaseModel)

# Outcomes recorded in llm_calls.status (and LLMResult.status).
STATUSES = ("ok", "error", "refusal", "empty", "truncated", "invalid", "dry_run")


class BudgetExceeded(JobError):
    """Raised by `structured` once `--budget` is spent. Jobs stop cleanly and resume later."""


class CallsDeferred(Exception):
    """Raised at the end of a step of a `--batch` pass that staged requests instead of sending
    them (`stop_if_deferred`): what comes after the step would read replies not there yet."""


def stop_if_deferred(llm: "LLM") -> None:
    """The one hook a pipeline needs for batch engines: call it where a step ends (the units
    of a stage have all run). With a client that stages requests for a batch engine
    (`builder.llm.batch`) and has staged some this pass, it raises CallsDeferred; with any
    other client it does nothing."""
    staged = getattr(llm, "deferred", 0)
    if staged:
        raise CallsDeferred(f"{staged} requests staged for a batch engine")


@dataclass
class LLMResult(Generic[T]):
    """One structured call's outcome. Failures are values, not exceptions: callers carry on.

    Besides the statuses above, a client that stages requests for a batch engine returns
    "deferred" for a request it wrote instead of sending (never stored in llm_calls)."""

    value: T | None
    status: str
    error: str | None = None
    call_id: int | None = None
    cached: bool = False
    model: str | None = None
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.value is not None


class LLM(Protocol):
    """What pipeline code needs from an LLM client.

    `role` picks the model: "generator" (default), "verifier" or "judge"; per-stage overrides
    in the config are looked up by `stage` (defaults to the prompt's name).
    """

    dry_run: bool

    async def structured(
        self,
        prompt: Prompt,
        variables: Mapping[str, Any],
        output: type[T],
        *,
        stage: str | None = None,
        role: str = "generator",
    ) -> LLMResult[T]: ...

    def model_for(self, role: str = "generator", stage: str | None = None) -> str: ...
