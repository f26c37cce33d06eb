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
    """

    def __init__(self, respond: Callable[[str, Mapping[str, Any], str], Any],
                 model: str = "scripted-model"):
        self.respond = respond
        self.model = model
        self.dry_run = False
        self.calls: list[tuple[str, dict, str]] = []

    async def structured(self, prompt: Prompt, variables: Mapping[str, Any], output: type[BaseModel],
                         *, stage: str | None = None, role: str = "generator") -> LLMResult:
        prompt.render(dict(variables))  # fails like the real client on a missing variable
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

    def model_for(self, role: str = "generator", stage: str | None = None) -> str:
        return self.model


def scripted_reader(answer: str, named: int = 1):
    """A run context whose every call is the reader replying `answer` from sentence `named`:
    what `reader.ask` and `roundtrip.round_trip` need of a context, and nothing more."""
    from types import SimpleNamespace

    from builder.generate.models import ReaderReply

    async def call(name, variables, output, role=None):
        return SimpleNamespace(ok=True, value=ReaderReply(sentence=named, answer=answer))
    return SimpleNamespace(call=call)
