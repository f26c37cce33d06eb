"""Bad input gives one line naming the file and line, exit 2, and writes nothing."""

from __future__ import annotations

import json

import pytest

from tests.support.scoring import GOLDEN, RUN, write_jsonl


@pytest.fixture
def golden(tmp_path):
    return write_jsonl(tmp_path / "golden.jsonl", GOLDEN)


def score(golden_cli, tmp_path, golden, run_path, *extra):
    out = tmp_path / "report.json"
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "score", "--golden",
                              str(golden), "--run", str(run_path), "--no-judge", "--out",
                              str(out), *extra)
    return code, err, out


@pytest.mark.parametrize("lines, message, line", [
    (['{"query_id": "q1", "retrieved_ids": ["c1"]}', '{"query_id": "q2", '], "malformed JSON", 2),
    (['{"query_id": "nope", "retrieved_ids": ["c1"]}'], "none of the run's 1 queries is in the golden file", 1),
    (['{"query_id": "q1", "retrieved_ids": []}', '{"query_id": "q1", "retrieved_ids": []}'],
     "duplicate query 'What colour is the sky?' (first on line 1)", 2),
    (['{"query_id": "q1", "retrieved_ids": ["c1", "c2", "c1"]}'], "'c1' appears twice", 1),
    (['{"query_id": "q1", "retrieved_ids": "c1"}'], "retrieved_ids", 1),
    (['{"query_id": "q1", "retrieved_ids": ["c1"], "scores": [1, 2]}'], "scores has 2 values", 1),
    (['{"retrieved_ids": ["c1"]}'], "needs query_id", 1),
    (['["q1"]'], "expected a JSON object", 1),
])
def test_bad_run_lines(tmp_path, golden, lines, message, line, golden_cli):
    run = tmp_path / "run.jsonl"
    run.write_text("\n".join(lines) + "\n")
    code, err, out = score(golden_cli, tmp_path, golden, run)
    assert code == 2
    assert err.startswith(f"golden: error: {run}:{line}: "), err
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_empty_run(tmp_path, golden, golden_cli):
    run = tmp_path / "run.jsonl"
    run.write_text("\n\n")
    code, err, _ = score(golden_cli, tmp_path, golden, run)
    assert code == 2 and "the run is empty" in err


def test_dedupe_flag_keeps_first_occurrence(tmp_path, golden, golden_cli):
    run = write_jsonl(tmp_path / "run.jsonl",
                      [{"query_id": "q1", "retrieved_ids": ["c1", "c1", "c2"]}])
    code, err, out = score(golden_cli, tmp_path, golden, run, "--dedupe")
    assert code == 0, err
    report = json.loads(out.read_text())
    assert report["per_query"]["q1"]["metrics"]["precision@3"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("golden_lines, message, line", [
    (['{"id": "a", "query": "x"}', '{"id": "a", "query": "y"}'], "duplicate id 'a'", 2),
    (['{"id": "a"}'], "query: Field required", 1),
    (['{"id": "a", "query": "x", "relevant_chunk_ids": "c1"}'], "relevant_chunk_ids", 1),
    (['{"query": "x", "expectedAnswer": "y", "relevantChunkIds": []}',
      '{"query": "x ", "expectedAnswer": "z", "relevantChunkIds": []}'], "duplicate query 'x' (first on line 1)", 2),
])
def test_bad_golden_lines(tmp_path, golden_lines, message, line, golden_cli):
    golden = tmp_path / "golden.jsonl"
    golden.write_text("\n".join(golden_lines) + "\n")
    run = write_jsonl(tmp_path / "run.jsonl", RUN)
    code, err, _ = score(golden_cli, tmp_path, golden, run)
    assert code == 2
    assert f"{golden}:{line}: " in err and message in err, err


@pytest.mark.parametrize("qrels, run, message", [
    ("1 0 d1 high\n", "1 Q0 d1 1 1.0 t\n", "qrels:1: relevance 'high' is not an integer"),
    ("1 0 d1 1\n1 0 d1 0\n", "1 Q0 d1 1 1.0 t\n", "qrels:2: 'd1' judged twice"),
    ("1 0 d1\n", "1 Q0 d1 1 1.0 t\n", "qrels:1: expected 'qid iter docno rel'"),
    ("1 0 d1 1\n", "1 Q0 d1 1 1.0 t\n1 Q0 d1 2 0.5 t\n", "run:2: 'd1' retrieved twice"),
    ("1 0 d1 1\n", "1 Q0 d1 1 high t\n", "run:1: score 'high' is not a number"),
    ("1 0 d1 1\n", "# only a comment\n", "run: the run is empty"),
])
def test_bad_trec_files(tmp_path, qrels, run, message, golden_cli):
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    code, _, err = golden_cli("score", "--qrels", str(tmp_path / "qrels"), "--trec-run",
                              str(tmp_path / "run"), "--no-save")
    assert code == 2
    assert message in err, err


def test_option_errors(capsys, tmp_path, golden, golden_cli):
    run = write_jsonl(tmp_path / "run.jsonl", RUN)
    for extra, message in [(("--k", "0,5"), "--k expects"), (("--out", str(tmp_path / "r.txt")),
                           "must end in .json"), (("--qrels", "x"), "not both"),
                           (("--out", str(run / "r.md")), "is a file, not a folder")]:
        code, err, out = score(golden_cli, tmp_path, golden, run, *extra)
        assert code == 2 and message in err, err
        assert not out.exists()  # nothing half-written: neither report is created
    code, _, err = golden_cli("score", "--golden", str(tmp_path / "absent.jsonl"),
                              "--run", str(run), "--no-judge", "--no-save")
    assert code == 2 and "absent.jsonl: file not found" in err


def test_run_schema_accepts_what_score_reads_and_rejects_what_it_refuses():
    from importlib import resources

    import jsonschema

    schema = json.loads((resources.files("builder") / "schemas" / "run.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for row in RUN + [{"query": "What colour is the sky?", "retrieved_ids": []}]:
        validator.validate(row)
    for bad in [{"query_id": "q1"}, {"retrieved_ids": ["a"]},
                {"query_id": "q1", "retrieved_ids": ["a", "a"]},
                {"query_id": "q1", "retrieved_ids": ["a"], "latency_ms": -1}]:
        assert not validator.is_valid(bad), bad
