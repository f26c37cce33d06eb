"""`golden compare BASE RUN2 [RUN3 ...]`: metrics side by side with deltas, paired bootstrap
intervals, arrows in each metric's direction, breakdowns, worse queries, all output formats."""

from __future__ import annotations

import json

import pytest

from builder.score.compare import RESAMPLES, Resamples, compare_reports
from tests.support.scoring import GOLDEN, RUN, write_jsonl


def scored(golden_cli, tmp_path, name, run_rows, *extra):
    golden = write_jsonl(tmp_path / "golden.jsonl", GOLDEN)
    run = write_jsonl(tmp_path / f"{name}.jsonl", run_rows)
    out = tmp_path / f"{name}.report.json"
    code, stdout, err = golden_cli("score", "--golden", str(golden), "--run", str(run),
                                   "--no-judge", "--no-save", "--out", str(out), *extra)
    assert code == 0, err
    return out


def variant(**rankings):
    rows = [dict(r) for r in RUN]
    for row in rows:
        if row["query_id"] in rankings:
            row["retrieved_ids"] = rankings[row["query_id"]]
    return rows


# q1's gold is c1; q2's gold are c2 and c3. Baseline RUN: q1 ["c9","c1"] (rank 2), q2 ["c2","c7"].
THREE = {
    "base": RUN,
    "topk5": variant(q1=["c1", "c9"]),                 # q1 -> rank 1: mrr 0.5 -> 1.0
    "rerank": variant(q1=["c9", "c8", "c7"], q2=["c3", "c2"]),  # q1 lost, q2 both found
}


def test_three_runs_hand_computed_deltas_arrows_and_worse_queries(golden_cli, tmp_path):
    paths = [scored(golden_cli, tmp_path, name, rows) for name, rows in THREE.items()]
    out_json, out_md, out_html = (tmp_path / f"cmp.{x}" for x in ("json", "md", "html"))
    code, stdout, err = golden_cli("compare", *map(str, paths), "--labels",
                                   "before,top-k 5,+ reranker", "--out", str(out_json),
                                   "--out", str(out_md), "--out", str(out_html))
    assert code == 0, err
    result = json.loads(out_json.read_text())
    assert [r["label"] for r in result["runs"]] == ["before", "top-k 5", "+ reranker"]
    rows = {r["metric"]: r for r in result["metrics"]}
    # mrr per query: base q1 0.5, q2 1.0 -> 0.75; topk5 1.0, 1.0 -> 1.0; rerank 0, 1.0 -> 0.5
    assert rows["mrr"]["values"] == [0.75, 1.0, 0.5]
    _, topk5, rerank = rows["mrr"]["changes"]
    assert topk5["delta"] == pytest.approx(0.25) and topk5["verdict"] == "better"
    assert topk5["arrow"] == "↑" and topk5["paired_n"] == 2
    assert rerank["delta"] == pytest.approx(-0.25) and rerank["verdict"] == "worse"
    assert rerank["arrow"] == "↓"
    assert rerank["ci_low"] <= -0.25 <= rerank["ci_high"]
    # recall@10: base q1 1, q2 0.5 -> 0.75; rerank q1 0, q2 1 -> 0.5
    assert rows["recall@10"]["values"] == [0.75, 0.75, 0.5]
    assert rows["recall@10"]["changes"][1]["verdict"] == "same"
    # worse queries: none in top-k 5; q1 in the reranker run (q2 improved there)
    assert result["worse"][1] == []
    (w,) = result["worse"][2]
    assert w["query_id"] == "q1" and w["drops"]["mrr"] == pytest.approx(-0.5)
    assert w["question"] == "What colour is the sky?"
    # breakdowns by type and difficulty, difficulty in natural order
    diff = result["breakdowns"]["difficulty"]
    assert list(diff) == ["easy", "medium", "hard"]  # natural order, not alphabetical
    assert diff["easy"]["metrics"]["mrr"]["values"] == [0.5, 1.0, 0.0]
    assert diff["easy"]["metrics"]["mrr"]["deltas"][1:] == [0.5, -0.5]
    assert diff["easy"]["metrics"]["mrr"]["verdicts"][1:] == ["better", "worse"]
    assert result["breakdowns"]["type"]["multi_hop"]["metrics"]["recall@10"]["values"] == [
        0.5, 0.5, 1.0]
    # operations side by side (no change: the same latencies)
    ops = {r["metric"]: r for r in result["operations"]}
    assert ops["latency_p50_ms"]["values"] == [20, 20, 20]
    md = out_md.read_text()
    assert "| mrr | 0.7500 | 1.0000 | 0.5000 | +0.2500 ↑ better" in md
    assert "-0.2500 ↓ worse" in md and "## By difficulty" in md
    assert "## Worse in + reranker (1 queries)" in md and "What colour is the sky?" in md
    html = out_html.read_text()
    assert '<span class="better">+0.2500 ↑ better' in html
    assert '<span class="worse">-0.2500 ↓ worse' in html
    assert "<svg" in html and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"',
                                                             "")
    assert "+ reranker" in stdout and "What colour is the sky?" in stdout


