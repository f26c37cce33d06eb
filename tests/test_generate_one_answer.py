"""A question written twice, from two passages, with two different answers does not pin its
subject down: both items are rejected after verification ("Which file can you add to customise
your site?" -> publish.css, and again -> publish.js; Obsidian's Spanish help, issue 12)."""

from __future__ import annotations

from builder.generate import dedup
from builder.generate.context import RunContext
from builder.generate.models import GenerateOptions
from builder.generate.verify import reject_other_answers
from builder.store import candidates as cstore
from builder.store.candidates import load_candidates

from tests.fakes import ScriptedLLM
from tests.support.planted import _cand, _fact, build


def _passed(store, cands):
    cstore.record_candidates(store, cands, stage="t", key="t", info={})
    cstore.record_verifications(store, [
        {"candidate_id": c["id"], "verification": [{"check": "round_trip", "passed": True,
                                                    "reason": "", "source": "llm", "model": "m",
                                                    "gate": True}],
         "verdict": "passed", "rejection_reasons": [], "key": f"k:{c['id']}"} for c in cands],
        stage="verify")


def test_the_same_question_with_two_answers_from_two_passages_is_rejected(tmp_path):
    store = build(tmp_path / "g.db")
    holiday = _fact(store, "holiday.md#0", "25 days")
    paid = _fact(store, "expenses.md#0", "end of each month")
    carry = _fact(store, "holiday.md#0", "carry over")
    question = "How long is it?"
    one = _cand(store, "single_hop", question, "25 days", [holiday])
    two = _cand(store, "single_hop", question + " ", "at the end of each month", [paid])
    alone = _cand(store, "single_hop", "How many unused days carry over?", "up to 5 days", [carry])
    _passed(store, [one, two, alone])
    ctx = RunContext.create(store, ScriptedLLM(lambda *a: {}), GenerateOptions())
    assert reject_other_answers(ctx, load_candidates(store)) == 2
    got = {c["id"]: c for c in load_candidates(store)}
    for c in (one, two):
        assert got[c["id"]]["verdict"] == "failed"
        assert got[c["id"]]["rejection_reasons"][0].startswith("one_answer")
        assert [v["check"] for v in got[c["id"]]["verification"]] == ["round_trip", "one_answer"]
    assert got[alone["id"]]["verdict"] == "passed"
    assert reject_other_answers(ctx, load_candidates(store)) == 0  # nothing passed is left to fail


def test_same_answer_or_same_fact_is_not_a_conflict():
    base = {"type": "single_hop", "verdict": "passed", "question": "Which file styles the site?"}
    a = dict(base, id="a", answer="publish.css", chunk_ids=["c1"], fact_ids=["f1"])
    same_answer = dict(base, id="b", answer="publish.css", chunk_ids=["c2"], fact_ids=["f2"])
    same_fact = dict(base, id="c", answer="the publish.css file", chunk_ids=["c1"], fact_ids=["f1"])
    assert dedup.other_answers([a, same_answer, same_fact]) == {}
    # two list items of one chunk are two facts: a conflict
    sibling = dict(base, id="s", answer="publish.js", chunk_ids=["c1"], fact_ids=["f9"])
    assert set(dedup.other_answers([a, sibling])) == {"a", "s"}
    other = dict(base, id="d", answer="publish.js", chunk_ids=["c3"])
    decided = dict(base, id="e", answer="theme.css", chunk_ids=["c4"], status="accepted")
    got = dedup.other_answers([a, other, decided])
    assert set(got) == {"a", "d"}  # a reviewer's decision is never overturned
    failed = dict(other, verdict="failed")
    assert dedup.other_answers([a, failed]) == {}
