"""Planted bad items: every one is rejected, by the check meant to catch it, while right items
of the same shapes pass. The reader is a scripted honest reader: it answers each question from
the sentences it is shown, as a careful model would; composers are scripted to make each
mistake a small model makes."""

from __future__ import annotations

import asyncio

import pytest

from builder.generate import compose
from builder.generate.context import RunContext
from builder.generate.knowledge import KbWords, KnowledgeIndex
from builder.generate.models import GenerateOptions
from builder.generate.pipeline import judge_question
from builder.generate.spans import spans_of_chunk
from builder.store.documents import list_chunks

from tests.fakes import ScriptedLLM
from tests.support.planted import (build, compose_planted, good_single, honest_reader, part,
                                   planted_harder, planted_single)


def _ctx(store, respond):
    return RunContext.create(store, ScriptedLLM(respond), GenerateOptions())


def _kb(store):
    chunks = list_chunks(store)
    return KnowledgeIndex(chunks, {c["id"]: c["title"] for c in chunks})


def test_every_planted_single_hop_item_is_rejected_by_its_check(tmp_path):
    store = build(tmp_path / "g.db")
    ctx, kb = _ctx(store, honest_reader), _kb(store)
    for what, question, sp, checks in planted_single(store):
        reasons = asyncio.run(judge_question(ctx, kb, question, sp))
        assert reasons, f"{what} passed: {question!r}"
        assert {r.split(":")[0] for r in reasons} & checks, (what, reasons)
    for question, sp in good_single(store):
        assert asyncio.run(judge_question(ctx, kb, question, sp)) == [], question


def test_a_failed_code_check_spares_the_reader_call(tmp_path):
    store = build(tmp_path / "g.db")
    ctx, kb = _ctx(store, honest_reader), _kb(store)
    for _what, question, sp, checks in planted_single(store):
        if checks == {"form"}:
            asyncio.run(judge_question(ctx, kb, question, sp))
    assert ctx.llm.calls == []


def test_a_reader_that_echoes_every_reference_cannot_pass_what_code_catches(tmp_path):
    store = build(tmp_path / "g.db")
    refs = {q: sp.answer for _, q, sp, _ in planted_single(store)}
    ctx, kb = _ctx(store, lambda n, v, r: {"sentence": 1, "answer": refs.get(v["question"], "")}), \
        _kb(store)
    for what, question, sp, checks in planted_single(store):
        if checks == {"form"}:
            assert asyncio.run(judge_question(ctx, kb, question, sp)), what


@pytest.fixture
def parts(tmp_path):
    store = build(tmp_path / "g.db")
    holiday = part(store, "holiday.md#0", "25 days",
                    "How many days of holiday does the company offer each calendar year?")
    carry = part(store, "holiday.md#0", "5 days",
                  "How many days of unused holiday can staff carry over?")
    return store, holiday, carry


def _like(p, answer: str, question: str):
    """`p` asked another question with another answer (a value of the same chunk)."""
    from builder.text.values import find_values

    cand = {**p.cand, "id": f"c-{answer}-{question[:12]}", "answer": answer, "question": question}
    return compose.Part(cand, None, find_values(answer, "en")[0])


def _no_call(store):
    return _ctx(store, lambda n, v, r: AssertionError(f"no call expected, got {n}"))


def test_a_comparative_is_written_by_code_from_its_parts_questions(parts):
    """The parts' own questions, then the language's sentence of `compare_greater.md`; the
    answer is the larger value, then the other; no call."""
    store, holiday, carry = parts
    ctx = _no_call(store)
    row = compose.comparative(ctx, carry, holiday)
    assert row["verdict"] == "passed", row["rejection_reasons"]
    assert row["question"] == ("How many days of unused holiday can staff carry over? How many "
                               "days of holiday does the company offer each calendar year? "
                               "Which of the two values is higher?")
    assert row["answer"] == "25 days > 5 days"
    assert row["parent_id"] == carry.cand["id"] and row["generator_model"] == "code"
    assert row["part_ids"] == [carry.cand["id"], holiday.cand["id"]]  # every part, in order
    assert row["fact_ids"] == carry.cand["fact_ids"] + holiday.cand["fact_ids"]
    assert "compare_greater.md" in row["prompts"] and ctx.llm.calls == []


def test_a_comparative_of_dates_asks_which_is_later(parts):
    store, holiday, _ = parts
    old = _like(holiday, "2019", "In which year did the company open its office?")
    new = _like(holiday, "2023", "In which year did the company move to Leeds?")
    row = compose.comparative(_no_call(store), new, old)
    assert row["question"].endswith("? Which of the two dates is later?")
    assert row["answer"] == "2023 > 2019" and row["verdict"] == "passed"


