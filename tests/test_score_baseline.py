"""`golden baseline-run`: BM25 over the ingested chunks -> a run file `golden score` accepts."""

from __future__ import annotations

import json

from builder.score import commands
from builder.store import Store, utcnow
from tests.fakes import ScriptedLLM
from tests.support.scoring import scripted_open_llm, write_jsonl

CHUNKS = {
    "doc-sky#0": "The sky is blue because of Rayleigh scattering.",
    "doc-tea#0": "Green tea is brewed at eighty degrees.",
    "doc-tea#1": "Black tea is brewed with boiling water.",
}


def tiny_kb(path):
    """A knowledge base as `golden ingest` leaves it: documents, chunks and the FTS index."""
    with Store(path) as store, store.write() as db:
        now = utcnow()
        for doc in ("doc-sky", "doc-tea"):
            db["documents"].insert({"id": doc, "path": f"{doc}.md", "title": doc,
                                    "format": "markdown", "content_hash": doc, "n_chars": 1,
                                    "n_tokens": 1, "ingested_at": now, "updated_at": now})
        for seq, (cid, text) in enumerate(CHUNKS.items()):
            db["chunks"].insert({"id": cid, "document_id": cid.split("#")[0], "seq": seq,
                                 "text": text, "n_tokens": len(text.split())})


def test_baseline_run_then_score(tmp_path, monkeypatch, golden_cli):
    db = tmp_path / "g.db"
    tiny_kb(db)
    golden = write_jsonl(tmp_path / "golden.jsonl", [
        {"id": "q1", "query": "Why is the sky blue?", "expected_answer": "Rayleigh scattering",
         "relevant_chunk_ids": ["doc-sky#0"], "type": "single_hop"},
        {"id": "q2", "query": "How hot for green tea?", "expected_answer": "80 degrees",
         "relevant_chunk_ids": ["doc-tea#0"], "type": "single_hop"},
    ])
    llm = ScriptedLLM(lambda prompt, variables, role: {"answer": "From the passages."})
    monkeypatch.setattr(commands, "open_llm", scripted_open_llm(llm))
    run = tmp_path / "run.jsonl"
    code, _, err = golden_cli("--db", str(db), "baseline-run", "--golden", str(golden),
                              "--k", "2", "--answer", "--out", str(run))
    assert code == 0, err
    lines = [json.loads(line) for line in run.read_text().splitlines()]
    assert [line["query_id"] for line in lines] == ["q1", "q2"]
    assert lines[0]["retrieved_ids"][0] == "doc-sky#0"
    assert lines[1]["retrieved_ids"][0] == "doc-tea#0"
    assert len(lines[0]["scores"]) == len(lines[0]["retrieved_ids"]) <= 2
    assert lines[0]["contexts"][0] == CHUNKS["doc-sky#0"]
    assert lines[0]["answer"] == "From the passages." and lines[0]["latency_ms"] >= 0
    assert {name for name, _, role in llm.calls} == {"baseline_answer"}

    code, _, err = golden_cli("--db", str(db), "score", "--golden", str(golden),
                              "--run", str(run), "--no-judge", "--out", str(tmp_path / "r.json"))
    assert code == 0, err
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["hit_rate@1"] == 1.0


def test_baseline_without_answers_needs_no_llm_and_failed_answers_are_skipped(tmp_path, monkeypatch, golden_cli):
    db = tmp_path / "g.db"
    tiny_kb(db)
    golden = write_jsonl(tmp_path / "seed.jsonl", [
        {"query": "black tea water", "expectedAnswer": "boiling", "relevantChunkIds": ["doc-tea#1"],
         "intent": "single_hop"}])
    run = tmp_path / "run.jsonl"
    code, _, err = golden_cli("--db", str(db), "baseline-run", "--golden", str(golden),
                              "--out", str(run))
    assert code == 0, err
    (line,) = [json.loads(x) for x in run.read_text().splitlines()]
    assert line["query"] == "black tea water" and "answer" not in line  # seed: matched by text
    monkeypatch.setattr(commands, "open_llm", scripted_open_llm(
        ScriptedLLM(lambda *a: {"wrong": "shape"})))
    code, _, err = golden_cli("--db", str(db), "baseline-run", "--golden", str(golden),
                              "--answer", "--out", str(run))
    assert code == 0 and "1 answer(s) could not be generated" in err
    assert "answer" not in json.loads(run.read_text())


def test_baseline_on_an_empty_database(tmp_path, golden_cli):
    golden = write_jsonl(tmp_path / "g.jsonl", [{"id": "q", "query": "x"}])
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "baseline-run",
                              "--golden", str(golden), "--out", str(tmp_path / "run.jsonl"))
    assert code == 2 and "run `golden ingest` first" in err
    assert not (tmp_path / "run.jsonl").exists()


def test_judge_reads_ingested_chunk_texts_when_the_run_has_no_contexts(tmp_path, monkeypatch, golden_cli):
    from builder.store.runs import list_run_items, list_runs
    from tests.support.scoring import judge_replies

    db = tmp_path / "g.db"
    tiny_kb(db)
    golden = write_jsonl(tmp_path / "golden.jsonl", [
        {"id": "q1", "query": "Why is the sky blue?", "expected_answer": "Rayleigh scattering",
         "relevant_chunk_ids": ["doc-sky#0"], "type": "single_hop"}])
    run = write_jsonl(tmp_path / "run.jsonl", [
        {"query_id": "q1", "retrieved_ids": ["doc-sky#0", "unknown-id"],
         "answer": "Rayleigh scattering."}])
    llm = ScriptedLLM(judge_replies)
    monkeypatch.setattr(commands, "open_llm", scripted_open_llm(llm))
    code, _, err = golden_cli("--db", str(db), "score", "--golden", str(golden),
                              "--run", str(run))
    assert code == 0, err
    passages = [v["passage"] for name, v, _ in llm.calls if name == "judge_context"]
    assert passages == [CHUNKS["doc-sky#0"]]
    with Store(db) as store:
        (item,) = list_run_items(store, list_runs(store)[0]["id"])
    assert item["contexts"] == [CHUNKS["doc-sky#0"]]
