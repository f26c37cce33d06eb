"""Judge metrics that fail safe: refusal detection by code first (a claim-bearing answer is never
a refusal), faithfulness judged for every answer with claims, the LLM only for unclear answers,
unscorable items listed and counted, and a progress line with an estimate."""

from __future__ import annotations

import pytest

from builder.score.judge import Judge, JudgeInput, JudgeProgress, judge_records
from builder.score.refusal import check_refusal
from tests.fakes import ScriptedLLM


@pytest.mark.parametrize("answer", [
    "I cannot find that in the sources.",
    "Sorry. There is no information about that in the context.",
    "The provided passages do not mention the 2024 opening hours.",
    "I don't know.",
    "",
    "Lo siento, no hay información sobre eso.",
    "Je ne sais pas.",
    "Dazu sind keine Informationen enthalten.",
    "资料中没有提到这个问题。",
    "その情報は記載されていません。",
    "Please rephrase your question.",
])
def test_pure_refusals_are_found_by_code(answer):
    check = check_refusal(answer)
    assert check.verdict == "refusal" and check.decided and not check.carries_claims


@pytest.mark.parametrize("answer", [
    # the embedded judge called answers like these refusals and then skipped faithfulness
    "The passages do not mention the price. However, the store offers free delivery on orders "
    "above fifty euros.",
    "I don't know the exact date, but the store opened in 1998.",
    "The context does not say who founded it; it was incorporated in Delaware in 2004.",
    "No hay información sobre el precio, pero la tienda abre a las 9.",
])
def test_an_answer_with_claims_is_never_a_refusal_even_with_a_refusal_phrase(answer):
    check = check_refusal(answer)
    assert check.verdict == "partial" and not check.is_refusal and check.carries_claims


@pytest.mark.parametrize("answer", [
    "The sky is blue.", "The recipe does not contain sugar.", "Returns are accepted for 30 days.",
    "该商店于1998年开业。", "Il negozio è aperto dalle 9.",
])
def test_plain_answers_are_answers(answer):
    assert check_refusal(answer).verdict == "answer"


@pytest.mark.parametrize("answer", ["Blue.", "Yes.", "No", "N/A"])
def test_only_answers_code_cannot_tell_are_unclear(answer):
    assert check_refusal(answer).verdict == "unclear"


def item(qid, answer, answerable=True, contexts=("The store opened in 1998.",)):
    return JudgeInput(query_id=qid, question="When did the store open?", reference="In 1998.",
                      answer=answer, contexts=list(contexts), answerable=answerable)


def refusing_judge(prompt, variables, role):
    """A bad judge: calls every answer a refusal and every claim unsupported."""
    if prompt == "judge_refusal":
        return {"refusal": True, "reason": "looks like a refusal"}
    if prompt == "judge_claim":
        return {"reason": "x", "supported": False}
    if prompt in ("judge_relevancy", "judge_correctness"):
        return {"score": 3, "reason": "s"}
    if prompt == "judge_context":
        return {"useful": True, "reason": "s"}
    raise AssertionError(prompt)


async def test_planted_answers_refusal_and_faithfulness_fail_safe():
    llm = ScriptedLLM(refusing_judge)
    items = [
        item("answer", "The store opened in 2001 in Berlin."),            # claims, wrong
        item("partial", "I don't know the exact date, but it opened in 2001."),
        item("refusal", "I cannot find that in the sources."),
        item("unclear", "Blue."),
        item("unanswerable-answered", "The founder was Jane Roe.", answerable=False),
        item("unanswerable-refused", "The sources do not say.", answerable=False),
    ]
    outs = await Judge(llm).judge_all(items)
    # the LLM was asked about refusals only for the unclear answer
    asked = [v["answer"] for p, v, _ in llm.calls if p == "judge_refusal"]
    assert asked == ["Blue."]
    assert outs["answer"].metrics["wrong_refusal_rate"] == 0.0
    assert outs["partial"].metrics["wrong_refusal_rate"] == 0.0
    assert outs["partial"].details["refusal"]["partial"] is True
    assert outs["partial"].details["refusal"]["decided_by"] == "code"
    assert outs["refusal"].metrics["wrong_refusal_rate"] == 1.0
    assert outs["unclear"].metrics["wrong_refusal_rate"] == 1.0  # the LLM's call
    assert outs["unclear"].details["refusal"]["decided_by"] == "llm"
    # faithfulness for every claim-bearing answer, the hallucinations counted (by code: 2001,
    # Berlin and Jane Roe appear in no context, so the LLM was never asked about them)
    for qid in ("answer", "partial", "unanswerable-answered"):
        assert outs[qid].metrics["faithfulness"] == 1.0, qid
        assert outs[qid].metrics["hallucination_rate"] == 1.0, qid
        claims = outs[qid].details["faithfulness"]["claims"]
        assert {c["decided_by"] for c in claims} == {"code"}, qid
    assert [v["claim"] for p, v, _ in llm.calls if p == "judge_claim"] == ["Blue."]
    # the unclear answer was checked too, although the LLM called it a refusal
    assert "faithfulness" in outs["unclear"].metrics
    assert "faithfulness" not in outs["refusal"].metrics
    assert outs["unanswerable-answered"].metrics["correct_refusal_rate"] == 0.0
    assert outs["unanswerable-refused"].metrics == {"correct_refusal_rate": 1.0}