def test_a_comparative_and_a_difference_ask_in_their_parts_language(parts):
    """French parts get the French sentence; parts written without spaces are joined without
    them."""
    store, holiday, carry = parts
    for p in (holiday, carry):
        p.cand["language"] = "fr"
    row = compose.difference(_no_call(store), holiday, carry)
    assert row["question"].endswith("carry over? Quelle est la différence entre les deux "
                                     "valeurs ?")
    assert row["answer"] == "20 days"
    for p, q in ((holiday, "公司每年提供多少天假期？"), (carry, "员工可以结转多少天未用假期？")):
        p.cand["language"], p.cand["question"] = "zh", q
    row = compose.comparative(_no_call(store), holiday, carry)
    assert row["question"] == "公司每年提供多少天假期？员工可以结转多少天未用假期？这两个值中哪个更高？"


def test_a_comparative_or_difference_of_parts_asked_alike_or_stating_a_value_is_rejected(parts):
    store, holiday, carry = parts
    same = part(store, "holiday.md#0", "5 days", holiday.question)
    row = compose.comparative(_no_call(store), holiday, same)
    assert row["verdict"] == "failed"
    assert "names: the two questions ask the same thing" in row["rejection_reasons"]
    states = part(store, "holiday.md#0", "5 days", "How many of the 25 days can staff carry over?")
    for fn in (compose.comparative, compose.difference):
        row = fn(_no_call(store), holiday, states)
        assert row["verdict"] == "failed"
        assert "leak: the question states a value" in row["rejection_reasons"]


def test_no_difference_of_values_under_different_bounds(parts):
    """Which of "25 days" and "up to 5 days" is larger holds; their difference is no fact."""
    store, holiday, carry = parts
    capped = _like(carry, "up to 5 days", carry.question)
    assert compose.difference(_no_call(store), holiday, capped) is None
    assert compose.comparative(_no_call(store), holiday, capped)["answer"] == "25 days > up to 5 days"


def test_an_unanswerable_the_knowledge_base_answers_is_rejected(parts):
    store, holiday, _ = parts
    kb = _kb(store)

    def run(sibling, reader_answer):
        def respond(name, v, role):
            if name == "compose_unanswerable":
                return {"name": sibling}
            return {"sentence": 1 if reader_answer else 0, "answer": reader_answer}
        return asyncio.run(compose.unanswerable(_ctx(store, respond), holiday, "company", kb))

    present = run("payroll", "")          # a name the knowledge base uses
    assert present["verdict"] == "failed" and present["rejection_reasons"][0].startswith("absent")
    answered = run("Tacoma office", "25 days")   # the reader still finds an answer
    assert answered["verdict"] == "failed" and answered["rejection_reasons"][0].startswith("refusal")
    # the reader read the answer of the replaced name: it answers that name, not the sibling
    overlooked = asyncio.run(compose.unanswerable(_ctx(store, lambda n, v, r: {"name": "fiscal year"}
                                                       if n == "compose_unanswerable" else
                                                       {"sentence": 1, "answer": "25 days"}),
                                                  holiday, "calendar year", kb))
    assert overlooked["verdict"] == "passed", overlooked["rejection_reasons"]
    right = run("Tacoma office", "")
    assert right["verdict"] == "passed", right["rejection_reasons"]
    assert right["chunk_ids"] == [] and right["answer"] == "The knowledge base does not contain this information."
    assert "Tacoma office" in right["question"] and "company" not in right["question"]


def test_a_multi_hop_that_names_its_bridge_or_needs_one_chunk_is_rejected(tmp_path):
    store = build(tmp_path / "g.db")
    kb = _kb(store)
    first = part(store, "holiday.md#0", "25 days", "How many days of holiday are offered?")
    second = part(store, "holiday.md#0", "5 days", "How many of the 25 days can staff carry over?")
    names = _multi(store, kb, {"question": "How many days of holiday, 25 days, are offered?"},
                   first, second)
    assert names["verdict"] == "failed"
    assert any(r.startswith("bridge") for r in names["rejection_reasons"])
    same_chunk = _multi(store, kb, {"question": "What does the holiday policy offer each year?"},
                        first, first)
    assert same_chunk["verdict"] == "failed"
    assert any(r.startswith(("necessity", "hop1")) for r in same_chunk["rejection_reasons"])


def _multi(store, kb, reply, a, b):
    ctx = _ctx(store, lambda n, v, r: reply if n == "compose_multi_hop" else honest_reader(n, v, r))
    return asyncio.run(compose.multi_hop(ctx, a, b, kb))


