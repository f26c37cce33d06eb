"""Each evolution's checks reject what they must; LLM verdicts gate only on negatives."""

from __future__ import annotations

import asyncio
import re

import pytest

from builder.generate.context import RunContext
from builder.generate.models import GenerateOptions
from builder.generate.runner import run_generate
from builder.generate.checks import code_checks
from builder.generate.verify import (
    MAX_BATCH_CHUNKS, MAX_BATCH_ITEMS, grounded_batches, verify_key, verify_pending,
)
from builder.llm.types import LLMResult
from builder.store import candidates as cstore
from builder.store.candidates import load_candidates
from builder.store.documents import chunks_by_id

from tests.fakes import ScriptedLLM
from tests.support.scripted_kb import build_kb, ideal


def with_overrides(**over):
    def respond(name, v, role):
        if name in over:
            return over[name](v)
        return ideal(name, v, role)
    return respond


def only(store, llm, types, n=2):
    run_generate(store, llm, GenerateOptions(n=n, types=types, max_rounds=1))
    return [c for c in load_candidates(store) if c["type"] in types]


def test_multi_hop_answerable_from_one_chunk_is_rejected(kb_store):
    store = kb_store
    # names the bridge and asks what fact B alone says: one chunk answers it
    llm = ScriptedLLM(with_overrides(evolve_multi_hop=lambda v: {
        "question": f"What does {v['bridge']} offer: {v['fact_b']}", "answer": v["fact_b"]}))
    cands = only(store, llm, ["multi_hop"], n=1)
    assert cands and all(c["verdict"] == "failed" for c in cands)
    reasons = " ".join(r for c in cands for r in c["rejection_reasons"])
    assert "hops_needed" in reasons and "bridge_not_named" in reasons
    assert not any(name == "verify_multi_hop" for name, _, _ in llm.calls)  # code gated first


def test_multi_hop_llm_says_one_passage_suffices(kb_store):
    store = kb_store
    llm = ScriptedLLM(with_overrides(verify_multi_hop=lambda v: {
        "answerable": True, "single_passage_answers": [2], "reason": "passage 2 is enough"}))
    cands = only(store, llm, ["multi_hop"], n=1)
    assert cands[0]["verdict"] == "failed"
    assert any(r.startswith("llm_hops_needed") for r in cands[0]["rejection_reasons"])


def test_unanswerable_answered_by_the_kb_is_rejected(kb_store):
    store = kb_store
    answered = "How much does the Gold membership cost per year?"
    llm = ScriptedLLM(with_overrides(evolve_unanswerable_topics=lambda v: {"questions": [answered]}))
    assert only(store, llm, ["unanswerable"], n=1) == []  # screened out: never a candidate
    # verification rejects it as well (the check runs on every unanswerable candidate)
    cand = {"type": "unanswerable", "question": answered, "answer": "Not known.",
            "language": "en", "evidence": [], "chunk_ids": []}
    failed = [c["check"] for c in code_checks(store, cand, [], {}) if c["passed"] is False]
    assert failed == ["kb_does_not_answer"]


NEAR_MISS = "Do you offer gift wrapping for Gold membership orders?"  # shares terms with m1


def test_unanswerable_with_no_matching_chunk_needs_no_llm_check(kb_store):
    store = kb_store
    llm = ScriptedLLM(with_overrides(evolve_unanswerable_topics=lambda v: {
        "questions": ["Do you sell bicycles?"]}))
    [cand] = only(store, llm, ["unanswerable"], n=1)
    assert cand["verdict"] == "passed"
    assert not any(name == "verify_unanswerable" for name, _, _ in llm.calls)


def test_unanswerable_llm_answered_gates_only_with_a_real_quote(tmp_path, kb_store):
    store = kb_store
    llm = ScriptedLLM(with_overrides(
        evolve_unanswerable_topics=lambda v: {"questions": [NEAR_MISS]},
        verify_unanswerable=lambda v: {
            "answered": True, "passage": 1, "quote": "made-up words", "reason": "yes"}))
    cands = only(store, llm, ["unanswerable"], n=1)
    assert cands[0]["verdict"] == "passed"  # a bare "answered" is recorded, not trusted
    llm_check = next(v for v in cands[0]["verification"] if v["source"] == "llm")
    assert llm_check["passed"] is None and llm_check["gate"] is False

    store2 = build_kb(tmp_path / "g2.db")
    quote = lambda v: {"answered": True, "passage": 1,
                       "quote": v["passages"].split("\n")[1][:40], "reason": "stated"}
    cands = only(store2, ScriptedLLM(with_overrides(
        evolve_unanswerable_topics=lambda v: {"questions": [NEAR_MISS]}, verify_unanswerable=quote)),
        ["unanswerable"], n=1)
    assert cands[0]["verdict"] == "failed"


