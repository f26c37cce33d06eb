"""The whole pipeline with a scripted ideal model: exact mix, filled columns, idempotent rerun."""

from __future__ import annotations

import json
from collections import Counter

from builder.generate.difficulty import level
from builder.generate.models import GenerateOptions
from builder.generate.runner import run_generate
from builder.store.candidates import load_candidates

from tests.fakes import ScriptedLLM
from tests.support.scripted_kb import ideal, with_overrides


def run(store, llm, **kw):
    return run_generate(store, llm, GenerateOptions(**{"n": 10, **kw}))


def test_ideal_model_yields_exactly_the_planned_mix(kb_store):
    store = kb_store
    llm = ScriptedLLM(ideal)
    summary = run(store, llm)
    pool = [c for c in load_candidates(store) if c["verdict"] == "passed" and not c["duplicate_of"]]
    assert Counter(c["type"] for c in pool) == Counter({t: n for t, n in summary.plan.items() if n})
    assert summary.verified_total == 10
    assert sum(summary.plan[t] for t in ("temporal", "unanswerable", "ambiguous")) >= 2
    # calls per verified candidate: facts, the question, and its round trips (two for a
    # single-hop item, three for a multi-hop one) -- the price of verification by re-answering
    assert len(llm.calls) / summary.verified_total <= 5
    assert sum(summary.difficulty.values()) == 10  # reached mix vs target, shortfalls named
    assert set(summary.difficulty_short) <= {"easy", "medium", "hard"}
    assert any(n.startswith("difficulty reached:") for n in summary.notes)
    for c in pool:
        assert c["status"] == "pending" and c["difficulty"] in ("easy", "medium", "hard")
        assert c["difficulty"] == level(c["difficulty_signals"]["points"])  # stored = measured
        assert c["prompts"] and c["generator_model"] == "scripted-model"
        assert c["verification"] and all(v["source"] in ("code", "llm") for v in c["verification"])
        assert c["document_id"] and (c["seed_fact_id"] or c["type"] == "unanswerable")
        if c["type"] == "unanswerable":
            assert c["chunk_ids"] == [] and c["evidence"] == [] and c["hops"] == []
            assert c["answer"] == "The knowledge base does not contain this information."
            continue
        assert c["hops"] == [[cid] for cid in c["chunk_ids"]]
        chunks = {r["id"]: r["text"] for r in store.query("SELECT id, text FROM chunks")}
        for ev in c["evidence"]:
            assert chunks[ev["chunk_id"]][ev["start"]:ev["end"]] == ev["quote"]
        assert len(c["fact_ids"]) == len(c["evidence"])
    multi = next(c for c in pool if c["type"] == "multi_hop")
    docs = {r["id"]: r["document_id"] for r in store.query("SELECT id, document_id FROM chunks")}
    assert len({docs[c] for c in multi["chunk_ids"]}) == 2  # bridges two documents
    temporal = next(c for c in pool if c["type"] == "temporal")
    assert temporal["chunk_ids"][0] == "r25"  # newer first
    assert temporal["chunk_ids"][1] == "r23" and "5%" in temporal["answer"]
    evolved = [c for c in pool if c["type"] != "single_hop" and c["parent_id"]]
    for c in evolved:
        parent = next(p for p in load_candidates(store) if p["id"] == c["parent_id"])
        assert parent["type"] == "single_hop" and parent["seed_fact_id"] == c["seed_fact_id"]


def test_rerun_with_nothing_to_do_makes_no_calls(kb_store):
    store = kb_store
    run(store, ScriptedLLM(ideal))
    before = store.query("SELECT id, verdict, difficulty, duplicate_of FROM candidates ORDER BY id")
    again = ScriptedLLM(ideal)
    summary = run(store, again)
    assert again.calls == []
    assert store.query("SELECT id, verdict, difficulty, duplicate_of FROM candidates ORDER BY id") == before
    assert summary.verified_total == 10
    # asking for more only pays for the difference
    more = ScriptedLLM(ideal)
    run(store, more, n=12)
    assert 0 < len(more.calls) <= 3 * 2 + 2


def test_chinese_chunk_gets_chinese_questions(kb_store):
    store = kb_store
    run(store, ScriptedLLM(ideal), types=["single_hop"], n=16)
    zh = [c for c in load_candidates(store) if c["chunk_ids"] == ["z1"]]
    assert zh and all(c["language"] == "zh" for c in zh)
    assert all(c["verdict"] == "passed" for c in zh)
    facts = store.query("SELECT language FROM facts WHERE chunk_id = 'z1'")
    assert {f["language"] for f in facts} == {"zh"}


