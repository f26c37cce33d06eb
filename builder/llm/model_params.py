"""The sampling fields of a chat request, in the form each endpoint accepts (live requests and
batch files alike: both bodies are built by `LLMClient._request`).

- OpenAI's reasoning models (the o1, o3, o4 and gpt-5 families, also behind a provider prefix
  such as "openai/o3-mini") refuse `max_tokens` and take `max_completion_tokens`; they accept
  only the default temperature, so none is sent to them.
- Every other endpoint gets `max_tokens` and the temperature: llama-cpp-python's server (the
  embedded model) ignores `max_completion_tokens` and would generate to the end of its context
  (measured, see shared MEASURED.md), and most OpenAI-compatible servers read `max_tokens`.
"""

from __future__ import annotations

import re
from typing import Any

_REASONING = re.compile(r"^(?:[\w.-]+/)?(?:o\d|gpt-5)(?:$|[-.:])", re.IGNORECASE)


def is_reasoning_model(model: str) -> bool:
    return bool(_REASONING.match(model or ""))


def sampling_params(model: str, temperature: float, max_tokens: int) -> dict[str, Any]:
    """`temperature` and the reply cap under the names `model`'s endpoint accepts."""
    if is_reasoning_model(model):
        return {"max_completion_tokens": max_tokens}
    return {"temperature": temperature, "max_tokens": max_tokens}
