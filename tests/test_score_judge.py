"""Judge failures are counted and listed, never NaN or silent zeros; attribution of bad cases."""

from __future__ import annotations

import json
import math

from builder.llm.types import BudgetExceeded, LLMResult
from builder.score.inputs import read_golden, read_run
from builder.score.judge import Judge, JudgeInput
from builder.score.scoring import ScoreOptions, build_report
from tests.fakes import ScriptedLLM
from tests.support.scoring import GOLDEN, RUN, judge_replies, write_jsonl


def item(**kw):
    base = dict(query_id="q", question="Q?", reference="R", answer="A", contexts=["c1", "c2"],
                answerable=True)
    return JudgeInput(**(base | kw))


async def test_invalid_reply_is_listed_not_zero():
    def respond(prompt, variables, role):
        if prompt == "judge_correctness":
            return {"score": 9, "reason": "out of range"}  # fails validation -> invalid
        if prompt == "judge_context" and variables["passage"] == "c2":
            return LLMResult(None, "error", error="HTTP 500")
        return judge_replies(prompt, variables, role)

    out = (await Judge(ScriptedLLM(respond)).judge_all([item()]))["q"]
    assert "correctness" not in out.metrics and "context_relevance" not in out.metrics
    failed = {u["metric"]: u["reason"] for u in out.unscored}
    assert failed["correctness"].startswith("invalid")
    assert "1 of 2 chunks not judged" in failed["context_relevance"]
    assert out.metrics["answer_relevancy"] == 5
    assert not any(isinstance(v, float) and math.isnan(v) for v in out.metrics.values())


async def test_exception_in_one_call_does_not_stop_the_run():
    def respond(prompt, variables, role):
        if variables.get("question") == "boom?" and prompt == "judge_refusal":
            return RuntimeError("connection reset")
        return judge_replies(prompt, variables, role)

    outs = await Judge(ScriptedLLM(respond)).judge_all([item(query_id="a", question="boom?"),
                                                        item(query_id="b")])
    assert outs["a"].unscored[0]["metric"] == "refusal"
    assert "correctness" in outs["a"].metrics  # the other metrics still ran
    assert outs["b"].unscored == []


async def test_budget_exhausted_stops_calls_and_lists_the_rest():
    calls = []

    def respond(prompt, variables, role):
        calls.append(prompt)
        if len(calls) > 2:
            return BudgetExceeded("budget of $0.01 spent")
        return judge_replies(prompt, variables, role)

    judge = Judge(ScriptedLLM(respond), concurrency=1)
    outs = await judge.judge_all([item(query_id="a"), item(query_id="b")])
    assert judge.stopped == "budget exhausted"
    assert len(calls) == 3  # nothing is sent after the budget ran out
    assert outs["b"].unscored and all("budget exhausted" in u["reason"] for u in outs["b"].unscored)


async def test_one_claim_not_judged_leaves_faithfulness_unscored():
    def respond(prompt, variables, role):
        if prompt == "judge_claim" and "second" in variables["claim"]:
            return {"supported": "maybe"}  # invalid
        return judge_replies(prompt, variables, role)

    out = (await Judge(ScriptedLLM(respond)).judge_all(
        [item(answer="The sky looks nice. The second point is moot.")]))["q"]
    assert "faithfulness" not in out.metrics and "hallucination_rate" not in out.metrics
    (failed,) = [u for u in out.unscored if u["metric"] == "faithfulness"]
    assert "1 of 2 claims not judged" in failed["reason"]


async def test_refusal_on_answerable_item_is_a_wrong_refusal_without_faithfulness():
    out = (await Judge(ScriptedLLM(judge_replies)).judge_all(
        [item(answer="I cannot find this.")]))["q"]
    assert out.metrics["wrong_refusal_rate"] == 1.0
    assert "faithfulness" not in out.metrics


async def test_attribution_generation_and_knowledge_base(tmp_path):
    golden = read_golden(write_jsonl(tmp_path / "g.jsonl", GOLDEN))
    run_rows = [dict(r) for r in RUN]
    run_rows[1]["retrieved_ids"] = ["c2", "c3"]  # every gold chunk retrieved
    run = read_run(write_jsonl(tmp_path / "r.jsonl", run_rows), golden)

    def faithful(prompt, variables, role):
        if prompt == "judge_claim":
            return {"supported": True, "reason": "ok"}
        return judge_replies(prompt, variables, role)

    for respond, cause in [(judge_replies, "generation"), (faithful, "knowledge base")]:
        judge = Judge(ScriptedLLM(respond))
        inputs = [JudgeInput(q, golden.items[q].query, golden.items[q].reference,
                             run[q].record.answer, run[q].record.contexts,
                             golden.items[q].answerable) for q in run]
        judged = await judge.judge_all(inputs)
        report = build_report(golden, run, ScoreOptions(), judged=judged, judge_model="m")
        assert [(b["query_id"], b["attribution"]) for b in report["bad_cases"]] == [("q2", cause)]
        json.dumps(report, allow_nan=False)  # no NaN anywhere in the report