def test_judge_records_as_a_library_and_unscored_items_counted():
    def flaky(prompt, variables, role):
        if prompt == "judge_claim":
            return RuntimeError("connection reset")
        return refusing_judge(prompt, variables, role)

    # "a" leaves code undecided (no value to check, words not in the context): the LLM fails
    outs, judge = judge_records(ScriptedLLM(flaky), [item("a", "The shop is popular."),
                                                     item("b", "I don't know.")])
    assert judge.model == "scripted-model" and judge.stopped is None
    assert [u["metric"] for u in outs["a"].unscored] == ["faithfulness"]
    assert "faithfulness" not in outs["a"].metrics and outs["b"].unscored == []


async def test_progress_lines_with_planned_calls_and_an_estimate():
    lines: list[str] = []
    now = [0.0]

    def clock():
        now[0] += 4.0  # every reading of the clock is 4 s later
        return now[0]

    progress = JudgeProgress(lines.append, every_s=10, clock=clock)
    items = [item(f"q{i}", "The store opened in 1998. It is popular.") for i in range(3)]
    judge = Judge(ScriptedLLM(refusing_judge), progress=progress, concurrency=1)
    # relevancy, correctness, 1 context, and the one claim code leaves open ("It is popular.");
    # "The store opened in 1998." is in the context word for word
    assert judge.planned_calls(items[0]) == 4
    await judge.judge_all(items)
    assert lines[0].startswith("judging 3 answers with scripted-model: about 12 LLM calls "
                               "(refusal decided by code for 3 of 3)")
    assert any("about" in line and "left" in line for line in lines[1:])
    assert lines[-1].startswith("judge: 3/3 answers, 12/~12 calls")


async def test_judge_limited_to_some_aspects_makes_only_their_calls():
    llm = ScriptedLLM(refusing_judge)
    judge = Judge(llm, metrics=("refusal", "faithfulness"))
    items = [item("a", "The store opened in 2001."), item("b", "Blue.")]
    # "a": 2001 is in no context, settled by code; "b": one refusal call, one claim call
    assert [judge.planned_calls(i) for i in items] == [0, 1 + 1]
    outs = await judge.judge_all(items)
    assert sorted({p for p, _, _ in llm.calls}) == ["judge_claim", "judge_refusal"]
    assert set(outs["a"].metrics) == {"wrong_refusal_rate", "faithfulness",
                                      "faithfulness_supported", "hallucination_rate"}
    with pytest.raises(ValueError, match="unknown judge aspects"):
        Judge(llm, metrics=("vibes",))


def test_plain_records_judged_reported_and_gated_without_a_golden_file():
    """What `golden logs evaluate` builds on: judge plain records, report, gate."""
    import json

    from builder.errors import JobError
    from builder.score.gate import check_gate, parse_thresholds, report_figures
    from builder.score.directions import known_metrics
    from builder.score.report import render
    from builder.score.scoring import build_records_report

    records = [
        {"query_id": "log-1", "question": "When did the store open?", "latency_ms": 120,
         "cost": 0.002, "answer": "The store opened in 2001 in Berlin.",
         "contexts": ["The store opened in 1998."]},
        {"query_id": "log-2", "question": "Where is it?", "latency_ms": 80,
         "answer": "I cannot find that in the sources.", "contexts": ["It is in Rotterdam."]},
    ]
    items = [JudgeInput(query_id=r["query_id"], question=r["question"], reference="",
                        answer=r["answer"], contexts=r["contexts"], answerable=True)
             for r in records]
    judged, judge = judge_records(ScriptedLLM(refusing_judge), items,
                                  metrics=("refusal", "faithfulness"))
    report = build_records_report(records, source="logs.jsonl", judged=judged,
                                  judge_model=judge.model)
    assert report["summary"]["hallucination_rate"] == 1.0
    assert report["summary"]["wrong_refusal_rate"] == 0.5
    assert report["operations"]["latency_p50_ms"] == 100.0
    assert "| hallucination\\_rate | 1.0000 |" in render(report, "md")
    html = render(report, "html")
    assert "When did the store open?" in html and "Retrieval misses" not in html
    assert json.loads(render(report, "json"))["per_query"]["log-2"]["metrics"] == {
        "wrong_refusal_rate": 1.0}
    gate = parse_thresholds([], ["hallucination_rate=15%"], known=known_metrics(()), judge=True)
    with pytest.raises(JobError, match="hallucination_rate 1.0000 > 0.15"):
        check_gate(report_figures(report), gate)


async def test_the_first_progress_line_estimates_the_embedded_model_time():
    lines: list[str] = []
    llm = ScriptedLLM(refusing_judge)
    llm.local = True
    judge = Judge(llm, progress=JudgeProgress(lines.append))
    await judge.judge_all([item("a", "The store opened in 1998. It is popular.")])
    assert "about 4 LLM calls, roughly 52 s at ~13 s a call" in lines[0]


def test_every_supported_language_has_refusal_phrases_and_its_turn_words_cut_clauses():
    from pathlib import Path

    from builder.score.refusal import load_phrases
    from builder.text.lexicon import SUPPORTED

    prompts = str(Path(__file__).resolve().parents[1] / "prompts")
    assert {lang for lang, _ in load_phrases(prompts)} >= set(SUPPORTED)
    assert check_refusal("그 정보는 문서에 나와 있지 않습니다.", prompts).verdict == "refusal"
    # Japanese "けれども" (but) turns the sentence: the claim after it is not a refusal
    check = check_refusal("価格は記載されていませんけれども店は1998年に開業しました", prompts)
    assert check.verdict == "partial" and check.claim_clauses == ["店は1998年に開業しました"]