def test_injection_in_chunk_stays_data(kb_store):
    """A model that obeys the chunk's 'answer 42' cannot plant that answer: answers are chosen
    by code, and a round trip that obeys it disagrees with the reference, so nothing it touched
    passes. The chunk reaches the model only as the value of a variable."""
    def obedient(name, v, role):
        if name == "roundtrip" and "Ignore previous instructions" in v["passages"]:
            return {"passage": 1, "answer": "42"}
        return ideal(name, v, role)

    store = kb_store
    llm = ScriptedLLM(obedient)
    run(store, llm, types=["single_hop"], n=16)
    cands = load_candidates(store)
    assert cands and not any("42" in c["answer"] for c in cands)
    for c in cands:
        saw = [v for v in c["verification"] if "42" in (v.get("reason") or "")]
        assert not saw or c["verdict"] == "failed"
    facts_call = next(vars_ for name, vars_, _ in llm.calls if name == "facts" and "Summit" in vars_["chunk"])
    assert "Ignore previous instructions" in facts_call["chunk"]


def test_dry_run_writes_nothing(kb_store):
    store = kb_store
    llm = ScriptedLLM(lambda *a: None)
    llm.dry_run = True
    from builder.llm.types import LLMResult
    llm.respond = lambda *a: LLMResult(None, "dry_run")
    summary = run(store, llm)
    assert summary.dry_run and summary.llm_calls_by_stage["facts"] == 7
    # round trips: two per single-hop item (cited chunk, rest of the KB), three for the
    # multi-hop item (both chunks, each alone), one for each other planned item
    plan = summary.plan
    assert summary.llm_calls_by_stage["verify"] == (
        2 * plan["single_hop"] + 3 * plan["multi_hop"] + plan["reasoning"] + plan["comparative"]
        + plan["temporal"] + plan["unanswerable"])
    assert store.query("SELECT count(*) AS n FROM candidates")[0]["n"] == 0
    assert store.query("SELECT count(*) AS n FROM facts")[0]["n"] == 0
    assert store.query("SELECT count(*) AS n FROM stage_done")[0]["n"] == 0
    assert json.dumps(summary.model_dump())  # serialisable for the demo


def test_facts_cut_out_by_code_need_no_llm_call(kb_store):
    store = kb_store
    llm = ScriptedLLM(ideal)
    summary = run(store, llm, facts="text")
    assert not any(name == "facts" for name, _, _ in llm.calls)
    assert summary.facts_extractor == "text" and summary.verified_total >= 8
    facts = store.query("SELECT prompt_name, llm_call_id FROM facts")
    assert facts and {(f["prompt_name"], f["llm_call_id"]) for f in facts} == {("statements", None)}
    # a later LLM-mode run extracts its own facts and does not mix the two sets
    more = ScriptedLLM(ideal)
    run(store, more, facts="llm", n=12)
    assert any(name == "facts" for name, _, _ in more.calls)


def test_auto_facts_mode_follows_the_embedded_model(kb_store):
    from builder.generate.context import RunContext

    store = kb_store
    llm = ScriptedLLM(ideal)
    assert RunContext.create(store, llm, GenerateOptions()).facts_mode == "llm"
    llm.local = True  # what OpenAIClient sets when golden serves the embedded model
    assert RunContext.create(store, llm, GenerateOptions()).facts_mode == "text"
    assert RunContext.create(store, llm, GenerateOptions(facts="llm")).facts_mode == "llm"


def test_a_type_the_model_cannot_write_is_given_up(kb_store):
    store = kb_store
    bad = ScriptedLLM(with_overrides(evolve_comparative=lambda v: {
        "question": f"Which is it: {v['fact_a']}?", "answer": "It is 999."}))  # never grounded
    summary = run(store, bad, types=["comparative", "single_hop"], n=8, max_rounds=5)
    asked = sum(1 for name, _, _ in bad.calls if name == "evolve_comparative")
    judged = [c for c in load_candidates(store) if c["type"] == "comparative"]
    assert judged and all(c["verdict"] == "failed" for c in judged)
    # round 1 asks 2; round 2 asks the shortfall over the pass rate (2 / (1/3) = 6, at most 4x,
    # as many as the KB has pairs for); then, with >= 3 judged and none passing, it stops
    assert asked == len(judged) and 3 <= asked <= 2 + 6
    assert any(n.startswith("comparative: none of") and "go to single_hop" in n
               for n in summary.notes)
