"""`golden batch submit / status / fetch` against the Batch API stand-in of
tests/stub_endpoint.py (files, batches: create, retrieve, list, output download), driven
through the real openai SDK; and a judged `golden score` completed through staged files only.
"""

from __future__ import annotations

import json

import pytest

from builder.score.judge import PROMPTS as JUDGE_PROMPTS
from builder.store import Store
from tests.stub_endpoint import StubEndpoint
from tests.support.batch_engine import drive
from tests.support.scoring import GOLDEN, RUN, judge_replies, write_jsonl
from tests.support.scripted_kb import build_kb


@pytest.fixture
def stub():
    with StubEndpoint() as endpoint:
        yield endpoint


def generate(golden_cli, tmp_path, url):
    return golden_cli("--db", str(tmp_path / "g.db"), "generate", "--n", "10", "--base-url", url,
                      "--api-key", "sk-test", "--model", "stub-model", "--batch",
                      str(tmp_path / "jobs"))


def batch(golden_cli, tmp_path, command, url, *more):
    return golden_cli("--db", str(tmp_path / "g.db"), "batch", command, str(tmp_path / "jobs"),
                      "--base-url", url, "--api-key", "sk-test", *more)


def manifest(tmp_path) -> dict:
    return json.loads((tmp_path / "jobs" / "manifest.json").read_text())


def test_submit_status_fetch_import_until_the_job_finishes(tmp_path, golden_cli, stub):
    build_kb(tmp_path / "g.db").close()
    stub.batch_api.batch_polls = 2
    rounds = 0
    while True:
        code, out, err = generate(golden_cli, tmp_path, stub.url)
        assert code == 0, err
        if "staged" not in err:
            break
        rounds += 1
        chat_before = sum(1 for h in stub.log)
        code, _, err = batch(golden_cli, tmp_path, "submit", stub.url)
        assert code == 0, err
        assert "submitted as batch_" in err
        code, _, err = batch(golden_cli, tmp_path, "fetch", stub.url)  # still in progress
        assert code == 0 and "not ended yet" in err
        code, out, err = batch(golden_cli, tmp_path, "status", stub.url)
        assert code == 0 and "completed" in out and "awaiting results" in out
        code, _, err = batch(golden_cli, tmp_path, "fetch", stub.url)
        assert code == 0 and "fetched" in err, err
        assert sum(1 for h in stub.log) > chat_before  # the batch ran the requests
        code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "batch", "import",
                                  str(tmp_path / "jobs"))
        assert code == 0, err
        assert rounds < 30
    assert rounds >= 3
    files = manifest(tmp_path)["files"]
    assert stub.batch_api.batches_created == stub.batch_api.uploads == len(files)
    assert all(f["remote"]["status"] == "completed" and f["remote"]["fetched"] for f in files)
    with Store(tmp_path / "g.db") as store:
        assert store.query("SELECT count(*) AS n FROM candidates WHERE verdict = 'passed'")[0]["n"]
    # every request went through the Batch API, none to the chat endpoint directly
    assert stub.chat_requests == 0 and len(stub.log) > 0


def test_a_second_submit_creates_no_second_batch(tmp_path, golden_cli, stub):
    build_kb(tmp_path / "g.db").close()
    generate(golden_cli, tmp_path, stub.url)
    code, _, err = batch(golden_cli, tmp_path, "submit", stub.url)
    assert code == 0, err
    code, _, err = batch(golden_cli, tmp_path, "submit", stub.url)
    assert code == 0 and "already submitted as batch_1" in err
    assert stub.batch_api.batches_created == 1 and stub.batch_api.uploads == 1


def test_submit_resumes_after_a_failure_between_upload_and_batch(tmp_path, golden_cli, stub):
    build_kb(tmp_path / "g.db").close()
    generate(golden_cli, tmp_path, stub.url)
    (tmp_path / "golden.toml").write_text("[llm]\nmax_retries = 0\n")  # the SDK's retries
    stub.batch_api.fail_next = "batches.create"
    code, _, err = batch(golden_cli, tmp_path, "submit", stub.url)
    assert code == 1 and "submit: HTTP 500" in err and "sk-test" not in err
    [entry] = manifest(tmp_path)["files"]
    assert entry["remote"]["input_file_id"] and not entry["remote"]["batch_id"]
    code, _, err = batch(golden_cli, tmp_path, "submit", stub.url)
    assert code == 0, err
    assert stub.batch_api.uploads == 1 and stub.batch_api.batches_created == 1

    # the batch was created but its id never reached the manifest (killed in between): the
    # next submit finds it by its input file instead of creating another
    data = manifest(tmp_path)
    data["files"][0]["remote"]["batch_id"] = None
    (tmp_path / "jobs" / "manifest.json").write_text(json.dumps(data))
    code, _, err = batch(golden_cli, tmp_path, "submit", stub.url)
    assert code == 0 and "found its batch batch_1" in err
    assert stub.batch_api.batches_created == 1


