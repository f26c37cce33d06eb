"""Request bodies carry the reply cap under the name the endpoint accepts: OpenAI's reasoning
models (o1/o3/o4/gpt-5) take `max_completion_tokens` (and only the default temperature), every
other endpoint -- the embedded llama.cpp server first -- `max_tokens`; live and in batch files."""

from __future__ import annotations

import pytest

from builder.llm.model_params import is_reasoning_model, sampling_params
from builder.store import Store
from tests.test_llm_batch import lines, request_files, stage
from tests.test_llm_client import GOOD, Endpoint, ask, make_client, ok


@pytest.mark.parametrize("model", ["o1", "o1-mini", "o3", "o3-mini-2025-01-31", "o4-mini",
                                   "gpt-5", "gpt-5-mini", "gpt-5.1", "openai/o3-mini", "GPT-5"])
def test_reasoning_models_get_max_completion_tokens_and_no_temperature(model):
    assert is_reasoning_model(model)
    assert sampling_params(model, 0.2, 300) == {"max_completion_tokens": 300}


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4.1", "local:qwen2.5-coder-1.5b-instruct",
                                   "qwen2.5-coder-1.5b-instruct-q4_k_m", "llama-3-70b",
                                   "ollama/phi3", "claude-opus-4", "mistral-large", ""])
def test_other_endpoints_get_max_tokens(model):
    assert sampling_params(model, 0.2, 300) == {"temperature": 0.2, "max_tokens": 300}


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "g.db") as s:
        yield s


async def test_live_requests_use_the_field_of_their_model(store):
    endpoint = Endpoint(ok(GOOD))
    await ask(make_client(store, endpoint, model="o3-mini", max_tokens=321))
    await ask(make_client(store, endpoint, model="gpt-4o-mini", max_tokens=321),
              chunk="Berlin is in Germany.")
    reasoning, other = endpoint.requests
    assert reasoning["max_completion_tokens"] == 321
    assert "max_tokens" not in reasoning and "temperature" not in reasoning
    assert other["max_tokens"] == 321 and "max_completion_tokens" not in other


def test_batch_files_use_the_field_of_their_model(tmp_path, golden_cli):
    stage(golden_cli, tmp_path, "--model", "gpt-5-mini")
    [path] = request_files(tmp_path)
    for line in lines(path):
        body = line["body"]
        assert body["model"] == "gpt-5-mini" and body["max_completion_tokens"] == 150  # question.prompt's cap
        assert "max_tokens" not in body and "temperature" not in body
