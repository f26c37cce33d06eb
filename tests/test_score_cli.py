"""`golden score` end to end: golden + run files in, report files and stored run out."""

from __future__ import annotations

import json

import pytest

from builder.score import commands
from builder.store import Store
from builder.store.runs import list_run_items, list_runs
from tests.fakes import ScriptedLLM
from tests.support.scoring import GOLDEN, RUN, judge_replies, scripted_open_llm, write_jsonl


@pytest.fixture
def files(tmp_path):
    return (write_jsonl(tmp_path / "golden.jsonl", GOLDEN),
            write_jsonl(tmp_path / "run.jsonl", RUN), tmp_path / "golden.db")


def test_no_judge_writes_all_report_formats_and_stores_the_run(files, tmp_path, monkeypatch, golden_cli):
    golden, run, db = files
    monkeypatch.setattr(commands, "open_llm", lambda *a, **k: pytest.fail("no LLM with --no-judge"))
    code, out, err = golden_cli(
        "--db", str(db), "score", "--golden", str(golden), "--run", str(run),
        "--no-judge", "--out", str(tmp_path / "r.json"), "--out", str(tmp_path / "r.md"),
        "--out", str(tmp_path / "r.html"))
    assert code == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    s = report["summary"]
    # q1: relevant at rank 2; q2: 1 of 2 relevant at rank 1; q3 unanswerable (left out)
    assert s["hit_rate@1"] == 0.5 and s["mrr@1"] == 0.5 and s["mrr"] == 0.75
    assert s["recall@3"] == pytest.approx(0.75)
    assert s["precision@10"] == pytest.approx(0.1)  # divides by k although 2 were retrieved
    assert "correctness" not in s
    assert set(report["per_query"]["q3"]["metrics"]) == set()
    assert report["breakdowns"]["type"]["single_hop"]["n"] == 1
    assert report["operations"]["latency_p50_ms"] == 20
    assert report["operations"]["mean_cost"] == pytest.approx(0.003)
    assert "hit_rate" in out and "ndcg" in out
    assert (tmp_path / "r.md").read_text().startswith("# golden score")
    assert "<svg" in (tmp_path / "r.html").read_text()
    with Store(db) as store:
        (stored,) = list_runs(store)
        assert stored["summary"]["mrr"] == 0.75
        items = list_run_items(store, stored["id"])
    assert [i["query_id"] for i in items] == ["q1", "q2", "q3"]
    assert items[0]["retrieved_ids"] == ["c9", "c1"]
    assert items[0]["answer"] == "The sky is blue."
    assert items[0]["reference"] == "Blue."


def test_judge_metrics_bad_cases_and_judge_column(files, tmp_path, monkeypatch, golden_cli):
    golden, run, db = files
    llm = ScriptedLLM(judge_replies)
    monkeypatch.setattr(commands, "open_llm", scripted_open_llm(llm))
    code, out, err = golden_cli("--db", str(db), "score", "--golden", str(golden),
                                "--run", str(run), "--out", str(tmp_path / "r.json"))
    assert code == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    s = report["summary"]
    assert s["correctness"] == 3.5
    assert s["faithfulness"] == 3.0          # q1 all claims supported (5), q2 none (1)
    assert s["hallucination_rate"] == 0.5
    assert s["answer_relevancy"] == 5
    assert s["context_relevance"] == 0.5
    assert s["wrong_refusal_rate"] == 0.0
    assert s["correct_refusal_rate"] == 1.0
    assert all(role == "judge" for _, _, role in llm.calls)
    assert report["judge"]["unscored"] == []
    (bad,) = report["bad_cases"]
    assert bad["query_id"] == "q2" and bad["attribution"] == "retrieval"  # c3 never retrieved
    with Store(db) as store:
        items = list_run_items(store, list_runs(store)[0]["id"])
    assert items[1]["judge"]["correctness"]["score"] == 2
    assert items[1]["metrics"]["faithfulness"] == 1.0


