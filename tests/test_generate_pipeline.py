"""The whole pipeline with a scripted ideal model: answers chosen by code, composed items built
from verified parts with computed answers, filled columns, idempotent reruns."""

from __future__ import annotations

import json
import math
from collections import Counter

from builder.generate import compose, pipeline
from builder.generate.difficulty import level
from builder.generate.models import GenerateOptions
from builder.generate.runner import run_generate
from builder.store.candidates import load_candidates

from tests.fakes import ScriptedLLM
from tests.support.scripted_kb import ideal, with_overrides

REFUSAL = "The knowledge base does not contain this information."


def run(store, llm, **kw):
    return run_generate(store, llm, GenerateOptions(**{"n": 10, **kw}))


def verified(store):
    return [c for c in load_candidates(store) if c["verdict"] == "passed" and not c["duplicate_of"]]


def test_ideal_model_reaches_n_with_composed_items(kb_store):
    store = kb_store
    llm = ScriptedLLM(ideal)
    summary = run(store, llm)
    pool = verified(store)
    kinds = Counter(c["type"] for c in pool)
    # n, or up to a quarter more single-hop parts while harder items are short
    assert summary.verified_total == len(pool)
    assert 10 <= len(pool) <= 10 + math.ceil(pipeline.EXTRA_PARTS * 10)
    if len(pool) > 10:
        assert any(kinds[k] < summary.plan[k] for k in compose.COMPOSED)
    assert {"comparative", "reasoning", "unanswerable"} <= set(kinds)
    assert kinds["single_hop"] >= 5
    # two calls per single-hop item at most (question, round trip), fewer for composed ones
    assert len(llm.calls) / summary.verified_total <= 3
    chunks = {r["id"]: r["text"] for r in store.query("SELECT id, text FROM chunks")}
    by_id = {c["id"]: c for c in load_candidates(store)}
    for c in pool:
        assert c["status"] == "pending" and c["difficulty"] in ("easy", "medium", "hard")
        assert c["difficulty"] == level(c["difficulty_signals"]["points"])
        # code writes thresholds, comparatives and differences
        assert c["prompts"] and c["generator_model"] == (
            "code" if c["type"] in ("comparative", "reasoning") else "scripted-model")
        assert c["verification"] and c["document_id"]
        for ev in c["evidence"]:
            assert chunks[ev["chunk_id"]][ev["start"]:ev["end"]] == ev["quote"]
        if c["type"] == "single_hop":  # the answer is the span code chose: in its evidence
            assert c["answer"] in c["evidence"][0]["quote"] and c["question"] not in c["answer"]
            continue
        parent = by_id[c["parent_id"]]  # composed from a verified single-hop item
        assert parent["type"] == "single_hop" and parent["verdict"] == "passed"
        assert set(parent["fact_ids"]) <= set(c["fact_ids"])
        if c["type"] == "unanswerable":
            assert c["chunk_ids"] == [] and c["evidence"] == [] and c["answer"] == REFUSAL
            assert "Tacoma" in c["question"]
        else:  # two parts, or one limit a threshold asks past
            assert len(c["fact_ids"]) == (1 if is_threshold(c) else 2)
            assert c["hops"] == [[cid] for cid in c["chunk_ids"]]
    comparative = next(c for c in pool if c["type"] == "comparative")
    parts = [by_id[p] for p in (comparative["parent_id"],)] + [
        p for p in load_candidates(store) if p["type"] == "single_hop"
        and p["fact_ids"] == comparative["fact_ids"][1:]]
    values = sorted(parts, key=lambda p: float(p["answer"].strip("$%").split()[0]))
    assert comparative["answer"] == f"{values[-1]['answer']} > {values[0]['answer']}"
    assert comparative["question"].startswith(by_id[comparative["parent_id"]]["question"])
    reasoning = next(c for c in pool if c["type"] == "reasoning")
    assert any(ch.isdigit() for ch in reasoning["answer"])


def test_rerun_with_nothing_to_do_makes_no_calls(kb_store):
    store = kb_store
    # a run stopped by its call ceiling leaves work a rerun resumes; within a few runs the
    # extra parts are exhausted and there is nothing left to do
    for _ in range(4):
        llm = ScriptedLLM(ideal)
        run(store, llm)
        if not llm.calls:
            break
    before = store.query("SELECT id, verdict, difficulty, duplicate_of FROM candidates ORDER BY id")
    again = ScriptedLLM(ideal)
    summary = run(store, again)
    assert again.calls == []
    assert store.query("SELECT id, verdict, difficulty, duplicate_of FROM candidates ORDER BY id") == before
    assert 10 <= summary.verified_total <= 10 + math.ceil(pipeline.EXTRA_PARTS * 10)
    more = ScriptedLLM(ideal)  # asking for more only pays for the difference
    run(store, more, n=summary.verified_total + 2)
    assert 0 < len(more.calls) <= 2 * 2 + 4


