"""Verification by round trip: what each LLM check decides, and what a failed call leaves."""

from __future__ import annotations

import re

from builder.generate.models import GenerateOptions
from builder.generate.runner import run_generate
from builder.llm.types import LLMResult
from builder.store.candidates import load_candidates

from tests.fakes import ScriptedLLM
from tests.support.scripted_kb import ideal, with_overrides


def only(store, llm, types, n=2, **kw):
    run_generate(store, llm, GenerateOptions(n=n, types=types, max_rounds=1, **kw))
    return [c for c in load_candidates(store) if c["type"] in types]


def reasons(cand):
    return [r.split(":")[0] for r in cand["rejection_reasons"]]


def test_a_failed_verifier_call_leaves_the_candidate_pending_for_the_next_run(kb_store):
    store = kb_store
    down = ScriptedLLM(with_overrides(roundtrip=lambda v: LLMResult(None, "error", error="502")))
    summary = run_generate(store, down, GenerateOptions(n=2, types=["single_hop"], max_rounds=1))
    cands = [c for c in load_candidates(store) if c["type"] == "single_hop"]
    assert cands and all(c["verdict"] == "pending" for c in cands)
    assert any("still pending" in n for n in summary.notes)
    run_generate(store, ScriptedLLM(ideal), GenerateOptions(n=2, types=["single_hop"], max_rounds=1))
    assert all(c["verdict"] != "pending" for c in load_candidates(store))


def test_a_reader_whose_reply_runs_away_rejects_the_item_instead_of_leaving_it_pending(kb_store):
    """A reply cut off even with twice the room is the model's own answer to that prompt (the
    1.5B reader wrote `"C:\\"` and never closed the string): asking again in the next round
    repeats it, so it fails the check it was asked for instead of staying pending."""
    from builder.generate.roundtrip import MASK

    cut = LLMResult(None, "truncated", error="reply cut off at max_tokens=192")
    calls = []

    def runs_away(v):
        calls.append(v["question"])
        masked, q = MASK in v["passages"], v["question"].lower()
        if "shipping" in q and not masked:
            return cut  # the first reading of a shipping question
        if "return" in q and masked:
            return cut  # the reading with the answer hidden of a returns question
        return ideal("roundtrip", v, "verifier")

    cands = only(kb_store, ScriptedLLM(with_overrides(roundtrip=runs_away)), ["single_hop"], n=8)
    assert cands and not any(c["verdict"] == "pending" for c in cands)
    ran_away = {c["question"]: c for c in cands
                if any("ran past its token cap" in r for r in c["rejection_reasons"])}
    assert any("shipping" in q.lower() for q in ran_away)
    assert any("return" in q.lower() for q in ran_away)
    assert all(c["verdict"] == "failed" for c in ran_away.values())
    for q, c in ran_away.items():
        expected = "round_trip" if "shipping" in q.lower() else "unique_answer"
        assert reasons(c) == [expected]
    asked = len(calls)
    run_generate(kb_store, ScriptedLLM(with_overrides(roundtrip=runs_away)),
                 GenerateOptions(n=8, types=["single_hop"], max_rounds=1))
    again = [q for q in calls[asked:] if q in ran_away]
    assert not again  # decided: the next run does not ask them again


def test_a_reader_that_finds_another_answer_elsewhere_rejects_the_question(kb_store):
    store = kb_store

    def elsewhere(v):  # answers from a chunk other than the cited one, whenever it can
        texts = re.findall(r'<passage number="\d+">\n(.*?)\n</passage>', v["passages"], re.S)
        mine = ideal("roundtrip", v, "verifier")
        if len(texts) > 1:
            other = next(i for i in range(1, len(texts) + 1) if i != mine["passage"])
            return {"passage": other, "answer": texts[other - 1][:30]}
        return mine

    cands = only(store, ScriptedLLM(with_overrides(roundtrip=elsewhere)), ["single_hop"])
    # (the Chinese chunk's question finds no other chunk to read, so it stays answerable)
    judged = [c for c in cands if c["verdict"] != "pending" and c["language"] == "en"]
    assert judged and all(c["verdict"] == "failed" for c in judged)
    assert all("unique_answer" in reasons(c) or "round_trip" in reasons(c) for c in judged)