# ------------------------------------------------------------------ several wordings, code keeps one

def test_of_the_siblings_offered_the_first_that_passes_is_kept_and_only_it_is_read(parts):
    store, holiday, _ = parts
    offered = ["company", "payroll", "Tacoma office", "Reno office"]
    ctx = _ctx(store, lambda n, v, r: {"names": offered} if n == "compose_unanswerable"
               else {"sentence": 0, "answer": ""})
    row = asyncio.run(compose.unanswerable(ctx, holiday, "company", _kb(store)))
    # "company" is the name replaced and "payroll" one the knowledge base uses: both refused
    assert row["verdict"] == "passed", row["rejection_reasons"]
    assert "Tacoma office" in row["question"] and "Reno" not in row["question"]
    assert row["offered"] == offered
    # the refused siblings cost no call: one composing call, one reader call for the kept one
    assert [name for name, _, _ in ctx.llm.calls] == ["compose_unanswerable", "reader"]


def test_when_no_sibling_offered_passes_the_best_fails_without_a_reader_call(parts):
    store, holiday, _ = parts
    ctx = _ctx(store, lambda n, v, r: {"names": ["holiday", "payroll"]})
    row = asyncio.run(compose.unanswerable(ctx, holiday, "company", _kb(store)))
    assert row["verdict"] == "failed"
    # "holiday" is in the question and the knowledge base (two problems), "payroll" only in the
    # knowledge base: the row says why the better one failed
    assert row["rejection_reasons"] == ["absent: the knowledge base mentions 'payroll'"]
    assert [name for name, _, _ in ctx.llm.calls] == ["compose_unanswerable"]


def _words(endings: list[str], n: int = 500) -> KbWords:
    """A knowledge base's words: `n` different words made of made-up stems and `endings`."""
    stems = [a + b for a in "bcdfglmprstv" for b in ("ar", "el", "in", "or", "un", "ast", "ent")]
    text = " ".join(f"{s}{e}" for s in stems for e in endings)
    assert len(set(text.split())) >= n
    return KbWords.of([{"id": "c", "text": text}])


def test_a_word_is_spelt_like_the_knowledge_base_when_many_of_its_words_end_like_it():
    french = _words(["ité", "aire", "tion", "ement", "age", "eur", "ique", "ette"])
    for word in ("paternité", "militaire", "chômage", "adoption"):
        assert french.spelt_like_the_kb(word), word
    for word in ("maternity", "birth", "cost", "leave"):
        assert not french.spelt_like_the_kb(word), word
    # too few words to say how the knowledge base spells: nothing is refused
    assert KbWords.of([{"id": "c", "text": "maternité paternité congé"}]).spelt_like_the_kb("birth")


def test_an_unanswerable_sibling_in_another_language_is_refused(parts):
    store, holiday, _ = parts
    kb = _kb(store)
    kb.__dict__["words"] = _words(["ity", "ice", "ment", "ness", "ing", "ary"])
    offered = ["jubilee", "Tacoma office"]   # "jubilee" ends like none of its words
    ctx = _ctx(store, lambda n, v, r: {"names": offered} if n == "compose_unanswerable"
               else {"sentence": 0, "answer": ""})
    row = asyncio.run(compose.unanswerable(ctx, holiday, "company", kb))
    assert row["verdict"] == "passed" and "Tacoma office" in row["question"]
    only = asyncio.run(compose.unanswerable(_ctx(store, lambda n, v, r: {"names": ["jubilee"]}),
                                            holiday, "company", kb))
    assert only["rejection_reasons"] == [
        "language: 'jubilee' is not spelt like the knowledge base's words"]


def test_every_planted_harder_item_is_rejected_by_its_check_and_right_ones_pass(tmp_path):
    store = build(tmp_path / "g.db")
    reader = ScriptedLLM(honest_reader)
    for item in planted_harder(store):
        row = asyncio.run(compose_planted(store, reader, item))
        decided = {r.split(":")[0] for r in row["rejection_reasons"]}
        if item.bad:
            assert row["verdict"] == "failed", item.what
            assert decided & item.checks, (item.what, row["rejection_reasons"])
        else:
            assert row["verdict"] == "passed", (item.what, row["rejection_reasons"])


