"""Each evolution's checks reject what they must; LLM verdicts gate only on negatives."""

from __future__ import annotations

from builder.generate.models import GenerateOptions
from builder.generate.runner import run_generate
from builder.generate.verify import code_checks
from builder.store.candidates import load_candidates
from builder.store.documents import chunks_by_id

from tests.fakes import ScriptedLLM
from tests.test_generate_support import build_kb, ideal


def with_overrides(**over):
    def respond(name, v, role):
        if name in over:
            return over[name](v)
        return ideal(name, v, role)
    return respond


def only(store, llm, types, n=2):
    run_generate(store, llm, GenerateOptions(n=n, types=types, max_rounds=1))
    return [c for c in load_candidates(store) if c["type"] in types]


def test_multi_hop_answerable_from_one_chunk_is_rejected(tmp_path):
    store = build_kb(tmp_path / "g.db")
    # names the bridge and asks what fact B alone says: one chunk answers it
    llm = ScriptedLLM(with_overrides(evolve_multi_hop=lambda v: {
        "question": f"What does {v['bridge']} offer: {v['fact_b']}", "answer": v["fact_b"]}))
    cands = only(store, llm, ["multi_hop"], n=1)
    assert cands and all(c["verdict"] == "failed" for c in cands)
    reasons = " ".join(r for c in cands for r in c["rejection_reasons"])
    assert "hops_needed" in reasons and "bridge_not_named" in reasons
    assert not any(name == "verify_multi_hop" for name, _, _ in llm.calls)  # code gated first


def test_multi_hop_llm_says_one_passage_suffices(tmp_path):
    store = build_kb(tmp_path / "g.db")
    llm = ScriptedLLM(with_overrides(verify_multi_hop=lambda v: {
        "answerable": True, "single_passage_answers": [2], "reason": "passage 2 is enough"}))
    cands = only(store, llm, ["multi_hop"], n=1)
    assert cands[0]["verdict"] == "failed"
    assert any(r.startswith("llm_hops_needed") for r in cands[0]["rejection_reasons"])


def test_unanswerable_answered_by_the_kb_is_rejected(tmp_path):
    store = build_kb(tmp_path / "g.db")
    llm = ScriptedLLM(with_overrides(evolve_unanswerable=lambda v: {
        "question": "How much does the Gold membership cost per year?"}))
    cands = only(store, llm, ["unanswerable"], n=1)
    assert cands[0]["verdict"] == "failed"
    assert any(r.startswith("kb_does_not_answer") for r in cands[0]["rejection_reasons"])


def test_unanswerable_llm_answered_gates_only_with_a_real_quote(tmp_path):
    store = build_kb(tmp_path / "g.db")
    llm = ScriptedLLM(with_overrides(verify_unanswerable=lambda v: {
        "answered": True, "passage": 1, "quote": "made-up words", "reason": "yes"}))
    cands = only(store, llm, ["unanswerable"], n=1)
    assert cands[0]["verdict"] == "passed"  # a bare "answered" is recorded, not trusted
    llm_check = next(v for v in cands[0]["verification"] if v["source"] == "llm")
    assert llm_check["passed"] is None and llm_check["gate"] is False

    store2 = build_kb(tmp_path / "g2.db")
    quote = lambda v: {"answered": True, "passage": 1,
                       "quote": v["passages"].split("\n")[1][:40], "reason": "stated"}
    cands = only(store2, ScriptedLLM(with_overrides(verify_unanswerable=quote)), ["unanswerable"], n=1)
    assert cands[0]["verdict"] == "failed"


def test_grounded_llm_negative_gates(tmp_path):
    store = build_kb(tmp_path / "g.db")
    llm = ScriptedLLM(with_overrides(verify_grounded=lambda v: {
        "answerable": True, "claims": [{"claim": "x", "supported": False, "quote": ""}]}))
    cands = only(store, llm, ["single_hop"], n=1)
    assert cands[0]["verdict"] == "failed"
    assert any(r.startswith("llm_claims_supported") for r in cands[0]["rejection_reasons"])


def test_temporal_answer_with_old_value_is_rejected(tmp_path):
    store = build_kb(tmp_path / "g.db")
    llm = ScriptedLLM(with_overrides(evolve_temporal=lambda v: {
        "question": "What is the current rule for this at Northwind?", "answer": v["older_fact"]}))
    cands = only(store, llm, ["temporal"], n=1)
    assert cands[0]["verdict"] == "failed"
    assert "uses_newer_value: answer uses the older value" in cands[0]["rejection_reasons"]


def test_ambiguous_and_context_phrases(tmp_path):
    store = build_kb(tmp_path / "g.db")
    llm = ScriptedLLM(with_overrides(
        evolve_ambiguous=lambda v: {"question": f"How much does the {v['entity_a']} cost?",
                                    "answer": v["fact_a"]},
        questions=lambda v: {"questions": [{"fact": 1, "question": "According to the text, what is stated?",
                                            "answer": v["facts"].splitlines()[0][3:]}]}))
    cands = only(store, llm, ["ambiguous", "single_hop"], n=4)
    amb = [c for c in cands if c["type"] == "ambiguous"]
    assert amb and amb[0]["verdict"] == "failed"
    reasons = " ".join(amb[0]["rejection_reasons"])
    assert "question_underspecified" in reasons and "names_both_readings" in reasons
    single = [c for c in cands if c["type"] == "single_hop"]
    assert single and all(any(r.startswith("no_context_phrases") for r in c["rejection_reasons"])
                          for c in single)


def test_fabricated_evidence_span_is_rejected(tmp_path):
    store = build_kb(tmp_path / "g.db")
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
