"""`golden compare` and the `--fail-under` gate."""

from __future__ import annotations

import json

import pytest

from builder.score.compare import bootstrap_ci
from tests.support.scoring import GOLDEN, RUN, write_jsonl


def scored(golden_cli, tmp_path, name, run_rows, *extra):
    golden = write_jsonl(tmp_path / "golden.jsonl", GOLDEN)
    run = write_jsonl(tmp_path / f"{name}.jsonl", run_rows)
    out = tmp_path / f"{name}.report.json"
    code, stdout, err = golden_cli("score", "--golden", str(golden), "--run", str(run),
                                   "--no-judge", "--no-save", "--out", str(out), *extra)
    return code, err, out


def test_compare_side_by_side_with_ci_and_worse_items(capsys, tmp_path, golden_cli):
    _, _, a = scored(golden_cli, tmp_path, "a", RUN)
    worse = [dict(r) for r in RUN]
    worse[0]["retrieved_ids"] = ["c9", "c8", "c7"]  # q1 loses its relevant chunk
    _, _, b = scored(golden_cli, tmp_path, "b", worse)
    out_json = tmp_path / "cmp.json"
    code, stdout, err = golden_cli("compare", str(a), str(b), "--out", str(out_json),
                                   "--out", str(tmp_path / "cmp.md"))
    assert code == 0, err
    result = json.loads(out_json.read_text())
    rows = {r["metric"]: r for r in result["metrics"]}
    assert rows["mrr"]["a"] == 0.75 and rows["mrr"]["b"] == 0.5
    assert rows["mrr"]["delta"] == pytest.approx(-0.25)
    assert rows["mrr"]["paired_n"] == 2
    assert rows["mrr"]["ci_low"] <= -0.25 <= rows["mrr"]["ci_high"] <= 0
    assert [w["query_id"] for w in result["worse"]] == ["q1"]
    assert "ndcg@10" in result["worse"][0]["drops"]
    assert "mrr" in stdout and "q1" in stdout
    # seeded: the same inputs give the same interval
    code, _, _ = golden_cli("compare", str(a), str(b), "--out", str(tmp_path / "c2.json"))
    assert json.loads((tmp_path / "c2.json").read_text())["metrics"] == result["metrics"]


def test_bootstrap_ci_is_deterministic_and_brackets_the_mean():
    diffs = [0.1, -0.2, 0.3, 0.0, 0.5, 0.2]
    lo, hi = bootstrap_ci(diffs, seed=3)
    assert (lo, hi) == bootstrap_ci(diffs, seed=3)
    assert lo <= sum(diffs) / len(diffs) <= hi
    assert bootstrap_ci([1.0]) is None


def test_compare_rejects_a_file_that_is_not_a_report(tmp_path, golden_cli):
    bad = tmp_path / "bad.json"
    bad.write_text('{"summary": {"mrr": "high"}}')
    code, _, err = golden_cli("compare", str(bad), str(bad))
    assert code == 2 and "not a golden score report" in err


def test_fail_under_exit_codes(tmp_path, golden_cli):
    code, err, out = scored(golden_cli, tmp_path, "a", RUN, "--fail-under", "mrr=0.7",
                            "--fail-under", "hit_rate@1=0.9", "--fail-under", "ndcg@10=0.99")
    assert code == 1
    assert "hit_rate@1 0.5000 < 0.9" in err and "ndcg@10" in err and "mrr " not in err
    assert out.exists()  # the report is written before the gate is checked
    code, err, _ = scored(golden_cli, tmp_path, "b", RUN, "--fail-under", "mrr=0.7")
    assert code == 0, err
    code, err, _ = scored(golden_cli, tmp_path, "c", RUN, "--fail-under", "ndcg@7=0.1")
    assert code == 2 and "unknown metric 'ndcg@7'" in err
    code, err, _ = scored(golden_cli, tmp_path, "d", RUN, "--fail-under", "correctness=4")
    assert code == 2 and "needs the judge" in err
    code, err, _ = scored(golden_cli, tmp_path, "e", RUN, "--fail-under", "mrr")
    assert code == 2 and "METRIC=VALUE" in err