def test_an_ambiguous_item_takes_the_label_out_by_code_without_a_call(tmp_path):
    store = build(tmp_path / "g.db")
    d1 = part(store, "ladder.md#0", "works on well-defined tasks within one feature",
              "What is the scope of a D1 - Developer 1?", label="D1 - Developer 1")
    d3 = part(store, "ladder.md#0", "owns a whole subsystem and its roadmap",
              "What is the scope of a D3 - Developer 3?", label="D3 - Developer 3")
    ctx = _ctx(store, lambda n, v, r: AssertionError(f"no call expected, got {n}"))
    row = asyncio.run(compose.ambiguous(ctx, d1, d3, _kb(store)))
    assert row["verdict"] == "passed", row["rejection_reasons"]
    assert row["question"] == "What is the scope?" and ctx.llm.calls == []
    assert row["answer"] == ("D1 - Developer 1: works on well-defined tasks within one feature; "
                             "D3 - Developer 3: owns a whole subsystem and its roadmap")
    # every time it stands there; a word of a compound is no label; nothing left is no question
    assert compose.without_label("Do Gold members pay less than Gold guests?", "Gold", "en") \
        == "Do members pay less than guests?"
    assert compose.without_label("Wie viel kostet der Gold-Tarif?", "Gold", "de") is None
    assert compose.without_label("What is Gold?", "Gold", "en") is None


def test_a_sibling_that_holds_the_name_it_replaces_is_no_sibling(parts):
    store, holiday, _ = parts
    ctx = _ctx(store, lambda n, v, r: {"names": ["company Tacoma", "Tacoma office"]}
               if n == "compose_unanswerable" else {"sentence": 0, "answer": ""})
    row = asyncio.run(compose.unanswerable(ctx, holiday, "company", _kb(store)))
    # "company Tacoma" would ask "the company Tacoma": the same company, named more narrowly
    assert row["verdict"] == "passed" and "Tacoma office" in row["question"]
    assert "company" not in row["question"]


def test_a_swapped_name_takes_its_abbreviation_with_it(tmp_path):
    """"What is the duration of Statutory Shared Parental Pay (ShPP)?" with a sibling for the
    name must not keep "(ShPP)": the question would name the replaced thing after all."""
    store = build(tmp_path / "g.db")
    p = part(store, "holiday.md#0", "25 days", "How many days of holiday (HOL) does the company "
             "offer each calendar year?")
    ctx = _ctx(store, lambda n, v, r: {"names": ["sick leave"]}
               if n == "compose_unanswerable" else {"sentence": 0, "answer": ""})
    row = asyncio.run(compose.unanswerable(ctx, p, "holiday", _kb(store)))
    assert row["question"] == "How many days of sick leave does the company offer each calendar year?"


def test_a_threshold_asks_in_its_part_s_language_and_answers_no_by_code(tmp_path):
    """A French limit ("25 jours maximum") gives its own question, then the French sentence of
    `threshold_ceiling.md` with twice the limit, and "Non" with the limit; a Japanese floor
    joins without a space; no call is made."""
    from builder.text.values import find_values

    store = build(tmp_path / "g.db")
    ctx = _ctx(store, lambda n, v, r: AssertionError(f"no call expected, got {n}"))

    def limit(question: str, answer: str, lang: str) -> compose.Part:
        value = max(find_values(answer, lang), key=lambda v: len(v.text))
        cand = {"id": answer, "question": question, "answer": answer, "language": lang,
                "fact_ids": ["f"], "chunk_ids": ["c"], "evidence": [], "seed_fact_id": "f",
                "document_id": "d", "prompts": {"question": "7"}}
        return compose.Part(cand, None, value)

    fr = asyncio.run(compose.threshold(
        ctx, limit("Combien de jours de congé peut-on reporter ?", "25 jours maximum", "fr"),
        "50 jours"))
    assert fr["question"] == ("Combien de jours de congé peut-on reporter ? "
                              "50 jours, est-ce dans la limite ?")
    assert fr["answer"] == "Non: 25 jours maximum" and fr["verdict"] == "passed"
    assert fr["parent_id"] == "25 jours maximum" and fr["prompts"]["question"] == "7"
    ja = asyncio.run(compose.threshold(
        ctx, limit("育児休業は何週間以上必要ですか？", "26週間以上", "ja"), "13週間"))
    assert ja["question"] == "育児休業は何週間以上必要ですか？13週間は下限を満たしますか？"
    assert ja["answer"] == "いいえ: 26週間以上" and "threshold_floor.md" in ja["prompts"]
    assert ctx.llm.calls == []


def _timeouts(store):
    asked = "Which error is raised when the client cannot {} within the time limit?"
    return [part(store, "timeouts.md#0", name, asked.format(what))
            for name, what in (("ConnectError", "connect"), ("WriteError", "send data"),
                               ("ReadError", "read data"))]