def test_seed_format_golden_is_matched_by_query_text(tmp_path, golden_cli):
    seed = [{"query": g["query"], "expectedAnswer": g["expected_answer"],
             "relevantChunkIds": g["relevant_chunk_ids"], "intent": g["type"]} for g in GOLDEN]
    run = [{**{k: v for k, v in r.items() if k != "query_id"}, "query": "  " + g["query"]}
           for r, g in zip(RUN, GOLDEN)]
    golden_path = write_jsonl(tmp_path / "seed.jsonl", seed)
    run_path = write_jsonl(tmp_path / "run.jsonl", run)
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "score", "--golden",
                              str(golden_path), "--run", str(run_path), "--no-judge",
                              "--no-save", "--out", str(tmp_path / "r.json"))
    assert code == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["summary"]["mrr"] == 0.75
    assert set(report["breakdowns"]["type"]) == {"single_hop", "multi_hop", "unanswerable"}
    assert not (tmp_path / "g.db").exists()  # --no-save and --no-judge never open the database


def test_missing_queries_left_out_by_default_and_zero_with_complete(files, tmp_path, golden_cli):
    golden, _, db = files
    run = write_jsonl(tmp_path / "partial.jsonl", RUN[:1])
    code, _, err = golden_cli("score", "--golden", str(golden), "--run", str(run),
                              "--no-judge", "--no-save", "--out", str(tmp_path / "a.json"))
    assert code == 0
    a = json.loads((tmp_path / "a.json").read_text())
    assert a["summary"]["mrr"] == 0.5 and a["missing_query_ids"] == ["q2", "q3"]
    assert "not in the run" in a["warnings"][0]
    code, _, _ = golden_cli("score", "--golden", str(golden), "--run", str(run),
                            "--no-judge", "--no-save", "-c", "--out", str(tmp_path / "b.json"))
    b = json.loads((tmp_path / "b.json").read_text())
    assert b["summary"]["mrr"] == 0.25  # q2 counts as 0; q3 is unanswerable and stays out


def test_trec_files_through_the_cli(tmp_path, golden_cli):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 2\n1 0 d2 0\n2 0 d3 1\n")
    run = tmp_path / "run"
    # ranks deliberately wrong: trec_eval ranks by score, ties by docno descending
    run.write_text("1 Q0 d2 1 0.5 t\n1 Q0 d1 2 0.9 t\n2 Q0 d4 1 1.0 t\n2 Q0 d3 2 1.0 t\n")
    code, out, err = golden_cli("score", "--qrels", str(qrels), "--trec-run", str(run),
                                "--k", "1,2", "--no-save", "--out", str(tmp_path / "r.json"))
    assert code == 0, err
    s = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert s["precision@1"] == 0.5  # q1: d1 first; q2: d4 > d3 on the tie
    assert s["mrr"] == 0.75


def test_retrieval_misses_without_the_judge_in_every_format(files, tmp_path, golden_cli):
    golden, _, db = files
    rows = [dict(r) for r in RUN]
    rows[0]["retrieved_ids"] = ["c9", "c8"]   # q1: its gold c1 never retrieved (worst)
    run = write_jsonl(tmp_path / "misses.jsonl", rows)  # q2: c2 found, c3 missed
    outs = [tmp_path / f"r.{x}" for x in ("json", "md", "html")]
    code, stdout, err = golden_cli("--db", str(db), "score", "--golden", str(golden),
                                   "--run", str(run), "--no-judge", "--no-save", "--k", "1,3",
                                   *[a for o in outs for a in ("--out", str(o))])
    assert code == 0, err
    report = json.loads(outs[0].read_text())
    assert report["bad_cases"] == []            # no judge, no correctness
    misses = report["retrieval_misses"]
    assert [m["query_id"] for m in misses] == ["q1", "q2"]  # worst (nothing found) first
    assert misses[0] == {**misses[0], "gold_ids": ["c1"], "missing_ids": ["c1"],
                         "retrieved_ids": ["c9", "c8"], "recall@3": 0.0,
                         "question": "What colour is the sky?"}
    assert misses[1]["missing_ids"] == ["c3"] and misses[1]["recall@3"] == 0.5
    assert report["counts"]["retrieval_misses"] == 2 and report["retrieval_miss_k"] == 3
    md = outs[1].read_text()
    assert "## Retrieval misses: gold not in the top 3 (2)" in md
    assert md.index("What colour is the sky?") < md.index("How do A and B differ?")
    html = outs[2].read_text()
    assert 'id="miss-0"' in html and 'href="#q-0"' in html and 'id="q-0"' in html
    assert 'href="#miss-0"' in html  # the query's row links back to its miss
    assert "Retrieval misses" in stdout and "What colour is the sky?" in stdout