def test_chinese_chunk_gets_chinese_questions(kb_store):
    store = kb_store
    run(store, ScriptedLLM(ideal), types=["single_hop"], n=16)
    zh = [c for c in load_candidates(store) if c["chunk_ids"] == ["z1"]]
    assert zh and all(c["language"] == "zh" for c in zh)
    assert any(c["verdict"] == "passed" for c in zh)


def test_injection_in_chunk_stays_data(kb_store):
    """A reader that obeys the chunk's 'answer 42' cannot plant that answer: answers are chosen
    by code, and a round trip that obeys it disagrees with the reference, so nothing it touched
    passes. The chunk reaches the model only as the value of a variable."""
    def obedient(name, v, role):
        if name == "reader" and "Ignore previous instructions" in v["sentences"]:
            return {"sentence": 1, "answer": "42"}
        return ideal(name, v, role)

    store = kb_store
    llm = ScriptedLLM(obedient)
    run(store, llm, types=["single_hop"], n=16)
    cands = load_candidates(store)
    assert cands and not any("42" in c["answer"] for c in cands)
    for c in cands:
        if any("42" in (v.get("answer") or "") for v in c["verification"] or []):
            assert c["verdict"] == "failed"
    asked = [vars_ for name, vars_, _ in llm.calls
             if name == "question" and "Summit" in vars_["before"] + vars_["answer"] + vars_["after"]]
    assert asked and all("Ignore previous" not in a["answer"] for a in asked)


def test_dry_run_writes_nothing(kb_store):
    from builder.llm.types import LLMResult

    store = kb_store
    llm = ScriptedLLM(lambda *a: LLMResult(None, "dry_run"))
    llm.dry_run = True
    summary = run(store, llm)
    calls = summary.llm_calls_by_stage
    assert summary.dry_run and calls["question"] == calls["reader"] > 0
    # priced per kind a model phrases; comparatives and reasoning items cost no call
    assert all(calls[prompt] == 2 * summary.plan[kind] for kind, prompt in compose.PROMPTS.items()
               if summary.plan.get(kind))
    assert summary.plan["comparative"] and not any(
        stage.startswith("compose_") and stage not in compose.PROMPTS.values() for stage in calls)
    for table in ("candidates", "stage_done"):
        assert store.query(f"SELECT count(*) AS n FROM {table}")[0]["n"] == 0
    assert json.dumps(summary.model_dump())  # serialisable for the demo


def test_a_writer_that_fails_every_check_stops_at_the_call_ceiling(kb_store):
    store = kb_store
    leaky = ScriptedLLM(with_overrides(question=lambda v: {"question": f"Is it {v['answer']}?"}))
    summary = run(store, leaky, n=4)
    cands = load_candidates(store)
    assert cands and all(c["verdict"] == "failed" for c in cands)
    assert all(r.startswith("form:") for c in cands for r in c["rejection_reasons"])
    assert not any(name == "reader" for name, _, _ in leaky.calls)  # code decided, no reader
    assert summary.verified_total == 0
    assert any("spans" in n or "ceiling" in n for n in summary.notes)


def test_comparatives_are_written_by_code_with_no_composing_call(kb_store):
    """Every composing call fails here; the comparatives are made anyway, from verified pairs,
    with the larger value first in the answer."""
    llm = ScriptedLLM(with_overrides(**{name: lambda v: {} for name in compose.PROMPTS.values()}))
    summary = run(kb_store, llm, types=["comparative", "single_hop"], n=8)
    made = [c for c in verified(kb_store) if c["type"] == "comparative"]
    assert made and summary.types["comparative"].verified == len(made)
    assert all(c["generator_model"] == "code" and " > " in c["answer"] for c in made)
    assert not [name for name, _, _ in llm.calls if name.startswith("compose_")]


def is_threshold(c: dict) -> bool:
    return any(name.startswith("threshold_") for name in c["prompts"])