def test_two_questions_alike_but_for_one_phrase_make_one_ambiguous_item_with_every_reading(
        tmp_path):
    """The issue's ambiguous item: two verified questions that become the same question once
    what tells them apart is taken out; the answer lists every reading, by code, a third
    question of the same frame included; one item per frame."""
    store = build(tmp_path / "g.db")
    connect, write, read = _timeouts(store)
    pairs = compose.alike_pairs([connect, write, read])
    assert [(a.answer, b.answer, la, lb) for a, b, la, lb in pairs] == [
        ("ConnectError", "WriteError", "connect", "send data")]
    # whichever two an item is built from, every alike question is a reading, labelled by
    # what the group does not share ("send data", not the "send" that tells it from "read data")
    assert compose.alike_readings(write, read, [connect, write, read]) == [
        ("connect", "ConnectError"), ("send data", "WriteError"), ("read data", "ReadError")]
    replies = iter([{"question": "Which error is raised when the client times out?"},
                    {"question": "Which error is raised when the client cannot connect in time?"}])
    ctx = _ctx(store, lambda n, v, r: next(replies))
    row = asyncio.run(compose.ambiguous(ctx, connect, write, _kb(store),
                                        labels=("connect", "send data"),
                                        parts=[connect, write, read]))
    assert row["verdict"] == "passed", row["rejection_reasons"]
    assert row["answer"] == "connect: ConnectError; send data: WriteError; read data: ReadError"
    assert ctx.llm.calls[0][1]["first"] == "connect"  # a verb: the model rewrites, not code
    # a rewrite that still names one reading is no ambiguous question
    kept = asyncio.run(compose.ambiguous(ctx, connect, write, _kb(store),
                                         labels=("connect", "send data"), parts=[connect, write]))
    assert kept["verdict"] == "failed" and any(r.startswith("labels") for r in kept["rejection_reasons"])


def test_questions_alike_only_in_their_asking_words_are_no_ambiguous_pair():
    frame = compose.alike_frame
    assert frame("Which error is raised when the client cannot connect within the time limit?",
                 "Which error is raised when the client cannot send data within the time limit?"
                 )[:2] == ("connect", "send data")
    # one content word in common ("duration") is the kind of the answer, not a frame
    assert frame("What is the duration of the deliberation?",
                 "What is the duration of the review after launch?") is None
    # more than a short phrase apart, or no content word in a phrase
    assert frame("Which error is raised when the client cannot connect within the time limit?",
                 "Which error is raised when the server refuses every new incoming connection "
                 "within the time limit?") is None
    assert frame("Which error is raised when the client cannot connect to the server?",
                 "Which error is raised when the client cannot connect to a server?") is None
    assert frame("客户端无法连接时会引发什么错误？", "客户端无法发送数据时会引发什么错误？") is None


_ALIKE = [("passed", "connect: ConnectError; send data: WriteError; read data: ReadError")]


@pytest.mark.parametrize("plan, fill, made", [
    ({"single_hop": 3, "ambiguous": 1}, 0, _ALIKE),
    ({"single_hop": 3, "comparative": 1, "ambiguous": 1}, 1, _ALIKE),
    ({"single_hop": 3, "comparative": 1, "reasoning": 1}, 2, [])])
def test_the_places_no_threshold_is_left_for_go_to_an_ambiguous_item_of_alike_questions(
        tmp_path, plan, fill, made):
    """The plan's ambiguous place, with no parallel spans, is an ambiguous item of two alike
    questions; so is, once n items are verified, a harder place of another kind nothing else
    can fill (no limit among the parts for a threshold) -- unless the plan left ambiguous items
    out (a local model builds them badly): then the place stays open."""
    from builder.generate.candidate import make_candidate
    from builder.store import candidates as cstore

    store = build(tmp_path / "g.db")
    rows = []
    for p in _timeouts(store):
        row = make_candidate(ctype="single_hop", question=p.question, answer=p.answer,
                             facts=[{**p.span.fact, "document_id": p.span.document_id}],
                             language="en", prompts={}, model="m",
                             seed_fact_id=p.cand["seed_fact_id"], document_id="timeouts.md",
                             key=p.answer)
        row.update(verdict="passed", verification=[{"check": "round_trip", "passed": True}])
        rows.append(row)
    cstore.record_candidates(store, rows, stage="test", key="k", info={})
    ctx = _ctx(store, lambda n, v, r: {"question": "Which error is raised when the client "
                                                   "times out?"})
    chunks = list_chunks(store)
    spans = [s for c in chunks for s in spans_of_chunk(c, c["title"])]
    asyncio.run(compose.compose_from_verified(ctx, _kb(store), spans, plan, fill=fill))
    got = [c for c in cstore.load_candidates(store) if c["type"] != "single_hop"]
    assert [(c["verdict"], c["answer"]) for c in got] == made