def test_grounded_llm_negative_gates(kb_store):
    store = kb_store
    llm = ScriptedLLM(with_overrides(verify_grounded=lambda v: {"items": [
        {"item": int(n), "answerable": True, "unsupported_claims": [answer]}
        for n, answer in re.findall(r'<item number="(\d+)">\n.*\nReference answer: (.*)\n',
                                    v["items"])]}))
    cands = only(store, llm, ["single_hop"], n=1)
    assert cands[0]["verdict"] == "failed"
    assert any(r.startswith("llm_claims_supported") for r in cands[0]["rejection_reasons"])


def test_unsupported_claim_from_elsewhere_does_not_gate(kb_store):
    """The 0.5B, judging several items at once, names claims of other items or passages."""
    store = kb_store
    llm = ScriptedLLM(with_overrides(verify_grounded=lambda v: {"items": [
        {"item": int(n), "answerable": True, "unsupported_claims": ["the paper or emailed receipt"]}
        for n in re.findall(r'<item number="(\d+)">', v["items"])]}))
    cands = only(store, llm, ["single_hop"], n=1)
    assert cands[0]["verdict"] == "passed"
    stray = [c for c in cands[0]["verification"] if c["passed"] is None]
    assert stray and stray[0]["gate"] is False and "ignored" in stray[0]["reason"]


def test_temporal_answer_with_old_value_is_rejected(kb_store):
    store = kb_store
    llm = ScriptedLLM(with_overrides(evolve_temporal=lambda v: {
        "question": "What is the current rule for this at Northwind?", "answer": v["older_fact"]}))
    cands = only(store, llm, ["temporal"], n=1)
    assert cands[0]["verdict"] == "failed"
    assert "uses_newer_value: answer uses the older value" in cands[0]["rejection_reasons"]


def test_ambiguous_and_context_phrases(kb_store):
    store = kb_store
    llm = ScriptedLLM(with_overrides(
        evolve_ambiguous=lambda v: {"question": f"Is {v['entity_a']} dearer than {v['entity_b']}?",
                                    "answer": v["fact_a"]},
        questions=lambda v: {"question": "According to the text, what is stated?",
                             "answer": v["fact"]}))
    cands = only(store, llm, ["ambiguous", "single_hop"], n=4)
    amb = [c for c in cands if c["type"] == "ambiguous"]
    assert amb and amb[0]["verdict"] == "failed"
    reasons = " ".join(amb[0]["rejection_reasons"])
    assert "question_underspecified" in reasons  # code wrote the answer: both readings named
    assert amb[0]["answer"].startswith("It depends on which one you mean.")
    single = [c for c in cands if c["type"] == "single_hop"]
    assert single and all(any(r.startswith("no_context_phrases") for r in c["rejection_reasons"])
                          for c in single)


def test_fabricated_evidence_span_is_rejected(kb_store):
    store = kb_store
    cand = {"id": "x", "type": "single_hop", "language": "en",
            "question": "How long does Northwind accept returns?", "answer": "90 days",
            "chunk_ids": ["r25"], "fact_ids": [],
            "evidence": [{"chunk_id": "r25", "quote": "Northwind accepts returns within 90 days",
                          "start": 0, "end": 10}]}
    checks = {c["check"]: c for c in code_checks(store, cand, [], chunks_by_id(store, ["r25"]))}
    assert checks["evidence_in_chunk"]["passed"] is False
    cand["evidence"][0]["quote"] = "northwind accepts returns within 45 days"  # case differs: fine
    cand["answer"] = "45 days"
    checks = {c["check"]: c for c in code_checks(store, cand, [], chunks_by_id(store, ["r25"]))}
    assert all(c["passed"] for c in checks.values()), checks


# ---------------------------------------------------------------- batched grounded verification
# Candidates built by hand on the test KB (all pass the code checks unless said otherwise), so
# each test knows exactly which batches the verifier must see.

SHIPPING = [  # three single-hop candidates citing chunk s1
    ("How much does express shipping cost?", "Express shipping costs $15.", "Express shipping costs $15"),
    ("How much does standard delivery cost?", "Standard shipping costs $6.", "Standard shipping costs $6"),
    ("How fast is standard delivery?", "It arrives in 5 days.", "Standard shipping costs $6 and arrives in 5 days"),
]


