"""Every judged figure carries its measured agreement: `golden calibrate` stores it per judge
model and prompt versions, reports print it (or "not calibrated"), and a gate on a judged
figure whose judge is not calibrated, or agrees with humans under the kappa threshold, is
refused (exit 2) unless --trust-judge."""

from __future__ import annotations

import json

import pytest

from builder.score import commands
from tests.fakes import ScriptedLLM
from tests.support.scoring import GOLDEN, RUN, judge_replies, scripted_open_llm, write_jsonl


@pytest.fixture
def setup(tmp_path, monkeypatch, golden_cli):
    llm = ScriptedLLM(judge_replies, model="judge-m")  # the name --model gives the real client
    monkeypatch.setattr(commands, "open_llm", scripted_open_llm(llm))
    golden = write_jsonl(tmp_path / "golden.jsonl", GOLDEN)
    run = write_jsonl(tmp_path / "run.jsonl", RUN)
    db = tmp_path / "g.db"

    def score(*extra):
        return golden_cli("--db", str(db), "score", "--golden", str(golden), "--run", str(run),
                          "--model", "judge-m", "--base-url", "http://127.0.0.1:9/v1",
                          "--api-key", "x", *extra)

    def calibrate(humans: dict[str, int]):
        path = tmp_path / "human.csv"
        path.write_text("query_id,metric,score\n" + "".join(
            f"{q},faithfulness,{s}\n" for q, s in humans.items()), encoding="utf-8")
        return golden_cli("--db", str(db), "calibrate", "--import", str(path))
    return score, calibrate, llm, tmp_path


def test_a_gate_on_an_uncalibrated_judge_is_refused_before_any_call(setup):
    score, _, llm, tmp_path = setup
    code, _, err = score("--fail-over", "hallucination_rate=60%")
    assert code == 2 and not llm.calls
    assert "hallucination_rate: the judge (judge-m) is not calibrated" in err
    assert "--trust-judge" in err and len(err.strip().splitlines()) == 1
    code, _, err = score("--fail-over", "hallucination_rate=60%", "--trust-judge",
                         "--out", str(tmp_path / "r.md"))
    assert code == 0, err
    md = (tmp_path / "r.md").read_text()
    assert "| hallucination\\_rate | 0.5000 | not calibrated |" in md


def test_calibrated_judge_gates_and_reports_its_agreement(setup):
    score, calibrate, _, tmp_path = setup
    assert score()[0] == 0  # a saved run with the judge's faithfulness: q1 5, q2 1
    code, out, err = calibrate({"q1": 5, "q2": 1})
    assert code == 0, err
    assert "stored for judge judge-m" in out
    report = tmp_path / "r.json"
    code, _, err = score("--fail-over", "hallucination_rate=60%", "--out", str(report),
                         "--out", str(tmp_path / "r.html"))
    assert code == 0, err
    cal = json.loads(report.read_text())["judge"]["calibration"]
    assert cal["hallucination_rate"]["kappa"] == 1.0 and cal["hallucination_rate"]["n"] == 2
    assert cal["faithfulness"]["calibrated_by"] == "faithfulness"
    assert cal["correctness"] is None  # no human correctness scores
    html = (tmp_path / "r.html").read_text()
    assert "agreement 1.00, kappa 1.00 (n=2, via faithfulness)" in html
    # correctness has no human scores: its gate is still refused
    code, _, err = score("--fail-under", "correctness=3")
    assert code == 2 and "correctness: the judge (judge-m) is not calibrated" in err


def test_a_judge_under_the_kappa_threshold_is_refused_and_the_threshold_is_configurable(setup):
    score, calibrate, _, _ = setup
    assert score()[0] == 0
    assert calibrate({"q1": 1, "q2": 5})[0] == 0  # humans disagree with every judge score
    code, _, err = score("--fail-under", "faithfulness=2")
    assert code == 2
    assert "kappa -1.00 (n=2), under 0.4 (--min-judge-kappa)" in err
    code, _, err = score("--fail-under", "faithfulness=2", "--min-judge-kappa", "-1")
    assert code == 0, err


def test_a_new_prompt_version_is_a_new_judge(setup, tmp_path):
    score, calibrate, _, _ = setup
    assert score()[0] == 0
    assert calibrate({"q1": 5, "q2": 1})[0] == 0
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    from builder.llm.prompts import bundled_prompts_dir

    text = (bundled_prompts_dir() / "judge_claim.prompt").read_text()
    (prompts / "judge_claim.prompt").write_text(text.replace("version: 1", "version: 99"))
    code, _, err = score("--fail-over", "hallucination_rate=60%", "--prompts", str(prompts))
    assert code == 2 and "not calibrated" in err
