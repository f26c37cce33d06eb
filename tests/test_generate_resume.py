"""A failure injected into any stage: the rerun completes the work with no duplicate rows, no
lost rows and no repeated LLM calls for work that was already committed."""

from __future__ import annotations

from collections import Counter

import pytest

from builder.generate.models import GenerateOptions
from builder.generate.runner import run_generate
from builder.llm.types import BudgetExceeded, LLMResult

from tests.fakes import ScriptedLLM
from tests.support.scripted_kb import build_kb, ideal

STAGES = ["facts", "questions", "evolve_temporal", "evolve_multi_hop", "evolve_unanswerable_near",
          "roundtrip"]


class Boom(RuntimeError):
    pass


def snapshot(store):
    return {
        "candidates": store.query("SELECT id, type, verdict, difficulty, duplicate_of FROM candidates ORDER BY id"),
        "facts": store.query("SELECT id FROM facts ORDER BY id"),
        "done": store.query("SELECT stage, key FROM stage_done WHERE stage != 'dedup' "
                            "ORDER BY stage, key"),  # dedup rows cache pool states
    }


def failing_at(stage, nth, exc):
    seen = {"n": 0}

    def respond(name, v, role):
        if name == stage:
            seen["n"] += 1
            if seen["n"] == nth:
                return exc
        return ideal(name, v, role)
    return respond


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    store = build_kb(tmp_path_factory.mktemp("clean") / "g.db")
    llm = ScriptedLLM(ideal)
    run_generate(store, llm, GenerateOptions(n=10))
    return snapshot(store), Counter(name for name, _, _ in llm.calls)


@pytest.mark.parametrize("stage", STAGES)
def test_crash_in_stage_then_resume(clean, stage, kb_store):
    expected, clean_calls = clean
    store = kb_store
    first = ScriptedLLM(failing_at(stage, 1, Boom("injected")))
    with pytest.raises(Boom):
        run_generate(store, first, GenerateOptions(n=10))
    second = ScriptedLLM(ideal)
    run_generate(store, second, GenerateOptions(n=10))
    assert snapshot(store) == expected
    # every call of the first run except the one that blew up was kept, none repeated
    # (verification is one round trip per candidate and check, so the count is exact too)
    made = Counter(name for name, _, _ in first.calls + second.calls)
    made[stage] -= 1
    assert +made == +clean_calls
    failed_at = next(i for i, (n, _, _) in enumerate(first.calls) if n == stage)
    kept = first.calls[:failed_at] + first.calls[failed_at + 1:]
    repeated = {(n, repr(sorted(v.items()))) for n, v, _ in kept} & \
               {(n, repr(sorted(v.items()))) for n, v, _ in second.calls}
    assert not repeated


def test_budget_stop_is_clean_and_resumes(clean, kb_store):
    expected, clean_calls = clean
    store = kb_store
    first = ScriptedLLM(failing_at("questions", 1, BudgetExceeded("budget of $0.01 spent")))
    summary = run_generate(store, first, GenerateOptions(n=10))
    assert summary.stopped and "budget" in summary.stopped
    second = ScriptedLLM(ideal)
    run_generate(store, second, GenerateOptions(n=10))
    assert snapshot(store) == expected
    made = Counter(name for name, _, _ in first.calls + second.calls)
    made["questions"] -= 1  # the call that hit the budget
    assert +made == +clean_calls


def test_failed_calls_are_values_and_retried_next_run(kb_store):
    store = kb_store
    bad = ScriptedLLM(failing_at("facts", 2, LLMResult(None, "invalid", error="bad json")))
    summary = run_generate(store, bad, GenerateOptions(n=10, max_rounds=1))
    assert summary.llm_failures == 1 and summary.stopped is None
    assert len(store.query("SELECT key FROM stage_done WHERE stage = 'facts'")) == 6
    again = ScriptedLLM(ideal)
    run_generate(store, again, GenerateOptions(n=16))
    assert [name for name, _, _ in again.calls].count("facts") == 1  # only the failed chunk
    assert len(store.query("SELECT key FROM stage_done WHERE stage = 'facts'")) == 7
    ids = [c["id"] for c in store.query("SELECT id FROM candidates")]
    assert len(ids) == len(set(ids))