def grounded_cand(cid, chunk, question, answer, quote, ctype="single_hop"):
    return {"id": cid, "type": ctype, "question": question, "answer": answer, "language": "en",
            "chunk_ids": [chunk], "fact_ids": [], "verdict": "pending",
            "evidence": [{"chunk_id": chunk, "quote": quote, "start": 0, "end": len(quote)}]}


def shipping_cands():
    return [grounded_cand(f"c{i}", "s1", q, a, e) for i, (q, a, e) in enumerate(SHIPPING, 1)]


def verify(store, llm, cands):
    """Insert `cands` as pending candidates and run the verification stage on them."""
    cstore.record_candidates(store, [dict(c) for c in cands], stage="test", key="seed", info={})
    ctx = RunContext.create(store, llm, GenerateOptions())
    asyncio.run(verify_pending(ctx, cands, {}))
    return {c["id"]: c for c in load_candidates(store)}


def replying(items_for):
    """A scripted verifier whose verify_grounded reply is `items_for(item numbers)`."""
    def respond(name, v, role):
        if name == "verify_grounded":
            numbers = [int(n) for n in re.findall(r'<item number="(\d+)">', v["items"])]
            return items_for(numbers)
        return ideal(name, v, role)
    return respond


def grounded_calls(llm):
    return [v for name, v, role in llm.calls if name == "verify_grounded" and role == "verifier"]


def test_one_call_judges_three_candidates_on_one_chunk(kb_store):
    store = kb_store
    llm = ScriptedLLM(ideal)
    got = verify(store, llm, shipping_cands())
    [call] = grounded_calls(llm)
    assert call["passages"].count("<passage ") == 1 and "Express shipping costs $15" in call["passages"]
    assert re.findall(r'<item number="(\d+)">', call["items"]) == ["1", "2", "3"]
    for cid in ("c1", "c2", "c3"):
        checks = {c["check"]: c for c in got[cid]["verification"]}
        assert got[cid]["verdict"] == "passed"
        assert checks["llm_answerable"]["passed"] is True and checks["llm_answerable"]["source"] == "llm"
        assert checks["llm_claims_supported"]["passed"] is True
    done = {r["key"] for r in store.query("SELECT key FROM stage_done WHERE stage = 'verify'")}
    ctx = RunContext.create(store, llm, GenerateOptions())
    assert done == {verify_key(ctx, c) for c in shipping_cands()}


def test_unsupported_claim_on_item_2_rejects_only_item_2(kb_store):
    store = kb_store
    llm = ScriptedLLM(replying(lambda ns: {"items": [
        {"item": n, "answerable": True, "unsupported_claims": ["costs $6"] if n == 2 else []}
        for n in ns]}))
    got = verify(store, llm, shipping_cands())
    assert len(grounded_calls(llm)) == 1
    assert got["c1"]["verdict"] == "passed" and got["c3"]["verdict"] == "passed"
    assert got["c2"]["verdict"] == "failed"
    assert got["c2"]["rejection_reasons"] == ["llm_claims_supported: verifier: unsupported claim 'costs $6'"]


def test_not_answerable_gates_its_item(kb_store):
    store = kb_store
    llm = ScriptedLLM(replying(lambda ns: {"items": [
        {"item": n, "answerable": n != 3, "reason": "not stated" if n == 3 else ""} for n in ns]}))
    got = verify(store, llm, shipping_cands())
    assert [got[c]["verdict"] for c in ("c1", "c2", "c3")] == ["passed", "passed", "failed"]
    assert got["c3"]["rejection_reasons"] == ["llm_answerable: verifier: not stated"]


def test_missing_repeated_and_out_of_range_items_do_not_gate(kb_store):
    store = kb_store
    # item 2 left out; item 1 given twice (the first verdict counts); item 9 does not exist
    llm = ScriptedLLM(replying(lambda ns: {"items": [
        {"item": 1, "answerable": True}, {"item": 1, "answerable": False, "reason": "dup"},
        {"item": 3, "answerable": True}, {"item": 9, "answerable": False}]}))
    got = verify(store, llm, shipping_cands())
    assert all(got[c]["verdict"] == "passed" for c in ("c1", "c2", "c3"))
    [missing] = [c for c in got["c2"]["verification"] if c["source"] == "llm"]
    assert missing == {"check": "llm_answerable", "passed": None, "gate": False, "source": "llm",
                       "reason": "verifier gave no verdict for this item", "model": "scripted-model"}
    assert {c["check"]: c["passed"] for c in got["c1"]["verification"]}["llm_answerable"] is True


