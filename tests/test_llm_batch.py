"""Staging requests for batch engines and importing their results (builder/llm/batch/).

Each test builds the scripted knowledge base, runs `golden generate --batch DIR` (its first
pass stages the facts calls), answers the request file with the scripted model in the shape
an engine writes (tests/support/batch_engine.py: vLLM's, or the OpenAI Batch API's), runs
`golden batch import` and checks the database and the next pass's files.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from builder.generate.models import WrittenQuestions
from builder.llm.client import cache_key
from builder.llm.structured import cache_schema
from builder.store import Store
from tests.stub_endpoint import StubEndpoint
from tests.support.batch_engine import run_file, write_jsonl
from tests.support.scripted_kb import build_kb

DEAD_URL = "http://127.0.0.1:9/v1"  # nothing listens there: staging must never try


def stage(golden_cli, tmp_path: Path, *more: str, url: str = DEAD_URL, n: int = 14):
    db = tmp_path / "g.db"
    if not db.exists():
        build_kb(db).close()
    code, out, err = golden_cli("--db", str(db), "generate", "--n", str(n), "--base-url", url,
                                "--api-key", "sk-test", "--model", "stub-model",
                                "--batch", str(tmp_path / "jobs"), *more)
    assert code == 0, err
    return err


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def request_files(tmp_path: Path, round_no: int | None = None) -> list[Path]:
    pattern = f"requests-r{round_no:03d}-*" if round_no else "requests-r*"
    return sorted(p for p in (tmp_path / "jobs").glob(pattern + ".jsonl")
                  if not p.name.endswith((".results.jsonl", ".errors.jsonl")))


def db_rows(tmp_path: Path, sql: str, params=()) -> list[dict]:
    with Store(tmp_path / "g.db") as store:
        return store.query(sql, params)


def import_files(golden_cli, tmp_path: Path, *files: Path, config: Path | None = None):
    extra = ["--config", str(config)] if config else []
    return golden_cli("--db", str(tmp_path / "g.db"), "batch", "import", *extra,
                      *map(str, files))


@pytest.fixture
def stub():
    with StubEndpoint() as endpoint:
        yield endpoint


# ------------------------------------------------------------------------------- staging

def test_staging_writes_batch_api_lines_the_live_client_would_send(tmp_path, golden_cli):
    err = stage(golden_cli, tmp_path)
    [path] = request_files(tmp_path)
    staged = lines(path)
    assert len(staged) >= 5
    for line in staged:
        assert set(line) == {"custom_id", "method", "url", "body"}
        assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
        body = line["body"]
        assert body["model"] == "stub-model" and body["max_tokens"] == 150  # question.prompt's cap
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["name"] == "WrittenQuestions"
        # custom_id is golden's cache key for exactly these messages
        assert line["custom_id"] == cache_key(DEAD_URL, "stub-model", body["messages"],
                                              {"temperature": 0.2, "max_tokens": 150},
                                              cache_schema(WrittenQuestions))
    assert len({x["custom_id"] for x in staged}) == len(staged)
    manifest = json.loads((tmp_path / "jobs" / "manifest.json").read_text())
    [entry] = manifest["files"]
    data = path.read_bytes()
    assert entry["name"] == path.name and entry["lines"] == len(staged)
    assert entry["bytes"] == len(data) and entry["sha256"] == hashlib.sha256(data).hexdigest()
    assert entry["stages"] == {"question": len(staged)} and entry["model"] == "stub-model"
    assert manifest["rounds"] == 1 and manifest["finished"] == {}
    [message] = [x for x in err.splitlines() if "staged" in x]
    assert path.name in message and "golden batch submit" in message


def test_files_split_at_the_line_and_byte_limits(tmp_path, golden_cli, monkeypatch):
    import builder.llm.batch.staging as staging

    monkeypatch.setattr(staging, "MAX_LINES", 2)
    stage(golden_cli, tmp_path)
    files = request_files(tmp_path)
    assert len(files) >= 3 and all(len(lines(p)) <= 2 for p in files)
    everything = [x["custom_id"] for p in files for x in lines(p)]
    staged = db_rows(tmp_path, "SELECT custom_id, file FROM batch_requests")
    assert sorted(everything) == sorted(r["custom_id"] for r in staged)
    assert {Path(r["file"]).name for r in staged} == {p.name for p in files}

    one_line = max(len(line) for p in files for line in p.read_bytes().splitlines(True)) + 10
    monkeypatch.setattr(staging, "MAX_LINES", 50_000)
    monkeypatch.setattr(staging, "MAX_BYTES", one_line)
    (tmp_path / "g.db").unlink()
    for p in (tmp_path / "jobs").iterdir():
        p.unlink()
    stage(golden_cli, tmp_path)
    files = request_files(tmp_path)
    assert len(files) >= 2 and all(len(p.read_bytes()) <= one_line for p in files)
    manifest = json.loads((tmp_path / "jobs" / "manifest.json").read_text())
    assert sorted(f["name"] for f in manifest["files"]) == sorted(p.name for p in files)
    assert sum(f["lines"] for f in manifest["files"]) == len(staged)


def test_batch_needs_a_model_and_refuses_a_budget(tmp_path, golden_cli):
    build_kb(tmp_path / "g.db").close()
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "generate", "--batch", "jobs")
    assert code == 2 and "--batch needs --model" in err
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "generate", "--batch", "jobs",
                              "--model", "m", "--budget", "1")
    assert code == 2 and "--budget does not apply to --batch" in err
    assert not (tmp_path / "jobs").exists()


def test_dry_run_prices_batched_calls_at_the_batch_rate(tmp_path, golden_cli):
    build_kb(tmp_path / "g.db").close()
    (tmp_path / "golden.toml").write_text(
        '[prices."priced"]\ninput_per_mtok = 2.0\noutput_per_mtok = 8.0\n'
        'batch_input_per_mtok = 1.0\nbatch_output_per_mtok = 4.0\n')
    base = ["--db", str(tmp_path / "g.db"), "generate", "--n", "6", "--model", "priced",
            "--base-url", DEAD_URL, "--dry-run"]
    code, live, err = golden_cli(*base)
    assert code == 0, err
    code, batched, err = golden_cli(*base, "--batch", "jobs")
    assert code == 0, err

    def cost(out: str) -> float:
        return float(re.search(r"cost\s+\$([0-9.]+)", out).group(1))

    # both figures are printed to 4 decimals: half of one rounded figure is the other to 1e-4
    assert cost(live) > 0 and cost(batched) == pytest.approx(cost(live) / 2, abs=1e-4)
    assert not (tmp_path / "jobs").exists()  # a dry run stages nothing


# -------------------------------------------------------------------------------- import

def test_vllm_results_are_imported_and_failed_lines_staged_again(tmp_path, golden_cli):
    def fault_for(hit):
        return "500" if hit.seq == 0 else ("reset" if hit.seq == 1 else None)

    with StubEndpoint(fault_for=fault_for) as stub:
        stage(golden_cli, tmp_path)
        [request] = request_files(tmp_path, 1)
        [results] = run_file(stub, request, shape="vllm")
    out = lines(results)
    assert [x["custom_id"] for x in out] == [x["custom_id"] for x in lines(request)]  # order
    assert isinstance(out[0]["error"], dict) and isinstance(out[1]["error"], str)
    code, _, err = import_files(golden_cli, tmp_path, results)
    assert code == 0, err
    assert f"{len(out) - 2} replies stored ({len(out) - 2} ok)" in err
    assert "2 failed (staged again by the next pass)" in err
    calls = db_rows(tmp_path, "SELECT cache_key, status, error, params, messages FROM llm_calls")
    assert sorted(c["status"] for c in calls).count("error") == 2
    failed = {c["cache_key"] for c in calls if c["status"] == "error"}
    assert {c["cache_key"] for c in calls} == {x["custom_id"] for x in out}
    assert all(json.loads(c["params"])["batch"] is True and c["messages"] for c in calls)
    assert any("stub internal error" in (c["error"] or "") for c in calls)

    stage(golden_cli, tmp_path)  # the next pass stages exactly the failed ones again
    [again] = request_files(tmp_path, 2)
    assert {x["custom_id"] for x in lines(again)} == failed


def test_openai_output_and_error_files_join_on_custom_id_in_any_order(tmp_path, golden_cli):
    with StubEndpoint(fault_for=lambda hit: "500" if hit.seq == 2 else None) as stub:
        stage(golden_cli, tmp_path)
        [request] = request_files(tmp_path, 1)
        results, errors = run_file(stub, request, shape="openai")
    order = [x["custom_id"] for x in lines(request)]
    assert [x["custom_id"] for x in lines(results)] != [c for c in order if c != order[2]]
    code, _, err = import_files(golden_cli, tmp_path, errors, results)
    assert code == 0, err
    ok = db_rows(tmp_path, "SELECT cache_key FROM llm_calls WHERE status = 'ok'")
    assert {r["cache_key"] for r in ok} == set(order) - {order[2]}


def test_importing_twice_or_overlapping_files_stores_each_reply_once(tmp_path, golden_cli, stub):
    stage(golden_cli, tmp_path)
    [request] = request_files(tmp_path, 1)
    [first] = run_file(stub, request, shape="vllm")
    again = first.with_name("second-run.jsonl")
    # vLLM run twice on the same file: new line ids, the same custom_ids
    write_jsonl(again, [{**x, "id": x["id"] + "-again"} for x in lines(first)])
    code, _, err = import_files(golden_cli, tmp_path, first)
    assert code == 0, err
    before = db_rows(tmp_path, "SELECT count(*) AS n FROM llm_calls")[0]["n"]
    code, _, err = import_files(golden_cli, tmp_path, first, again)
    assert code == 0, err
    n = len(lines(first))
    assert f"{2 * n} duplicates skipped" in err and "0 replies stored" in err
    assert db_rows(tmp_path, "SELECT count(*) AS n FROM llm_calls")[0]["n"] == before == n


def test_foreign_custom_ids_are_counted_and_never_stored(tmp_path, golden_cli, stub):
    stage(golden_cli, tmp_path)
    [request] = request_files(tmp_path, 1)
    [results] = run_file(stub, request, shape="vllm")
    good = lines(results)
    foreign = {**good[0], "id": "other-1", "custom_id": "request-1"}
    mixed = write_jsonl(tmp_path / "mixed.jsonl", [foreign, *good])
    code, _, err = import_files(golden_cli, tmp_path, mixed)
    assert code == 0, err
    assert "1 lines with a custom_id golden never staged here, ignored (e.g. request-1)" in err
    assert not db_rows(tmp_path, "SELECT 1 FROM llm_calls WHERE cache_key = 'request-1'")
    assert not db_rows(tmp_path, "SELECT 1 FROM batch_replies WHERE custom_id = 'request-1'")
    assert db_rows(tmp_path, "SELECT count(*) AS n FROM llm_calls")[0]["n"] == len(good)


@pytest.mark.parametrize("bad, message", [
    ("{not json", "not JSON"),
    ('{"custom_id": 5, "response": null, "error": "x"}', "custom_id"),
    ('{"custom_id": "a"}', "needs a response or an error"),
    ('{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": {}}',
     "this is a request line"),
    ('{"custom_id": "a", "response": {"status_code": 200}, "error": null}', "response.body"),
])
def test_a_malformed_line_stops_the_import_naming_file_and_line(tmp_path, golden_cli, stub,
                                                               bad, message):
    stage(golden_cli, tmp_path)
    [request] = request_files(tmp_path, 1)
    [results] = run_file(stub, request, shape="vllm")
    good = results.read_text().splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([good[0], good[1], bad, *good[2:]]) + "\n")
    code, _, err = import_files(golden_cli, tmp_path, results, broken)
    assert code == 2
    assert f"{broken}:3: " in err and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    # nothing from any file was stored, not even the good file named first
    assert db_rows(tmp_path, "SELECT count(*) AS n FROM llm_calls")[0]["n"] == 0


def test_replies_are_read_as_the_live_client_reads_them(tmp_path, golden_cli):
    """Cut off -> one retry with twice the room; not valid -> one repair round; a refusal is
    final. The follow-ups are staged by the next pass, as the live client would send them."""
    faults: dict[int, str] = {}

    def fault_for(hit):
        return faults.get(hit.seq)

    with StubEndpoint(fault_for=fault_for) as stub:
        stage(golden_cli, tmp_path)
        [request] = request_files(tmp_path, 1)
        staged = lines(request)
        faults.update({0: "truncated", 1: "bad_schema", 2: "refusal"})
        [results] = run_file(stub, request, shape="vllm")
        code, _, err = import_files(golden_cli, tmp_path, results)
        assert code == 0, err
        assert "2 follow-up requests for the next pass (1 longer, 1 repair)" in err
        refused = db_rows(tmp_path, "SELECT status, error FROM llm_calls WHERE cache_key = ?",
                          (staged[2]["custom_id"],))
        assert [r["status"] for r in refused] == ["refusal"]

        stage(golden_cli, tmp_path)
        [follow] = request_files(tmp_path, 2)
        second = {x["custom_id"]: x for x in lines(follow)}
        assert set(second) == {staged[0]["custom_id"] + "-1", staged[1]["custom_id"] + "-1"}
        longer = second[staged[0]["custom_id"] + "-1"]["body"]
        # twice the room of the stage's own cap (question.prompt: 80)
        assert longer["max_tokens"] == 300 and longer["messages"] == staged[0]["body"]["messages"]
        repair = second[staged[1]["custom_id"] + "-1"]["body"]["messages"]
        assert repair[:2] == staged[1]["body"]["messages"]
        assert repair[2]["role"] == "assistant" and repair[3]["role"] == "user"
        assert "could not be used" in repair[3]["content"]

        faults.clear()
        faults.update({len(stub.log): "truncated"})  # the longer retry is cut off again
        [results] = run_file(stub, follow, shape="vllm")
        code, _, err = import_files(golden_cli, tmp_path, results)
        assert code == 0, err
    rows = {r["cache_key"]: r for r in db_rows(
        tmp_path, "SELECT cache_key, status, error, prompt_tokens, attempts FROM llm_calls")}
    truncated = rows[staged[0]["custom_id"]]
    assert truncated["status"] == "truncated" and "max_tokens=300" in truncated["error"]
    assert truncated["prompt_tokens"] == 200 and truncated["attempts"] == 2  # both steps
    assert rows[staged[1]["custom_id"]]["status"] == "ok"  # repaired


def test_a_format_complaint_steps_down_and_retries_are_capped(tmp_path, golden_cli):
    (tmp_path / "golden.toml").write_text("[llm]\nmax_retries = 1\n")

    def complaint(custom_id: str, n: int) -> Path:
        return write_jsonl(tmp_path / f"errors-{n}.jsonl", [{
            "id": f"e{n}", "custom_id": custom_id,
            "response": {"status_code": 400, "request_id": "r", "body": {"error": {
                "message": "response_format json_schema is not supported", "type": "x"}}},
            "error": None}])

    stage(golden_cli, tmp_path)
    first = lines(request_files(tmp_path, 1)[0])[0]
    cid = first["custom_id"]
    code, _, err = import_files(golden_cli, tmp_path, complaint(cid, 1),
                                config=tmp_path / "golden.toml")
    assert code == 0 and "1 failed (staged again" in err
    stage(golden_cli, tmp_path)
    [again] = [x for x in lines(request_files(tmp_path, 2)[0]) if x["custom_id"] == cid]
    assert again["body"]["response_format"] == {"type": "json_object"}
    assert "JSON" in again["body"]["messages"][0]["content"]  # format instructions added
    code, _, err = import_files(golden_cli, tmp_path, complaint(cid, 2),
                                config=tmp_path / "golden.toml")
    assert code == 0 and "1 failed for good (retries used up)" in err
    stage(golden_cli, tmp_path)
    staged_third = [x["custom_id"] for p in request_files(tmp_path, 3) for x in lines(p)]
    assert cid not in staged_third  # final: the job was told, like a live failure


def test_golden_batch_import_takes_a_folder_of_fetched_files(tmp_path, golden_cli, stub):
    stage(golden_cli, tmp_path)
    [request] = request_files(tmp_path, 1)
    run_file(stub, request, shape="openai")
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "batch", "import",
                              str(tmp_path / "jobs"))
    assert code == 0, err
    assert f"{len(lines(request))} replies stored" in err


def test_an_import_cut_short_is_finished_by_importing_the_same_files_again(tmp_path,
                                                                          golden_cli, stub,
                                                                          monkeypatch):
    """Lines are stored a few to a transaction: a crash (here the disk filling up on the
    third line) keeps the transactions already committed and rolls back the one in flight;
    the same import again stores the rest, each reply once."""
    import errno

    import builder.llm.batch.importer as importer

    stage(golden_cli, tmp_path)
    [request] = request_files(tmp_path, 1)
    [results] = run_file(stub, request, shape="vllm")
    n = len(lines(results))
    assert n > 3
    real_apply = importer._Importer.apply
    applied = []

    def failing_apply(self, res):
        if len(applied) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        applied.append(res.custom_id)
        return real_apply(self, res)

    monkeypatch.setattr(importer, "CHUNK", 2)
    monkeypatch.setattr(importer._Importer, "apply", failing_apply)
    code, _, err = import_files(golden_cli, tmp_path, results)
    assert code == 1 and "No space left on device" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    stored = db_rows(tmp_path, "SELECT cache_key FROM llm_calls")
    assert sorted(r["cache_key"] for r in stored) == sorted(applied)  # the first transaction

    monkeypatch.setattr(importer._Importer, "apply", real_apply)
    code, _, err = import_files(golden_cli, tmp_path, results)
    assert code == 0, err
    assert f"{n - 2} replies stored" in err and "2 duplicates skipped" in err
    keys = [r["cache_key"] for r in db_rows(tmp_path, "SELECT cache_key FROM llm_calls")]
    assert sorted(keys) == sorted(x["custom_id"] for x in lines(request))  # each once


def test_a_pass_that_cannot_write_its_files_stages_nothing(tmp_path, golden_cli, monkeypatch):
    """--batch naming a file is an input error; a disk that fills up while the request files
    are written fails the pass with one line and leaves no request, file or manifest behind,
    so the same command stages everything once there is room."""
    import errno

    import builder.llm.batch.staging as staging

    build_kb(tmp_path / "g.db").close()
    (tmp_path / "jobs").write_text("not a folder")
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "generate", "--n", "6",
                              "--base-url", DEAD_URL, "--model", "stub-model", "--batch",
                              str(tmp_path / "jobs"))
    assert code == 2 and "'--batch'" in err and "is a file" in err
    assert str(tmp_path / "jobs") in err and len(err.strip().splitlines()) == 1
    (tmp_path / "jobs").unlink()

    real_add = staging.RequestWriter.add
    written = []

    def full_disk(self, *args, **kwargs):
        if len(written) == 2:  # the first pass stages 3 requests at --n 6
            raise OSError(errno.ENOSPC, "No space left on device", str(self.dir))
        written.append(args[0])
        return real_add(self, *args, **kwargs)

    monkeypatch.setattr(staging.RequestWriter, "add", full_disk)
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "generate", "--n", "6",
                              "--base-url", DEAD_URL, "--model", "stub-model", "--batch",
                              str(tmp_path / "jobs"))
    [error] = [x for x in err.splitlines() if not x.startswith("golden: facts:")]  # progress
    assert code == 1 and error.endswith(f"{tmp_path / 'jobs'}: No space left on device")
    assert list((tmp_path / "jobs").iterdir()) == []  # no request file, temp file or manifest
    assert db_rows(tmp_path, "SELECT count(*) AS n FROM batch_requests")[0]["n"] == 0
    assert db_rows(tmp_path, "SELECT count(*) AS n FROM llm_calls")[0]["n"] == 0

    monkeypatch.setattr(staging.RequestWriter, "add", real_add)
    stage(golden_cli, tmp_path)
    [path] = request_files(tmp_path)
    assert set(written) <= {x["custom_id"] for x in lines(path)}
    assert db_rows(tmp_path, "SELECT count(*) AS n FROM batch_requests")[0]["n"] == len(lines(path))


def test_identical_requests_are_staged_once_concurrent_or_not(tmp_path):
    """The live client's single flight, and the pass's own memory: one line per request."""
    import asyncio

    from builder.errors import JobStopped
    from builder.generate.models import WrittenQuestions
    from builder.llm.batch.staging import BatchClient, staged_pass
    from builder.llm.prompts import load_prompt
    from builder.llm.settings import LLMSettings

    store = build_kb(tmp_path / "g.db")
    client = BatchClient(store, LLMSettings(model="m", batch_dir=str(tmp_path / "jobs")),
                         job="generate")
    prompt = load_prompt("question")
    same = {"before": "Gold costs ", "after": ".", "answer": "$60", "kind": "a price",
            "title": "Plans", "language": "English", "mention": [], "nearby": [], "partner": [],
            "name_example": []}

    async def ask():
        first = await asyncio.gather(*(client.structured(prompt, same, WrittenQuestions)
                                       for _ in range(3)))
        again = await client.structured(prompt, same, WrittenQuestions)
        other = await client.structured(prompt, {**same, "kind": "an amount"}, WrittenQuestions)
        return [r.status for r in [*first, again, other]]

    with pytest.raises(JobStopped, match="staged 2 requests"):
        with staged_pass(store, client):
            assert asyncio.run(ask()) == ["deferred"] * 5
    [path] = request_files(tmp_path)
    assert len(lines(path)) == 2
    store.close()


@pytest.mark.parametrize("line, message, status", [
    # vLLM: an exception (error a string, status 400), an ErrorResponse (new and old shape)
    ({"id": "v1", "custom_id": "k", "response": {"status_code": 400, "request_id": "r",
                                                "body": None}, "error": "engine died"},
     "engine died", 400),
    ({"id": "v2", "custom_id": "k", "response": {"status_code": 500, "request_id": "r",
                                                "body": None},
      "error": {"error": {"message": "out of memory", "type": "x", "param": None, "code": 500}}},
     "out of memory", 500),
    ({"id": "v3", "custom_id": "k", "response": None,
      "error": {"object": "error", "message": "bad schema", "type": "x", "param": None,
                "code": 400}}, "bad schema", 400),
    # OpenAI: a request that failed (error file), and one the window did not reach
    ({"id": "b1", "custom_id": "k", "response": {"status_code": 429, "request_id": "r",
                                                "body": {"error": {"message": "slow down"}}},
      "error": None}, "slow down", 429),
    ({"id": "b2", "custom_id": "k", "response": None,
      "error": {"code": "batch_expired", "message": "expired"}}, "expired", None),
])
def test_every_engines_error_shape_is_read(line, message, status):
    from builder.llm.batch.formats import parse_result

    res = parse_result(json.dumps(line), path="f.jsonl", line_no=1)
    assert res.completion is None and res.error == message and res.status_code == status
    assert res.reply_id == line["id"] and res.custom_id == "k"