def test_a_multi_hop_item_one_chunk_answers_alone_is_rejected(kb_store):
    store = kb_store

    def one_chunk_will_do(v):
        answer = ideal("roundtrip", v, "verifier")
        if answer["passage"] == 0 and v["passages"].count("<passage") == 1:
            text = v["passages"].split("\n")[1]
            return {"passage": 1, "answer": text}  # quotes its lone passage whatever is asked
        return answer

    cands = only(store, ScriptedLLM(with_overrides(roundtrip=one_chunk_will_do)), ["multi_hop"], n=1)
    judged = [c for c in cands if c["verdict"] != "pending"]
    assert judged and all(c["verdict"] == "failed" for c in judged)
    assert any("second_hop_needed" in reasons(c) or "hops_needed" in reasons(c) for c in judged)


def test_an_unanswerable_item_the_reader_answers_from_the_kb_is_rejected(kb_store):
    store = kb_store
    question = "Do you gift wrap shipping orders?"
    quote = lambda v: {"passage": 1, "answer": v["passages"].split("\n")[1][:40]}
    cands = only(store, ScriptedLLM(with_overrides(
        evolve_unanswerable_topics=lambda v: {"questions": [question]}, roundtrip=quote)),
        ["unanswerable"], n=1)
    assert cands and cands[0]["verdict"] == "failed"
    assert reasons(cands[0]) == ["kb_does_not_answer_llm"]


def test_an_answer_in_no_passage_is_not_an_answer(kb_store):
    store = kb_store
    question = "Do you gift wrap shipping orders?"
    made_up = lambda v: {"passage": 1, "answer": "Yes, for five dollars with a ribbon"}
    cands = only(store, ScriptedLLM(with_overrides(
        evolve_unanswerable_topics=lambda v: {"questions": [question]}, roundtrip=made_up)),
        ["unanswerable"], n=1)
    assert cands and cands[0]["verdict"] == "passed"
    check = next(v for v in cands[0]["verification"] if v["check"] == "kb_does_not_answer_llm")
    assert check["passed"] and "is in no passage" in check["reason"]


def test_temporal_round_trip_must_give_the_newer_value(kb_store):
    store = kb_store
    old_value = lambda v: {"passage": 2 if v["passages"].count("<passage") > 1 else 1,
                           "answer": "30 days"} if "returns" in v["passages"] else \
        ideal("roundtrip", v, "verifier")
    cands = only(store, ScriptedLLM(with_overrides(
        evolve_temporal=lambda v: {"question": "How long do I have to return an item?",
                                   "answer": v["newer_fact"]}, roundtrip=old_value)),
        ["temporal"], n=1)
    judged = [c for c in cands if c["verdict"] != "pending"]
    assert judged and all(c["verdict"] == "failed" for c in judged)
    assert any("round_trip" in reasons(c) for c in judged)


def test_a_question_its_own_chunk_answers_otherwise_once_the_answer_is_hidden_is_vague(kb_store):
    """Asked again with its answer masked, a vague question finds another value in its own
    chunk ("How much does shipping cost?": Express $15, Standard $6 in one chunk)."""
    store = kb_store

    def vague(name, v, role):
        if name == "questions" and "shipping costs" in v["fact"]:
            return {"question": "How much does shipping cost?"}
        if name == "roundtrip" and v["question"] == "How much does shipping cost?":
            texts = re.findall(r'<passage number="\d+">\n(.*?)\n</passage>', v["passages"], re.S)
            for i, text in enumerate(texts, 1):  # the first price it can still see
                if (m := re.search(r"\$\d+", text)):
                    return {"passage": i, "answer": m.group(0)}
            return {"passage": 0, "answer": ""}
        return ideal(name, v, role)

    cands = only(store, ScriptedLLM(vague), ["single_hop"], n=6)
    shipping = [c for c in cands if c["question"] == "How much does shipping cost?"]
    assert shipping and all(c["verdict"] == "failed" for c in shipping)
    assert all("unique_answer" in reasons(c) for c in shipping if "round_trip" not in reasons(c))
    assert any("answer hidden" in r for c in shipping for r in c["rejection_reasons"])