def test_a_stated_limit_gives_a_reasoning_item_whose_yes_or_no_is_code_s(kb_store):
    """Returns are accepted "within 30 days" (and, in the newer policy, 45): with no second
    value to subtract, a reasoning item asks, after the limit's own verified question, whether
    twice the limit (answer no) or half of it (answer yes) is within it; the answer is code's;
    no call is made for it (here every composing call fails), and the item keeps its one
    part."""
    llm = ScriptedLLM(with_overrides(**{name: lambda v: {} for name in compose.PROMPTS.values()}))
    run(kb_store, llm, n=10, mix={"single_hop": 0.5, "reasoning": 0.5})
    pool = load_candidates(kb_store)
    made = [c for c in pool if is_threshold(c)]
    by_id = {c["id"]: c for c in pool}
    assert made and all(c["verdict"] == "passed" and c["type"] == "reasoning" for c in made)
    for c in made:
        part = by_id[c["parent_id"]]
        assert part["type"] == "single_hop" and part["verdict"] == "passed"
        assert c["fact_ids"] == part["fact_ids"] and c["chunk_ids"] == part["chunk_ids"]
        assert c["generator_model"] == "code"
        assert part["answer"].startswith("within")
        limit = int(part["answer"].split()[1])
        said, amount = ("Yes", limit // 2) if c["answer"].startswith("Yes") else ("No", 2 * limit)
        assert c["answer"] == f"{said}: {part['answer']}"
        assert c["question"] == f"{part['question']} Is {amount} days within the limit?"
        assert "threshold_ceiling.md" in c["prompts"]


def test_harder_places_with_nothing_to_build_them_from_go_to_thresholds(kb_store):
    """Multi-hop places whose every composing call fails, once no bridge is left to try, are
    filled by thresholds (no call) from the verified limits; without the limits' places the run
    would end with its harder places empty."""
    llm = ScriptedLLM(with_overrides(**{name: lambda v: {} for name in compose.PROMPTS.values()}))
    summary = run(kb_store, llm, n=10, mix={"single_hop": 0.6, "multi_hop": 0.4})
    pool = verified(kb_store)
    assert summary.plan.get("reasoning", 0) == 0 and not any(c["type"] == "multi_hop" for c in pool)
    made = [c for c in pool if c["type"] in ("reasoning", "comparative")]
    assert any(is_threshold(c) for c in made) and len(made) <= summary.plan["multi_hop"]


def test_a_threshold_sentence_is_read_from_the_prompts_folder_in_the_part_s_language(
        kb_store, tmp_path):
    (tmp_path / "threshold_ceiling.md").write_text(
        "en: Would {amount} still be accepted?\nzh: {amount}可以吗？\n", encoding="utf-8")
    run(kb_store, ScriptedLLM(ideal), n=10, mix={"single_hop": 0.5, "reasoning": 0.5},
        prompts_dir=str(tmp_path))
    made = [c for c in load_candidates(kb_store) if "threshold_ceiling.md" in c["prompts"]]
    assert made and all(c["question"].endswith("days still be accepted?") for c in made)


def test_one_question_with_two_answers_from_two_places_fails_both(kb_store):
    """The same question verified twice, from two statements, with two different answers does
    not say which it asks about: each passed its own round trip, but the pair shows the question
    does not pin its subject down, and settling the pool fails both."""
    from builder.generate.candidate import make_candidate
    from builder.generate.context import RunContext
    from builder.generate.runner import settle
    from builder.store import candidates as cstore
    from builder.store.documents import list_chunks

    chunks = list_chunks(kb_store)
    rows = []
    for i, (chunk, answer) in enumerate(zip(chunks[:3], ["30 days", "45 days", "30 days"])):
        fact = {"id": f"f{i}", "chunk_id": chunk["id"], "evidence": chunk["text"][:40],
                "evidence_start": 0, "evidence_end": 40, "document_id": chunk["document_id"]}
        question = "How many days do you have?" if i < 2 else "How long is the trial?"
        row = make_candidate(ctype="single_hop", question=question, answer=answer, facts=[fact],
                             language="en", prompts={}, model="m", seed_fact_id=fact["id"],
                             document_id=chunk["document_id"], key=i)
        row.update(verdict="passed", verification=[{"check": "round_trip", "passed": True}])
        rows.append(row)
    cstore.record_candidates(kb_store, rows, stage="test", key="k", info={})
    settle(RunContext.create(kb_store, ScriptedLLM(ideal), GenerateOptions()), chunks)
    after = {c["id"]: c for c in load_candidates(kb_store)}
    for row in rows[:2]:
        got = after[row["id"]]
        assert got["verdict"] == "failed"
        assert any(r.startswith("unique: another item asks the same") for r in got["rejection_reasons"])
    assert after[rows[2]["id"]]["verdict"] == "passed"  # its question is its own


def test_a_span_its_own_sentence_cannot_tell_from_another_is_never_asked(kb_store):
    # returns.md and returns-2023.md state the same rules with other values, and their titles
    # do not say which is which: a question written from "A restocking fee of 5% applies to
    # opened items." fits the 10% sentence as well, so it is not asked at all
    llm = ScriptedLLM(ideal)
    summary = run(kb_store, llm)
    passages = [v["before"] + v["answer"] + v["after"] for name, v, _ in llm.calls
                if name == "question"]
    assert passages and not any("fee of 5%" in p or "within 45 days" in p for p in passages)
    assert any("fee of 10%" in p for p in passages)  # the other page's title tells it apart
    assert any(note.startswith("2 answer span(s) not asked") for note in summary.notes)


def test_ambiguous_items_are_planned_before_the_other_kinds_use_up_their_parts(kb_store):
    # Gold and Basic are the KB's one labelled parallel pair, and comparative and reasoning
    # items are wanted from it too: each part serves two composed items at most, so planned
    # last the ambiguous item never had room
    llm = ScriptedLLM(ideal)
    summary = run(kb_store, llm, n=12, mix={"single_hop": 0.6, "comparative": 0.15,
                                            "reasoning": 0.15, "ambiguous": 0.1})
    pool = {c["id"]: c for c in verified(kb_store)}
    made = [c for c in pool.values() if c["type"] == "ambiguous"]
    assert made and summary.types["ambiguous"].verified == len(made)
    for item in made:
        first = pool[item["parent_id"]]  # a verified single-hop part
        assert first["type"] == "single_hop" and first["answer"] in item["answer"]
        assert item["question"] != first["question"]
    # the label stood in the question: code took it out, no composing call was made
    gold = next(c for c in made if "Gold" in c["answer"])
    assert gold["generator_model"] == "code"
    assert not [v for name, v, _ in llm.calls if name == "compose_ambiguous" and "Gold" in v["first"]]


def test_beyond_n_only_the_halves_of_harder_items_are_asked(kb_store, monkeypatch):
    asked = []
    real = pipeline.write_questions

    async def spy(ctx, kb, spans, precheck=None, partners=None):
        asked.append((len(pipeline.verified(ctx)), [s.bundled for s in spans]))
        await real(ctx, kb, spans, precheck, partners)

    monkeypatch.setattr(pipeline, "write_questions", spy)
    # harder items can never be composed here (every composing call fails, and no threshold,
    # comparative or difference is built), so a run that has n verified is always short of them
    monkeypatch.setattr(compose, "threshold_units", lambda p: None)
    monkeypatch.setattr(compose, "value_pairs", lambda parts, spans: [])
    llm = ScriptedLLM(with_overrides(**{name: lambda v: {} for name in compose.PROMPTS.values()}))
    summary = run(kb_store, llm)
    beyond = [flags for done, flags in asked if done >= 10]
    assert summary.verified_total >= 10
    assert all(all(flags) for flags in beyond)
    assert any(not all(flags) for done, flags in asked if done < 10)  # singles before n
    # spans are left (the scripted KB has more): the run says why it stopped, not that it ran out
    assert not any("every answer span" in note for note in summary.notes)
    assert any("no half of a pair or bridge" in note for note in summary.notes)


def test_once_n_is_verified_thresholds_fill_the_harder_places_before_more_parts_are_asked(
        kb_store, monkeypatch):
    """Every composing call fails: once n items are verified, the harder places go to
    thresholds (no call) from the verified limits before any more part is asked for a pair
    that never passes; at the end there were places left and room for the limit to take one."""
    asked = []
    real = pipeline.write_questions

    async def spy(ctx, kb, spans, precheck=None, partners=None):
        pool = load_candidates(ctx.store)
        asked.append((len(pipeline.verified(ctx, pool)), sum(map(is_threshold, pool))))
        await real(ctx, kb, spans, precheck, partners)

    monkeypatch.setattr(pipeline, "write_questions", spy)
    llm = ScriptedLLM(with_overrides(**{name: lambda v: {} for name in compose.PROMPTS.values()}))
    summary = run(kb_store, llm)
    pool = verified(kb_store)
    made = [c for c in pool if is_threshold(c)]
    assert made and len(pool) <= 10 + math.ceil(pipeline.EXTRA_PARTS * 10)
    assert len(made) <= sum(v for k, v in summary.plan.items() if k != "single_hop")
    beyond = [thresholds for done, thresholds in asked if done >= 10]
    assert beyond and all(thresholds == len(made) for thresholds in beyond)  # the fill came first


def test_a_duplicate_does_not_count_towards_n_before_the_dedup_pass(monkeypatch):
    from types import SimpleNamespace
    pool = [{"id": "a", "question": "How long is the return window?", "answer": "45 days"},
            {"id": "b", "question": "how long is the return window", "answer": "45 days"},
            {"id": "c", "question": "What does the Gold plan cost?", "answer": "$49"},
            {"id": "d", "question": "Which carrier ships parcels?", "answer": "UPS",
             "duplicate_of": "x"}]
    monkeypatch.setattr(pipeline.cstore, "load_candidates",
                        lambda store, verdict=None: [{"verdict": "passed", "verification": [],
                                                      "duplicate_of": None, **c} for c in pool])
    assert [c["id"] for c in pipeline.verified(SimpleNamespace(store=None))] == ["a", "c"]


def _fails_first_unless_shown_a_partner(answer: str, asked: list):
    """The ideal writer, except that the span answering `answer` gets a leaky question the first
    time it is asked; `asked` records the partner slot of each of its calls."""
    def question(v):
        if v["answer"] != answer:
            return ideal("question", v, "generator")
        asked.append(v["partner"])
        if len(asked) == 1:
            return {"question": f"Is the price {answer}?"}
        return ideal("question", v, "generator")
    return question


def test_the_failed_half_of_a_pair_is_asked_again_in_its_partners_words(kb_store):
    asked: list[str] = []
    llm = ScriptedLLM(with_overrides(question=_fails_first_unless_shown_a_partner("$19 per year", asked)))
    run(kb_store, llm)
    pool = load_candidates(kb_store)
    gold = next(c for c in pool if c["type"] == "single_hop" and c["answer"] == "$49 per year"
                and c["verdict"] == "passed")
    # asked once (failed by the form), once more shown the Gold question
    assert len(asked) == 2 and gold["question"] in asked[1]
    basic = [c for c in pool if c["type"] == "single_hop" and c["answer"] == "$19 per year"]
    assert sorted(c["verdict"] for c in basic) == ["failed", "passed"]
    composed = [c for c in pool if c["type"] in ("comparative", "reasoning")
                and c["verdict"] == "passed"]
    assert any({gold["id"], next(b["id"] for b in basic if b["verdict"] == "passed")}
               <= {c["parent_id"], *[p["id"] for p in pool if p["fact_ids"] == c["fact_ids"][1:]]}
               for c in composed)
    # a second run asks nothing again: the retry is a unit of its own in the ledger
    again = ScriptedLLM(with_overrides(question=_fails_first_unless_shown_a_partner("$19 per year", asked)))
    run(kb_store, again)
    assert len(asked) == 2


def test_no_half_is_asked_again_when_the_plan_wants_no_item_built_from_pairs(kb_store):
    asked: list[str] = []
    llm = ScriptedLLM(with_overrides(question=_fails_first_unless_shown_a_partner("$19 per year", asked)))
    run(kb_store, llm, types=["single_hop", "multi_hop"])
    assert len(asked) == 1


def test_a_retry_that_offers_the_failed_wording_again_stores_nothing_new(kb_store):
    calls: list[str] = []

    def same_again(v):
        if v["answer"] != "$19 per year":
            return ideal("question", v, "generator")
        calls.append(v["partner"])
        return {"question": "Is the price $19 per year?"}

    run(kb_store, ScriptedLLM(with_overrides(question=same_again)))
    assert len(calls) == 2 and calls[1]  # asked again, shown a partner
    basic = [c for c in load_candidates(kb_store) if c["answer"] == "$19 per year"]
    assert len(basic) == 1 and basic[0]["verdict"] == "failed"
    run(kb_store, ScriptedLLM(with_overrides(question=same_again)))
    assert len(calls) == 2  # the retry is done, in the ledger


def test_a_span_asked_the_first_time_is_shown_no_question_of_the_run(kb_store):
    """Only the prompt's fixed example: a verified question of the run shown beside a span was
    offered back as a wording (10% to 38% of such spans on the development runs), and the same
    spans asked without it passed more often. A stranded half asked again is still shown its
    partner's question, and only then."""
    llm = ScriptedLLM(with_overrides(question=_fails_first_unless_shown_a_partner("$19 per year", [])))
    run(kb_store, llm)
    asked = [(v["before"] + v["answer"] + v["after"], v["partner"])
             for name, v, _ in llm.calls if name == "question"]
    assert len(asked) > 8  # several waves
    first_time: set[str] = set()
    for passage, partner in asked:
        if passage not in first_time:
            assert not partner, passage
            first_time.add(passage)
    assert [p for p, partner in asked if partner] == [
        p for p, _ in asked if "$19 per year" in p][1:]  # the retried half, once