def test_five_runs_each_compared_to_the_baseline(golden_cli, tmp_path):
    rankings = [["c9", "c1"], ["c1"], ["c8", "c9", "c1"], ["c7"], ["c6", "c5", "c4", "c1"]]
    paths = [scored(golden_cli, tmp_path, f"r{i}", variant(q1=r)) for i, r in enumerate(rankings)]
    code, _, err = golden_cli("compare", *map(str, paths), "--out",
                              str(tmp_path / "c.json"))
    assert code == 0, err
    result = json.loads((tmp_path / "c.json").read_text())
    rows = {r["metric"]: r for r in result["metrics"]}
    # q1 reciprocal ranks 1/2, 1, 1/3, 0, 1/4; q2 is 1.0 in every run
    expected = [(rr + 1.0) / 2 for rr in (0.5, 1.0, 1 / 3, 0.0, 0.25)]
    assert rows["mrr"]["values"] == pytest.approx(expected)
    deltas = [c["delta"] for c in rows["mrr"]["changes"][1:]]
    assert deltas == pytest.approx([0.25, -1 / 12, -0.25, -0.125])
    assert [c["verdict"] for c in rows["mrr"]["changes"][1:]] == ["better", "worse", "worse",
                                                                  "worse"]
    assert [len(w) for w in result["worse"]] == [0, 0, 1, 1, 1]
    assert result["common_queries"] == [3, 3, 3, 3, 3]  # q3 (unanswerable) counts too


def test_lower_is_better_metrics_are_better_when_they_drop():
    def report(rate, latency):
        return {"summary": {"hallucination_rate": rate, "mrr": 0.5},
                "per_query": {"q": {"metrics": {"hallucination_rate": rate, "mrr": 0.5}},
                              "r": {"metrics": {"hallucination_rate": rate, "mrr": 0.5}}},
                "operations": {"latency_p95_ms": latency}, "run": f"r{rate}.jsonl"}

    result = compare_reports([report(0.5, 100), report(0.0, 80), report(1.0, 120)])
    rows = {r["metric"]: r for r in result["metrics"]}
    assert [c["verdict"] for c in rows["hallucination_rate"]["changes"][1:]] == ["better",
                                                                                 "worse"]
    assert [c["arrow"] for c in rows["hallucination_rate"]["changes"][1:]] == ["↓", "↑"]
    assert rows["hallucination_rate"]["lower_is_better"] is True
    ops = {r["metric"]: r for r in result["operations"]}
    assert [c["verdict"] for c in ops["latency_p95_ms"]["changes"][1:]] == ["better", "worse"]