def test_the_hidden_answers_placeholder_read_back_in_part_is_no_other_answer(kb_store):
    """Asked with its answer hidden, the 1.5B reader often copies the placeholder, and
    sometimes only part of it ("__" for "___"): that finds nothing else, so the item stays
    unique (seen on httpx: "What is the name of the network-level logger?" -> httpcore)."""
    from builder.generate.roundtrip import MASK

    def reads_the_blank(v):
        texts = re.findall(r'<passage number="\d+">\n(.*?)\n</passage>', v["passages"], re.S)
        hidden = next((i for i, text in enumerate(texts, 1) if MASK in text), None)
        if hidden is not None:
            return {"passage": hidden, "answer": "__"}
        return ideal("roundtrip", v, "verifier")

    blanks = []

    def counted(v):
        reply = reads_the_blank(v)
        blanks.append(reply["answer"] == "__")
        return reply

    cands = only(kb_store, ScriptedLLM(with_overrides(roundtrip=counted)), ["single_hop"], n=4)
    passed = [c for c in cands if c["verdict"] == "passed"]
    assert any(blanks) and passed
    for c in passed:
        assert any(r["check"] == "unique_answer" and r["passed"] for r in c["verification"])
    assert not any("unique_answer" in reasons(c) for c in cands)


def test_masking_hides_every_occurrence_of_the_answer():
    from builder.generate.roundtrip import MASK, masked

    chunk = {"id": "c", "text": "Express costs $15. Express shipping: $15 flat, or $6 standard."}
    assert masked(chunk, "$15")["text"] == f"Express costs {MASK}. Express shipping: {MASK} flat, or $6 standard."


def _subject(ctype, question, answer, names, evidences):
    from builder.generate.checks import Subject

    facts = [{"id": f"f{i}", "chunk_id": "c", "text": ev, "evidence": ev, "entities": [name]}
             for i, (name, ev) in enumerate(zip(names, evidences))]
    return Subject(None, {"type": ctype, "question": question, "answer": answer}, facts, {})


def test_a_comparison_names_both_sides_or_neither():
    from builder.generate.checks import names_both_sides

    ev = ["The Plus plan keeps notes for 12 months.", "The Standard plan keeps notes for 1 month."]
    names = ["Plus plan", "Standard plan"]
    answer = "The Plus plan: 12 months against 1 month for the Standard plan."
    assert names_both_sides(_subject("comparative", "Which plan keeps notes longer?", answer,
                                     names, ev))[0]
    assert names_both_sides(_subject("comparative", "Does the Plus plan keep notes longer than "
                                     "the Standard plan?", answer, names, ev))[0]
    ok, why = names_both_sides(_subject("comparative", "How long does the Plus plan keep notes?",
                                        answer, names, ev))
    assert not ok and "only" in why


def test_an_ambiguous_question_asking_for_each_reading_is_a_comparison():
    from builder.generate.checks import question_underspecified

    ev = ["The Plus plan keeps notes for 12 months.", "The Standard plan keeps notes for 1 month."]
    names = ["Plus plan", "Standard plan"]
    assert question_underspecified(_subject("ambiguous", "How long does a plan keep notes?", "x",
                                            names, ev))[0]
    assert not question_underspecified(_subject("ambiguous", "How long does each plan keep "
                                                "notes?", "x", names, ev))[0]


def test_a_comparison_asking_for_a_difference_opens_with_the_difference():
    from builder.generate.checks import states_both_values

    ev = ["Maternity Leave lasts up to 52 weeks.", "Adoption Leave lasts up to 21 weeks."]
    names = ["Maternity Leave", "Adoption Leave"]
    q = "How much longer is Maternity Leave than Adoption Leave?"
    assert not states_both_values(_subject("comparative", q, "52 weeks: Maternity Leave lasts "
                                           "52 weeks and Adoption Leave 21.", names, ev))[0]
    assert states_both_values(_subject("comparative", q, "31 weeks longer: 52 weeks against 21.",
                                       names, ev))[0]