def test_k_is_bounded(files, golden_cli):
    golden, run, db = files
    for k in ("1001", "5,1000000000", "0"):
        code, _, err = golden_cli("--db", str(db), "score", "--golden", str(golden),
                                  "--run", str(run), "--no-judge", "--k", k)
        assert code == 2 and "integers from 1 to 1000" in err, err
    code, _, err = golden_cli("--db", str(db), "score", "--golden", str(golden),
                              "--run", str(run), "--no-judge", "--no-save", "--k", "1000")
    assert code == 0, err


def test_difficulty_breakdown_in_natural_order(files, tmp_path, golden_cli):
    golden, run, db = files
    code, _, err = golden_cli("--db", str(db), "score", "--golden", str(golden),
                              "--run", str(run), "--no-judge", "--no-save",
                              "--out", str(tmp_path / "r.json"), "--out", str(tmp_path / "r.md"))
    assert code == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert list(report["breakdowns"]["difficulty"]) == ["easy", "medium", "hard"]
    md = (tmp_path / "r.md").read_text()
    part = md[md.index("## By difficulty"):]
    assert part.index("| easy") < part.index("| medium") < part.index("| hard")


def test_trec_run_queries_without_judgments_are_counted(tmp_path, golden_cli):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    trec = tmp_path / "run.txt"
    trec.write_text("q1 Q0 d1 1 2.0 t\nq9 Q0 d3 1 1.0 t\n")
    code, stdout, err = golden_cli("score", "--qrels", str(qrels), "--trec-run",
                                   str(trec), "--no-save", "--out", str(tmp_path / "r.json"))
    assert code == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["counts"]["unknown_in_run"] == 1 and report["counts"]["in_run"] == 1
    assert report["unknown_run_queries"] == [{"line": None, "query": "q9"}]
    assert "1 run queries are not in the qrels and are ignored: 'q9'" in report["warnings"][-1]


def test_out_into_a_missing_folder_creates_it_for_score_and_logs_evaluate(tmp_path, golden_cli):
    """As `--batch DIR` creates its folder; a file in the way is still refused."""
    golden = write_jsonl(tmp_path / "g.jsonl", GOLDEN)
    run = write_jsonl(tmp_path / "r.jsonl", RUN)
    out = tmp_path / "reports" / "today" / "r.json"
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "score", "--golden", str(golden),
                              "--run", str(run), "--no-judge", "--no-save", "--out", str(out))
    assert code == 0, err
    assert json.loads(out.read_text())["summary"]["mrr"] == 0.75
    logs = tmp_path / "logs.jsonl"
    logs.write_text(json.dumps({"id": "a", "timestamp": "2025-03-01T00:00:00Z",
                                "query": "Q?", "answer": "A."}) + "\n")
    assert golden_cli("--db", str(tmp_path / "g.db"), "logs", "import", str(logs))[0] == 0
    out = tmp_path / "nightly" / "logs.md"
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "logs", "evaluate", "--no-judge",
                              "--rate", "1", "--out", str(out))
    assert code == 0, err
    assert out.read_text().startswith("# golden logs")
