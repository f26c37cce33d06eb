"""A failure injected into any stage: the rerun completes the work with no duplicate rows, no
lost rows and no repeated LLM calls for work that was already committed."""

from __future__ import annotations

from collections import Counter

import pytest

from builder.generate.models import GenerateOptions
from builder.generate.pipeline import FIRST_WAVE
from builder.generate.runner import run_generate
from builder.llm.types import BudgetExceeded, LLMResult
from builder.store.candidates import done_infos

from tests.fakes import ScriptedLLM
from tests.support.scripted_kb import build_kb, ideal

# the stages the ideal run calls (comparatives and reasoning items are written by code)
STAGES = ["question", "reader", "compose_unanswerable"]


class Boom(RuntimeError):
    pass


def snapshot(store):
    return {
        "candidates": store.query("SELECT id, type, verdict, difficulty, duplicate_of FROM candidates ORDER BY id"),
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
    first = ScriptedLLM(failing_at("question", 1, BudgetExceeded("budget of $0.01 spent")))
    summary = run_generate(store, first, GenerateOptions(n=10))
    assert summary.stopped and "budget" in summary.stopped
    second = ScriptedLLM(ideal)
    run_generate(store, second, GenerateOptions(n=10))
    assert snapshot(store) == expected
    made = Counter(name for name, _, _ in first.calls + second.calls)
    made["question"] -= 1  # the call that hit the budget
    assert +made == +clean_calls


def test_failed_calls_are_values_and_retried_next_run(kb_store):
    """A failed question call stores nothing (asked again next run); a failed round trip leaves
    its candidate pending (read again next run); neither stops the run."""
    store = kb_store
    failures = {"question": 2, "reader": 1}  # which call of each prompt fails
    seen: Counter = Counter()

    def flaky(name, v, role):
        seen[name] += 1
        if failures.get(name) == seen[name]:
            return LLMResult(None, "invalid" if name == "question" else "error", error="injected")
        return ideal(name, v, role)

    summary = run_generate(store, ScriptedLLM(flaky), GenerateOptions(n=10))
    assert summary.llm_failures == 2 and summary.stopped is None
    run_generate(store, ScriptedLLM(ideal), GenerateOptions(n=10))
    assert store.query("SELECT id FROM candidates WHERE verdict = 'pending'") == []
    ids = [c["id"] for c in store.query("SELECT id FROM candidates")]
    assert len(ids) == len(set(ids))


def test_a_span_whose_call_failed_in_an_early_wave_is_asked_next_run(kb_store):
    """With the embedded model a run asks in small waves; a question call that fails in the
    first wave stores nothing, and the next run asks that span again even though later waves
    were finished after it."""
    seen: Counter = Counter()
    asked: list[tuple[str, str]] = []

    def flaky(name, v, role):
        if name == "question":
            seen[name] += 1
            asked.append((v["before"] + v["answer"] + v["after"], v["answer"]))
            if seen[name] == 1:
                return LLMResult(None, "error", error="injected")
        return ideal(name, v, role)

    local = ScriptedLLM(flaky)
    local.local = True  # small waves, as with the embedded model
    run_generate(kb_store, local, GenerateOptions(n=6, types=["single_hop"]))
    failed = asked[0]
    waves = kb_store.query("SELECT count(*) AS n FROM stage_done WHERE stage = 'wave'")[0]["n"]
    assert waves >= 2 and asked.count(failed) == 1
    again = ScriptedLLM(ideal)
    again.local = True
    run_generate(kb_store, again, GenerateOptions(n=12, types=["single_hop"]))
    assert failed in [(v["before"] + v["answer"] + v["after"], v["answer"])
                      for name, v, _ in again.calls if name == "question"]


def test_a_later_wave_cut_short_is_finished_as_the_same_wave(clean, kb_store):
    """A crash on one of the last question calls (a later wave, after items were verified and
    composed): the resumed run finishes that wave first and ends as an uninterrupted run did."""
    expected, clean_calls = clean
    late = clean_calls["question"] - 1
    with pytest.raises(Boom):
        run_generate(kb_store, ScriptedLLM(failing_at("question", late, Boom("injected"))),
                     GenerateOptions(n=10))
    assert kb_store.query("SELECT count(*) AS n FROM candidates WHERE verdict = 'passed'")[0]["n"]
    run_generate(kb_store, ScriptedLLM(ideal), GenerateOptions(n=10))
    assert snapshot(kb_store) == expected


def test_waves_stay_small_until_an_item_is_verified(kb_store):
    """With the embedded model a wave writes all its questions before it reads any; so while
    nothing is verified every wave is as small as the first, and once an item is verified
    waves grow."""
    seen: Counter = Counter()

    def respond(name, v, role):
        if name == "question":
            seen[name] += 1
            if seen[name] <= 5:  # the first five questions hold their answer: the form fails them
                return {"questions": [f"What is {v['answer']}?"]}
        return ideal(name, v, role)

    local = ScriptedLLM(respond)
    local.local = True
    run_generate(kb_store, local, GenerateOptions(n=12, types=["single_hop"]))
    waves = sorted(done_infos(kb_store, "wave"), key=lambda i: i["index"])
    sizes = [len(w["spans"]) for w in waves]
    asked = [sum(sizes[:i + 1]) for i in range(len(sizes))]
    passing = next(i for i, total in enumerate(asked) if total >= 6)  # the wave of the 6th
    assert set(sizes[:passing + 1]) == {FIRST_WAVE} and sizes[passing + 1] > FIRST_WAVE, sizes
