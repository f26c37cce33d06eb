"""Planted bad candidates (issue 12): every one is rejected, by the check meant to catch it,
while right items of the same shapes pass. The verifier is a scripted honest reader: it answers
each question from the passages it is shown, as a careful model would."""

from __future__ import annotations

import asyncio

from builder.generate.checks import CHECKS
from builder.generate.context import RunContext
from builder.generate.models import GenerateOptions
from builder.generate.verify import verify_pending
from builder.store.candidates import load_candidates, load_facts

from tests.fakes import ScriptedLLM
from tests.support.planted import build, good, honest_reader, planted


def _verify(store, llm):
    ctx = RunContext.create(store, llm, GenerateOptions())
    facts = {f["id"]: f for f in load_facts(store)}
    asyncio.run(verify_pending(ctx, load_candidates(store), facts))
    return {c["id"]: c for c in load_candidates(store)}


def test_every_planted_bad_candidate_is_rejected_by_its_check(tmp_path):
    store = build(tmp_path / "g.db")
    bad = planted(store)
    right = good(store)
    llm = ScriptedLLM(honest_reader)
    verdicts = _verify(store, llm)
    for what, cand, checks in bad:
        got = verdicts[cand["id"]]
        failed = {r.split(":")[0] for r in got["rejection_reasons"]}
        assert got["verdict"] == "failed", f"{what} passed: {got['question']!r}"
        assert failed & checks, f"{what}: rejected by {failed}, expected one of {checks}"
    for cand in right:
        got = verdicts[cand["id"]]
        assert got["verdict"] == "passed", (got["question"], got["rejection_reasons"])
    # a failed code check spares the reader; each right item was read (round trips recorded)
    asked = {v["question"] for _, v, _ in llm.calls}
    assert "How many days of holiday does dxw offer each year?" not in asked
    assert all(any(c["source"] == "llm" for c in verdicts[r["id"]]["verification"])
               for r in right)


def test_a_reader_that_agrees_with_everything_still_cannot_pass_the_code_caught_faults(tmp_path):
    """A verifier that echoes the reference back (the weak-verifier failure) is no help to
    the faults code catches; the round trip only adds to them."""
    store = build(tmp_path / "g.db")
    bad = planted(store)
    refs = {c["question"]: c["answer"] for _, c, _ in bad}

    def yes_man(name, v, role):
        return {"passage": 1, "answer": refs.get(v["question"], "")}

    verdicts = _verify(store, ScriptedLLM(yes_man))
    code_checks = {run.__name__ for _, run in CHECKS}
    code_caught = [(w, c) for w, c, checks in bad if checks <= code_checks]
    assert len(code_caught) >= 5
    for what, cand in code_caught:
        assert verdicts[cand["id"]]["verdict"] == "failed", what
