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


@dataclass
class LLMResult(Generic[T]):
    """One structured call's outcome. Failures are values, not exceptions: callers carry on."""

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
