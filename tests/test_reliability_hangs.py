"""Hangs (issue 32): a command that never ends is data loss for the person waiting.

- A FIFO given as an input file: reading it waits for a writer that never comes. Every
  command that reads a user's file refuses it (one line naming it, exit 2) through the one
  check in `builder.text.input_files`, without opening it for a blocking read.
- An endpoint that sends its status and then one byte every 0.5 s: httpx's timeout is per
  read, so it never fired. The client's `timeout` is an overall deadline for the call; past it
  the request is a timeout, retried by the client's policy, then recorded.

Each command runs as a real process with a time limit that only a hang reaches: the test
fails (instead of hanging the suite) when it does. No timing is asserted.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from builder.llm.client import OpenAIClient
from builder.llm.prompts import load_prompt
from builder.llm.settings import LLMSettings
from tests.stub_endpoint import StubEndpoint
from tests.support.scripted_kb import KB, build_kb

ROOT = Path(__file__).resolve().parents[1]
BAD = Path(__file__).parent / "bad_inputs"
HANG_LIMIT_S = 120  # far above any of these commands' run time: reaching it means a hang


def golden_process(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GOLDEN_DEBUG", None)
    try:
        return subprocess.run([sys.executable, "-m", "builder.cli", *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=HANG_LIMIT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`golden {' '.join(args)}` hung (killed after {HANG_LIMIT_S} s)")


def dump(db: Path) -> list[str]:
    """The database as SQL, less the key `logs import` makes for pseudonyms on first use
    (before it reads a file: not the input check's concern)."""
    conn = sqlite3.connect(db)
    try:
        return [line for line in conn.iterdump() if "logs.pseudonym_key" not in line]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """The bad-inputs corpus, a database with its little KB, a score report, and a FIFO."""
    root = tmp_path_factory.mktemp("hangs")
    shutil.copytree(BAD, root / "in")
    done = golden_process(root, "--db", "g.db", "ingest", "in/kb")
    assert done.returncode == 0, done.stderr
    done = golden_process(root, "--db", "g.db", "score", "--no-judge", "--no-save", "--golden",
                          "in/golden.jsonl", "--run", "in/run.jsonl", "--out", "report.json")
    assert done.returncode == 0, done.stderr
    os.mkfifo(root / "fifo.jsonl")
    return root


FIFO_COMMANDS = {
    "score --golden": ["score", "--no-judge", "--golden", "fifo.jsonl", "--run", "in/run.jsonl"],
    "score --run": ["score", "--no-judge", "--golden", "in/golden.jsonl", "--run", "fifo.jsonl"],
    "score --qrels": ["score", "--qrels", "fifo.jsonl", "--trec-run", "in/trec_run.txt"],
    "score --trec-run": ["score", "--qrels", "in/qrels.txt", "--trec-run", "fifo.jsonl"],
    "baseline-run --golden": ["baseline-run", "--golden", "fifo.jsonl", "--out", "r.jsonl"],
    "compare (first)": ["compare", "fifo.jsonl", "report.json"],
    "compare (second)": ["compare", "report.json", "fifo.jsonl"],
    "batch import": ["batch", "import", "fifo.jsonl"],
    "calibrate --import": ["calibrate", "--import", "fifo.jsonl"],
    "logs import": ["logs", "import", "fifo.jsonl"],
    "ingest": ["ingest", "fifo.jsonl"],
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("name", list(FIFO_COMMANDS))
def test_a_fifo_as_an_input_file_is_refused_never_waited_on(inputs, name):
    before = dump(inputs / "g.db")
    done = golden_process(inputs, "--db", "g.db", *FIFO_COMMANDS[name])
    assert done.returncode == 2, (name, done.stderr)
    assert done.stderr.startswith("golden: error: fifo.jsonl: not a regular file"), done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert dump(inputs / "g.db") == before
    assert not (inputs / "r.jsonl").exists()


def test_a_relevance_grade_of_hundreds_of_digits_is_refused_not_computed(inputs, tmp_path):
    """`--gain exp` computes 2^grade: a 400-digit grade in qrels or a golden file never
    finished. Grades beyond +-1000 are refused, naming the line."""
    (tmp_path / "qrels.txt").write_text("q1 0 c1 1\nq1 0 c2 " + "9" * 400 + "\n")
    (tmp_path / "graded.jsonl").write_text(
        '{"id": "q1", "query": "How long?", "relevance": {"c1": %s}}\n' % ("9" * 400))
    for args, where in (
            (["--qrels", "qrels.txt", "--trec-run", str(inputs / "in" / "trec_run.txt")],
             "qrels.txt:2: relevance '99"),
            (["--golden", "graded.jsonl", "--run", str(inputs / "in" / "run.jsonl")],
             "graded.jsonl:1: relevance.c1: ")):
        done = golden_process(tmp_path, "--db", "g.db", "score", "--no-judge", "--no-save",
                              "--gain", "exp", *args)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"golden: error: {where}"), done.stderr


# ------------------------------------------------------------------ an endpoint that trickles

class Question(BaseModel):
    question: str = ""


def test_a_trickling_endpoint_is_a_timed_out_attempt_retried_then_recorded(tmp_path):
    """Every request trickles: the call ends as 'error' (timed out) after its retries,
    recorded in llm_calls with every attempt, instead of waiting for the last byte."""
    store = build_kb(tmp_path / "g.db")
    with StubEndpoint(fault_for=lambda hit: "trickle", trickle_every=0.2,
                      trickle_for=HANG_LIMIT_S) as stub:
        settings = LLMSettings(base_url=stub.url, model="stub-model", timeout=1.0,
                               max_retries=1)

        async def instant(seconds: float) -> None:
            await asyncio.sleep(0)

        client = OpenAIClient(store, settings, job="generate", sleep=instant,
                              progress=lambda m: None)
        result = asyncio.run(client.structured(
            load_prompt("question"), {"before": KB["shipping.md"][0][1], "after": "",
                                      "title": "shipping.md", "answer": "$15",
                                      "kind": "an amount", "language": "en", "mention": [],
                                      "nearby": [], "partner": [], "name_example": []}, Question, stage="question"))
        client.close()
        hits = stub.hits()
    assert result.status == "error" and "timed out after 1 s" in result.error, result
    assert [h.fault for h in hits] == ["trickle", "trickle"]
    row = store.query("SELECT status, attempts, error FROM llm_calls")
    store.close()
    assert row == [{"status": "error", "attempts": 2,
                    "error": "timed out after 1 s (after 2 attempts)"}]


def test_generate_goes_on_past_an_endpoint_that_trickles(tmp_path):
    """`golden generate --timeout 2` with the first request trickling: that attempt times
    out, the retry is answered, and the run finishes (exit 0) with the call recorded 'ok'."""
    db = tmp_path / "g.db"
    build_kb(db).close()
    with StubEndpoint(fault_for=lambda hit: "trickle" if hit.seq == 0 else None,
                      trickle_for=HANG_LIMIT_S) as stub:
        done = golden_process(tmp_path, "--db", str(db), "generate", "--n", "1", "--timeout",
                              "2", "--base-url", stub.url, "--model", "stub-model")
        first = stub.hits()[0]
    assert done.returncode == 0, done.stderr
    assert first.fault == "trickle"
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT status, attempts FROM llm_calls WHERE messages = ?",
                            (first.messages_json,)).fetchall()
    finally:
        conn.close()
    assert rows == [("ok", 2)]