@pytest.mark.parametrize("end", ["expired", "failed"])
def test_requests_a_batch_did_not_run_are_staged_again(tmp_path, golden_cli, stub, end):
    build_kb(tmp_path / "g.db").close()
    generate(golden_cli, tmp_path, stub.url)
    staged = [json.loads(x)["custom_id"] for x in
              (tmp_path / "jobs" / manifest(tmp_path)["files"][0]["name"]).read_text().splitlines()]
    stub.batch_api.batch_status, stub.batch_api.batch_polls = end, 0
    batch(golden_cli, tmp_path, "submit", stub.url)
    code, _, err = batch(golden_cli, tmp_path, "fetch", stub.url)
    assert code == 0 and f"batch {end}" in err
    if end == "expired":
        code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "batch", "import",
                                  str(tmp_path / "jobs"))
        assert code == 0, err
        ran = len(staged) // 2
        assert f"{ran} replies stored" in err and f"{len(staged) - ran} failed" in err
    code, _, err = generate(golden_cli, tmp_path, stub.url)
    assert code == 0 and "round 2" in err
    second = manifest(tmp_path)["files"][1]["name"]
    again = [json.loads(x)["custom_id"] for x in (tmp_path / "jobs" / second).read_text().splitlines()]
    assert set(again) == set(staged[len(staged) // 2:] if end == "expired" else staged)


def test_batch_api_commands_need_a_key_and_a_manifest(tmp_path, golden_cli, stub):
    build_kb(tmp_path / "g.db").close()
    (tmp_path / "jobs").mkdir()
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "batch", "submit",
                              str(tmp_path / "jobs"), "--base-url", stub.url, "--api-key", "k")
    assert code == 2 and "no golden batch manifest here" in err
    generate(golden_cli, tmp_path, stub.url)
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "batch", "submit",
                              str(tmp_path / "jobs"), "--base-url", stub.url)
    assert code == 2 and "no API key" in err


# ----------------------------------------------------------------- a judged score, batched

def _score(golden_cli, tmp_path, db, url, *more):
    return golden_cli("--db", str(db), "score", "--golden", str(tmp_path / "golden.jsonl"),
                      "--run", str(tmp_path / "run.jsonl"), "--base-url", url, "--api-key", "k",
                      "--model", "judge-model", "--out", str(tmp_path / f"{db.stem}.json"), *more)


def test_a_judged_score_through_staged_files_equals_the_live_one(tmp_path, golden_cli):
    write_jsonl(tmp_path / "golden.jsonl", GOLDEN)
    write_jsonl(tmp_path / "run.jsonl", RUN)
    with StubEndpoint(respond=lambda name, v: judge_replies(name, v, "judge"),
                      prompts=JUDGE_PROMPTS) as stub:
        code, _, err = _score(golden_cli, tmp_path, tmp_path / "live.db", stub.url)
        assert code == 0, err
        jobs = tmp_path / "jobs"
        passes, _ = drive(golden_cli, ["--db", str(tmp_path / "batch.db"), "score", "--golden",
                                       str(tmp_path / "golden.jsonl"), "--run",
                                       str(tmp_path / "run.jsonl"), "--base-url", stub.url,
                                       "--api-key", "k", "--model", "judge-model", "--out",
                                       str(tmp_path / "batch.json"), "--batch", str(jobs)],
                          jobs, stub)
    assert passes == 2  # every judge call in one round (code splits the claims); then the report
    live = json.loads((tmp_path / "live.json").read_text())
    batched = json.loads((tmp_path / "batch.json").read_text())
    assert batched["per_query"] == live["per_query"]
    assert batched["summary"] == live["summary"]
    assert live["summary"]["correctness"] and not batched["judge"].get("stopped")
    with Store(tmp_path / "batch.db") as store:
        assert store.query("SELECT count(*) AS n FROM runs")[0]["n"] == 1  # saved once
