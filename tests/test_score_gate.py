"""The CI gate: `--fail-under` for higher-is-better metrics, `--fail-over` for lower-is-better,
wrong direction and non-finite values refused, and the gate as a library over plain figures."""

from __future__ import annotations

import json

import pytest

from builder.errors import InputError, JobError
from builder.score.directions import (
    LOWER_IS_BETTER, SCALE_5, known_metrics, lower_is_better,
)
from builder.score.gate import OVER, UNDER, check_gate, gate_failures, parse_thresholds
from builder.score.judge import JUDGE_METRICS
from tests.fakes import ScriptedLLM
from tests.support.scoring import (
    GOLDEN, RUN, judge_replies, scripted_open_llm, write_jsonl,
)

KNOWN = known_metrics((1, 10))
HIGHER = [m for m in KNOWN if m not in LOWER_IS_BETTER]
LOWER = sorted(LOWER_IS_BETTER)


def parse(under=(), over=(), judge=True):
    return parse_thresholds(under, over, known=KNOWN, judge=judge)


@pytest.mark.parametrize("metric", LOWER)
def test_every_lower_is_better_metric_takes_fail_over_and_refuses_fail_under(metric):
    (t,) = parse(over=[f"{metric}=0.1"])
    assert (t.metric, t.option, t.value) == (metric, OVER, 0.1)
    with pytest.raises(InputError) as info:
        parse(under=[f"{metric}=0.1"])
    assert f"lower is better for {metric}; use --fail-over {metric}=0.1" in str(info.value)


@pytest.mark.parametrize("metric", [m for m in HIGHER if m in JUDGE_METRICS or "@10" in m
                                    or m in ("mrr", "map")])
def test_every_higher_is_better_metric_takes_fail_under_and_refuses_fail_over(metric):
    value = "3" if metric in SCALE_5 else "0.5"
    (t,) = parse(under=[f"{metric}={value}"])
    assert t.option == UNDER
    with pytest.raises(InputError) as info:
        parse(over=[f"{metric}={value}"])
    assert f"higher is better for {metric}; use --fail-under {metric}={value}" in str(info.value)


def test_judge_and_ops_directions_are_the_documented_ones():
    assert lower_is_better("hallucination_rate") and lower_is_better("wrong_refusal_rate")
    assert lower_is_better("latency_p95_ms") and lower_is_better("mean_cost")
    for higher in ("faithfulness", "correctness", "answer_relevancy", "context_relevance",
                   "correct_refusal_rate", "faithfulness_supported", "hit_rate@10", "map"):
        assert not lower_is_better(higher)


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity", "1e999"])
def test_non_finite_values_are_refused(value):
    with pytest.raises(InputError, match="not a finite number"):
        parse(under=[f"map={value}"])
    with pytest.raises(InputError, match="not a finite number"):
        parse(over=[f"hallucination_rate={value}"])


def test_percentages_and_bad_specs():
    (t,) = parse(over=["hallucination_rate=15%"])
    assert t.value == pytest.approx(0.15)
    with pytest.raises(InputError, match="not a number"):
        parse(under=["map=high"])
    with pytest.raises(InputError, match="METRIC=VALUE"):
        parse(under=["map"])
    with pytest.raises(InputError, match="unknown metric 'ndcg_at_7'"):
        parse(under=["ndcg_at_7=0.1"])
    # a cutoff the run does not compute names --k, with the cutoffs to give it
    with pytest.raises(InputError) as info:
        parse(under=["ndcg@7=0.1"])
    assert str(info.value) == ("--fail-under: ndcg@7 needs the cutoff 7 in --k (this run "
                               "computes @1, @10); add --k 1,7,10")


@pytest.mark.parametrize("spec, option, message", [
    ("ndcg@10=150%", UNDER, "ndcg@10 runs from 0 to 1, so this gate would never pass"),
    ("faithfulness=6", UNDER, "faithfulness runs from 1 to 5, so this gate would never pass"),
    ("faithfulness=0.5", UNDER, "faithfulness runs from 1 to 5, so this gate would never fail"),
    ("hallucination_rate=-0.1", OVER, "runs from 0 to 1, so this gate would never pass"),
    ("latency_p95_ms=-1", OVER, "latency_p95_ms is 0 or more, so this gate would never pass"),
])
def test_a_threshold_outside_the_figures_range_is_refused(spec, option, message):
    with pytest.raises(InputError) as info:
        parse(**({"under": [spec]} if option == UNDER else {"over": [spec]}))
    assert message in str(info.value)
    parse(under=["ndcg@10=100%"], over=["hallucination_rate=0"])  # the ends are fine
    with pytest.raises(InputError, match="needs the judge"):
        parse(under=["faithfulness=4"], judge=False)
    parse(over=["latency_p95_ms=800"], judge=False)  # ops figures need no judge


