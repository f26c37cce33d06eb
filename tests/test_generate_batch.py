"""`golden generate --batch DIR` end to end: same inputs and same replies give the same
candidates, live or batched, and a crash between an import and the next pass loses nothing.

The model is the scripted ideal model behind `tests/stub_endpoint.py`: live, it answers over
HTTP; batched, the same code answers the staged request files (`tests/support/batch_engine.py`)
in vLLM's shape or the OpenAI Batch API's, and `golden batch import` brings the results back.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from builder.store import Store
from tests.crash_harness import clean_env
from tests.stub_endpoint import StubEndpoint
from tests.support.batch_engine import drive, new_request_files, run_file
from tests.support.scripted_kb import build_kb

N = 12
COLUMNS = ("id, type, question, answer, language, verdict, difficulty, duplicate_of, chunk_ids, "
           "fact_ids, seed_fact_id, parent_id, evidence, verification, rejection_reasons")


def candidates(db) -> list[dict]:
    with Store(db) as store:
        return store.query(f"SELECT {COLUMNS} FROM candidates ORDER BY id")


def facts(db) -> list[dict]:
    with Store(db) as store:
        return store.query("SELECT id, chunk_id, text, evidence FROM facts ORDER BY id")


def cache_keys(db) -> set[str]:
    with Store(db) as store:
        return {r["cache_key"] for r in store.query("SELECT cache_key FROM llm_calls "
                                                     "WHERE status = 'ok'")}


def generate_args(db, url: str, *more: str) -> list[str]:
    return ["--db", str(db), "generate", "--n", str(N), "--base-url", url, "--api-key", "sk-test",
            "--model", "stub-model", *more]


@pytest.fixture
def stub():
    with StubEndpoint() as endpoint:
        yield endpoint


@pytest.mark.parametrize("shape", ["vllm", "openai"])
def test_same_replies_give_the_same_candidates_live_or_batched(tmp_path, stub, golden_cli, shape):
    build_kb(tmp_path / "live.db").close()
    build_kb(tmp_path / "batch.db").close()
    code, live_out, err = golden_cli(*generate_args(tmp_path / "live.db", stub.url))
    assert code == 0, err
    live_hits = len(stub.log)
    live = candidates(tmp_path / "live.db")
    assert sum(c["verdict"] == "passed" for c in live) >= N // 2  # a real run, not an empty one

    jobs = tmp_path / "jobs"
    passes, batch_out = drive(golden_cli, generate_args(tmp_path / "batch.db", stub.url,
                                                        "--batch", str(jobs)),
                              jobs, stub, shape=shape)
    assert passes > 2
    assert candidates(tmp_path / "batch.db") == live
    assert facts(tmp_path / "batch.db") == facts(tmp_path / "live.db")
    assert cache_keys(tmp_path / "batch.db") == cache_keys(tmp_path / "live.db")
    # no pass contacted the endpoint: every request the stub saw after the live run came
    # through the scripted batch engine, and each was asked once
    assert stub.chat_requests == live_hits
    batch_hits = stub.log[live_hits:]
    assert len({h.body_hash for h in batch_hits}) == len(batch_hits)
    # the same requests, body for body, as the live client sent
    assert {h.body_hash for h in batch_hits} == {h.body_hash for h in stub.log[:live_hits]}
    manifest = json.loads((jobs / "manifest.json").read_text())
    assert manifest["finished"].get("generate")
    assert "Verified" in batch_out or "verified" in batch_out
    # a run with nothing left to do stages nothing and changes nothing
    code, _, err = golden_cli(*generate_args(tmp_path / "batch.db", stub.url, "--batch", str(jobs)))
    assert code == 0 and "staged" not in err
    assert candidates(tmp_path / "batch.db") == live


def test_a_pass_is_rolled_back_and_a_rerun_before_import_stages_nothing_new(tmp_path, stub,
                                                                          golden_cli):
    build_kb(tmp_path / "g.db").close()
    jobs = tmp_path / "jobs"
    args = generate_args(tmp_path / "g.db", "http://127.0.0.1:9/v1", "--batch", str(jobs))
    code, out, err = golden_cli(*args)
    assert code == 0, err
    lines = [x for x in err.splitlines() if x.startswith("golden: staged")]
    assert len(lines) == 1 and "requests-r001-stub-model-1.jsonl" in lines[0]
    assert "golden batch submit" in lines[0] and "vllm run-batch" in lines[0]
    with Store(tmp_path / "g.db") as store:  # the pass wrote nothing but its staged requests
        assert store.query("SELECT count(*) AS n FROM stage_done")[0]["n"] == 0
        assert store.query("SELECT count(*) AS n FROM llm_calls")[0]["n"] == 0
        staged = store.query("SELECT count(*) AS n FROM batch_requests")[0]["n"]
    assert staged == len((jobs / "requests-r001-stub-model-1.jsonl").read_text().splitlines())
    code, out, _ = golden_cli("--db", str(tmp_path / "g.db"), "stats")
    assert f"batch requests by status: staged {staged}" in out
    code, out, err = golden_cli(*args)
    assert code == 0 and "nothing new to stage" in err and f"{staged} requests" in err
    assert sorted(p.name for p in jobs.iterdir()) == ["manifest.json",
                                                      "requests-r001-stub-model-1.jsonl"]


def test_a_crash_between_import_and_the_next_pass_loses_nothing(tmp_path, stub, golden_cli):
    build_kb(tmp_path / "live.db").close()
    code, _, err = golden_cli(*generate_args(tmp_path / "live.db", stub.url))
    assert code == 0, err
    live = candidates(tmp_path / "live.db")

    db, jobs = tmp_path / "batch.db", tmp_path / "jobs"
    build_kb(db).close()
    args = generate_args(db, stub.url, "--batch", str(jobs))
    seen: set[str] = set()
    kills = 0
    for _ in range(40):
        # a pass in a real process, killed with SIGKILL part-way (after its first progress
        # line), then run again to the end
        proc = subprocess.Popen([sys.executable, "-m", "builder.cli", *args], env=clean_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        proc.stderr.readline()
        time.sleep(0.05 * (kills % 3))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        with Store(db) as store:
            assert store.query("PRAGMA integrity_check")[0]["integrity_check"] == "ok"
        code, _, err = golden_cli(*args)
        assert code == 0, err
        if "staged" not in err and "nothing new" not in err:
            break
        results = [r for f in new_request_files(jobs, seen) for r in run_file(stub, f)]
        code, _, err = golden_cli("--db", str(db), "batch", "import", *map(str, results))
        assert code == 0, err
    assert kills > 2
    assert not list(jobs.glob(".staging-*"))  # a killed pass's temporary files are gone
    assert candidates(db) == live


def test_the_finished_summary_prices_batched_calls_at_the_batch_rate(tmp_path, stub, golden_cli):
    (tmp_path / "golden.toml").write_text(
        '[prices."priced-model"]\ninput_per_mtok = 2.0\noutput_per_mtok = 8.0\n'
        'batch_input_per_mtok = 1.0\nbatch_output_per_mtok = 4.0\n')
    db, jobs = tmp_path / "g.db", tmp_path / "jobs"
    build_kb(db).close()
    args = ["--db", str(db), "generate", "--n", "4", "--base-url", stub.url, "--api-key", "k",
            "--model", "priced-model", "--batch", str(jobs)]
    _, out = drive(golden_cli, args, jobs, stub)
    with Store(db) as store:
        rows = store.query("SELECT prompt_tokens, completion_tokens, cost_usd FROM llm_calls "
                           "WHERE status = 'ok'")
    assert rows and all(r["cost_usd"] == pytest.approx(
        (r["prompt_tokens"] * 1.0 + r["completion_tokens"] * 4.0) / 1e6) for r in rows)
    total = sum(r["cost_usd"] for r in rows)
    assert f"cost ${total:.4f}" in " ".join(out.split())  # the summary wraps at the terminal width
