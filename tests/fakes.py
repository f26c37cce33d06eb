"""Test doubles shared by the test modules. No network anywhere."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from builder.llm.prompts import Prompt
from builder.llm.types import LLMResult


class ScriptedLLM:
    """Implements `builder.llm.types.LLM` from a function.

    `respond(prompt_name, variables, role)` (each variable as the text the model reads: lists
    written through the prompt's `--- list` sections) returns a dict (validated against the output model),
    an `LLMResult` (returned as is, to script failures) or an exception (raised).
    Every call is recorded in `self.calls` as (prompt_name, those variables, role).

    A question call asks for several passages at once (its `passages` list): `respond` is asked
    once per passage, with that passage's fields as the variables (and the call's `partner`),
    each recorded in `self.calls`; the replies are joined into the call's reply (`passage_1`
    ...), and
    the first failure scripted for a passage is the call's. `self.batches` records how many
    passages each real question call held.
    """

    def __init__(self, respond: Callable[[str, Mapping[str, Any], str], Any],
                 model: str = "scripted-model"):
        self.respond = respond
        self.model = model
        self.dry_run = False
        self.calls: list[tuple[str, dict, str]] = []
        self.batches: list[int] = []

    async def structured(self, prompt: Prompt, variables: Mapping[str, Any], output: type[BaseModel],
                         *, stage: str | None = None, role: str = "generator") -> LLMResult:
        prompt.render(dict(variables))  # fails like the real client on a missing variable
        if isinstance(variables.get("passages"), list):
            reply = self._per_passage(prompt, variables, role)
        else:
            shown = prompt.fill(dict(variables))  # each variable as the model reads it
            self.calls.append((prompt.name, shown, role))
            reply = self.respond(prompt.name, shown, role)
        if isinstance(reply, LLMResult):
            return reply
        if isinstance(reply, BaseException):
            raise reply
        try:
            value = output.model_validate(reply)
        except ValidationError as exc:
            return LLMResult(None, "invalid", error=str(exc), model=self.model)
        return LLMResult(value, "ok", model=self.model)

    def _per_passage(self, prompt: Prompt, variables: Mapping[str, Any], role: str):
        passages = variables["passages"]
        self.batches.append(len(passages))
        partner = prompt.fill({"partner": variables.get("partner", [])})
        replies = []
        for passage in passages:
            shown = {**partner, **prompt.fill(passage)}
            self.calls.append((prompt.name, shown, role))
            reply = self.respond(prompt.name, shown, role)
            if isinstance(reply, (LLMResult, BaseException)):
                return reply
            replies.append(reply)
        return {f"passage_{i}": r["questions"] if "questions" in r else [r["question"]]
                for i, r in enumerate(replies, 1)}

    def model_for(self, role: str = "generator", stage: str | None = None) -> str:
        return self.model
