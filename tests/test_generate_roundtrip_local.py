"""The round trip through the real embedded server (integration): the planted set's items are
answered again by a real llama.cpp model, every verdict is recorded, and the code-caught faults
are rejected whatever the model says."""

from __future__ import annotations

import asyncio

import pytest

from builder.generate.checks import CHECKS
from builder.generate.context import RunContext
from builder.generate.models import GenerateOptions
from builder.generate.verify import verify_pending
from builder.llm.settings import LLMSettings
from builder.llm.setup import open_llm
from builder.store.candidates import load_candidates, load_facts

from tests.support.planted import build, good, planted


@pytest.mark.integration
def test_round_trip_through_the_real_local_model(tmp_path):
    pytest.importorskip("llama_cpp")
    store = build(tmp_path / "g.db")
    bad, right = planted(store), good(store)
    settings = LLMSettings(local_model="smollm2-135m", temperature=0.0, max_tokens=64)
    with open_llm(store, settings, job="it", progress=lambda m: None) as llm:
        ctx = RunContext.create(store, llm, GenerateOptions())
        facts = {f["id"]: f for f in load_facts(store)}
        asyncio.run(verify_pending(ctx, load_candidates(store), facts))
    verdicts = {c["id"]: c for c in load_candidates(store)}
    code_checks = {run.__name__ for _, run in CHECKS}
    for what, cand, checks in bad:
        got = verdicts[cand["id"]]
        assert got["verdict"] != "pending", what  # the real calls all came back
        if checks <= code_checks:
            assert got["verdict"] == "failed", what
    asked = [c for c in verdicts.values()
             if any(v["source"] == "llm" for v in c["verification"])]
    assert asked, "no candidate reached the round trip"
    for cand in asked:
        llm_checks = [v for v in cand["verification"] if v["source"] == "llm"]
        assert all(v["model"] == "local:smollm2-135m-instruct-q4_1" for v in llm_checks)
    rows = store.query("SELECT status FROM llm_calls WHERE stage = 'roundtrip'")
    assert rows and all(r["status"] in ("ok", "invalid", "truncated") for r in rows)
    # the right items were read too: each got a verdict from a real answer
    assert all(verdicts[c["id"]]["verdict"] != "pending" for c in right)