def test_the_gate_fails_in_each_metric_direction_and_on_missing_figures():
    thresholds = parse(under=["faithfulness=4.0", "hit_rate@10=85%"],
                       over=["hallucination_rate=15%", "latency_p95_ms=800"])
    good = {"faithfulness": 4.2, "hit_rate@10": 0.9, "hallucination_rate": 0.02,
            "latency_p95_ms": 500}
    assert gate_failures(good, thresholds) == []
    check_gate(good, thresholds)
    # the case: a 90% hallucination rate used to pass a "--fail-under" gate
    bad = dict(good, hallucination_rate=0.9, faithfulness=3.1)
    assert gate_failures(bad, thresholds) == ["faithfulness 3.1000 < 4",
                                              "hallucination_rate 0.9000 > 0.15"]
    missing = {k: v for k, v in good.items() if k != "latency_p95_ms"}
    assert gate_failures(missing, thresholds) == ["latency_p95_ms not computed (threshold 800)"]
    with pytest.raises(JobError, match="gate failed: faithfulness"):
        check_gate(bad, thresholds)
    assert gate_failures({**good, "faithfulness": float("nan")}, thresholds) == [
        "faithfulness not computed (threshold 4)"]


def scored(golden_cli, tmp_path, *extra, judge=False):
    golden = write_jsonl(tmp_path / "golden.jsonl", GOLDEN)
    run = write_jsonl(tmp_path / "run.jsonl", RUN)
    out = tmp_path / "report.json"
    code, stdout, err = golden_cli("--db", str(tmp_path / "g.db"), "score", "--golden",
                                   str(golden), "--run", str(run), "--no-save", "--out",
                                   str(out), *(() if judge else ("--no-judge",)), *extra)
    return code, err, out


def test_cli_gate_exit_codes(golden_cli, tmp_path):
    code, err, out = scored(golden_cli, tmp_path, "--fail-under", "mrr=0.7", "--fail-under",
                            "hit_rate@1=0.9", "--fail-under", "ndcg@10=0.99")
    assert code == 1
    assert "hit_rate@1 0.5000 < 0.9" in err and "ndcg@10" in err and "mrr " not in err
    assert out.exists()  # the report is written before the gate is checked
    code, err, _ = scored(golden_cli, tmp_path, "--fail-under", "mrr=0.7",
                          "--fail-over", "latency_p95_ms=40", "--fail-over", "mean_cost=0.01")
    assert code == 0, err
    code, err, _ = scored(golden_cli, tmp_path, "--fail-over", "latency_p99_ms=25")
    assert code == 1 and "latency_p99_ms 29.8000 > 25" in err
    code, err, _ = scored(golden_cli, tmp_path, "--fail-under", "map=nan")
    assert code == 2 and "not a finite number" in err
    code, err, _ = scored(golden_cli, tmp_path, "--fail-over", "mrr=0.1")
    assert code == 2 and "use --fail-under mrr=0.1" in err


def test_cli_gate_on_judge_metrics_in_their_directions(golden_cli, tmp_path, monkeypatch):
    from builder.score import commands

    monkeypatch.setattr(commands, "open_llm", scripted_open_llm(ScriptedLLM(judge_replies)))
    # scripted judge: q2 unfaithful -> hallucination_rate 0.5, faithfulness 3.0
    code, err, out = scored(golden_cli, tmp_path, "--fail-over", "hallucination_rate=15%",
                            "--fail-under", "faithfulness=4.0", "--trust-judge", judge=True)
    assert code == 1
    assert "hallucination_rate 0.5000 > 0.15" in err and "faithfulness 3.0000 < 4" in err
    assert json.loads(out.read_text())["summary"]["hallucination_rate"] == 0.5
    code, err, _ = scored(golden_cli, tmp_path, "--fail-under", "hallucination_rate=0.1",
                          judge=True)
    assert code == 2 and "use --fail-over hallucination_rate=0.1" in err