def test_failed_call_gates_none_of_its_batch(kb_store):
    store = kb_store
    llm = ScriptedLLM(replying(lambda ns: LLMResult(None, "error", error="server down")))
    got = verify(store, llm, shipping_cands())
    assert len(grounded_calls(llm)) == 1
    for cid in ("c1", "c2", "c3"):
        assert got[cid]["verdict"] == "passed"
        [failed] = [c for c in got[cid]["verification"] if c["source"] == "llm"]
        assert failed["passed"] is None and failed["gate"] is False
        assert failed["reason"] == "verifier call failed (error)"


def test_code_check_failures_get_no_call(kb_store):
    store = kb_store
    cands = shipping_cands()
    cands[1]["evidence"][0]["quote"] = "Standard shipping costs $9"  # not in the chunk
    cands[1]["answer"] = "Standard shipping costs $9."
    llm = ScriptedLLM(ideal)
    got = verify(store, llm, cands)
    [call] = grounded_calls(llm)
    assert "$9" not in call["items"] and len(re.findall(r"<item ", call["items"])) == 2
    assert got["c2"]["verdict"] == "failed"
    assert not [c for c in got["c2"]["verification"] if c["source"] == "llm"]
    assert got["c1"]["verdict"] == got["c3"]["verdict"] == "passed"


def test_batches_hold_at_most_three_chunks_and_four_items():
    chunks = {k: {"id": k, "text": k} for k in "abcdefg"}
    mk = lambda cid, cited: {"id": cid, "chunk_ids": cited}
    ids = lambda batches: [[c["id"] for c in b] for b in batches]
    # five candidates on one chunk: 4 + 1
    assert ids(grounded_batches([mk(f"x{i}", ["a"]) for i in range(5)], chunks)) == \
        [["x0", "x1", "x2", "x3"], ["x4"]]
    # one chunk each: a fourth distinct chunk opens a new batch
    one_each = [mk("p", ["a"]), mk("q", ["b"]), mk("r", ["c"]), mk("s", ["d"])]
    assert ids(grounded_batches(one_each, chunks)) == [["p", "q", "r"], ["s"]]
    # two chunks each: the union would be 4 -> split; a 4-chunk candidate gets a batch alone
    cands = [mk("m", ["c", "d"]), mk("n", ["a", "b"]), mk("o", ["d", "e", "f", "g"]), mk("t", ["b", "a"])]
    batches = grounded_batches(cands, chunks)
    assert ids(batches) == [["n", "t"], ["m"], ["o"]]
    for b in batches[:2]:
        assert len({k for c in b for k in c["chunk_ids"]}) <= MAX_BATCH_CHUNKS
    assert (MAX_BATCH_CHUNKS, MAX_BATCH_ITEMS) == (3, 4)


def test_batches_and_prompts_are_deterministic(tmp_path):
    cands = shipping_cands() + [
        grounded_cand("c4", "m2", "What does the Basic membership cost?", "The Basic membership costs $19 per year.",
                      "The Basic membership costs $19 per year"),
        grounded_cand("c5", "r25", "How long does Northwind take returns?", "Returns are accepted within 45 days.",
                      "Northwind accepts returns within 45 days of purchase"),
        grounded_cand("c6", "j1", "What warranty does the Summit jacket have?",
                      "A lifetime warranty against manufacturing defects.",
                      "The Summit jacket has a lifetime warranty against manufacturing defects"),
    ]
    runs = []
    for i, order in enumerate([cands, list(reversed(cands))]):
        llm = ScriptedLLM(ideal)
        verify(build_kb(tmp_path / f"g{i}.db"), llm, [dict(c) for c in order])
        runs.append(sorted((v["passages"], v["items"]) for v in grounded_calls(llm)))
    assert runs[0] == runs[1]
    assert len(runs[0]) == 2  # 6 candidates on 4 chunks: [j1 + m2 + r25], then s1 x 3
    chunks = chunks_by_id(build_kb(tmp_path / "g9.db"), ["s1", "m2", "r25", "j1"])
    assert ([[c["id"] for c in b] for b in grounded_batches(cands, chunks)]
            == [["c6", "c4", "c5"], ["c1", "c2", "c3"]])


def test_a_batch_is_written_in_one_transaction(kb_store):
    store = kb_store
    cstore.record_candidates(store, shipping_cands(), stage="test", key="seed", info={})
    good = {"candidate_id": "c1", "verification": [], "verdict": "passed", "rejection_reasons": [],
            "key": "k1"}
    bad = dict(good, candidate_id="c2", key="k2", verification=[object()])  # not JSON: fails
    with pytest.raises(TypeError):
        cstore.record_verifications(store, [good, bad], stage="verify")
    assert {c["verdict"] for c in load_candidates(store)} == {"pending"}
    assert not store.query("SELECT key FROM stage_done WHERE stage = 'verify'")