def test_runs_sharing_no_query_exit_2(golden_cli, tmp_path):
    a = scored(golden_cli, tmp_path, "a", RUN)
    other = tmp_path / "other.report.json"
    report = json.loads(a.read_text())
    report["per_query"] = {f"x-{q}": v for q, v in report["per_query"].items()}
    other.write_text(json.dumps(report))
    code, stdout, err = golden_cli("compare", str(a), str(other))
    assert code == 2 and "shares no query with the baseline" in err and stdout == ""


def test_compare_needs_two_reports_and_rejects_non_reports(golden_cli, tmp_path):
    a = scored(golden_cli, tmp_path, "a", RUN)
    code, _, err = golden_cli("compare", str(a))
    assert code == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"summary": {"mrr": "high"}}')
    code, _, err = golden_cli("compare", str(bad), str(bad))
    assert code == 2 and "not a golden score report" in err
    code, _, err = golden_cli("compare", str(a), str(a), "--labels", "one")
    assert code == 2 and "--labels names 1 runs for 2 reports" in err


def test_bootstrap_is_seeded_paired_and_brackets_the_mean():
    diffs = [0.1, -0.2, 0.3, 0.0, 0.5, 0.2]
    pairs = list(enumerate(diffs))
    lo, hi = Resamples(len(diffs), RESAMPLES, seed=3).interval(pairs)
    assert (lo, hi) == Resamples(len(diffs), RESAMPLES, seed=3).interval(pairs)
    assert lo <= sum(diffs) / len(diffs) <= hi
    assert Resamples(1, RESAMPLES, seed=3).interval([(0, 1.0)]) is None
    # one set of draws serves every metric: a metric present on a subset of the items
    draws = Resamples(6, 500, seed=1)
    assert draws.interval([(0, 1.0), (3, 1.0)]) == (1.0, 1.0)
    lo, hi = draws.interval(list(enumerate(diffs)))
    assert lo < hi


def test_runs_sharing_a_name_are_labelled_by_report_file_and_marks_survive_80_columns(
        golden_cli, tmp_path):
    """Three scorings of `run.jsonl` (one per folder) are labelled by their report files,
    and at 80 columns every run's deltas keep their significance marks."""
    import io

    from rich.console import Console

    from builder.score.compare import print_comparison, read_report

    golden = write_jsonl(tmp_path / "golden.jsonl", [
        {"id": f"q{i}", "query": f"Question {i}?", "expected_answer": "A.",
         "relevant_chunk_ids": [f"c{i}"], "type": "single_hop", "difficulty": "easy"}
        for i in range(20)])
    rankings = {"baseline-run": lambda i: ["x", f"c{i}"], "bigger-top-k": lambda i: [f"c{i}"],
                "no-reranker": lambda i: ["x", "y"]}
    paths = []
    for name, ranking in rankings.items():
        folder = tmp_path / name
        folder.mkdir()
        run = write_jsonl(folder / "run.jsonl", [{"query_id": f"q{i}", "retrieved_ids": ranking(i)}
                                                 for i in range(20)])
        out = tmp_path / f"{name}.json"
        code, _, err = golden_cli("score", "--golden", str(golden), "--run", str(run),
                                  "--no-judge", "--no-save", "--out", str(out))
        assert code == 0, err
        paths.append(out)
    result = compare_reports([read_report(str(p)) for p in paths])
    assert [r["label"] for r in result["runs"]] == list(rankings)
    buffer = io.StringIO()
    print_comparison(result, Console(file=buffer, width=80, highlight=False))
    text = buffer.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    mrr = next(line for line in text.splitlines() if line.strip().startswith("mrr "))
    assert mrr.count("*") == 2, text  # both runs' changes are significant and marked
    assert "+0.500↑*" in mrr and "-0.500↓*" in mrr
    assert "bigger-top-k: 20 queries shared" in text and "no-reranker: 20 queries" in text
    wide = io.StringIO()
    print_comparison(result, Console(file=wide, width=140, highlight=False))
    assert "+0.500↑ better*" in wide.getvalue() and "-0.500↓ worse*" in wide.getvalue()
