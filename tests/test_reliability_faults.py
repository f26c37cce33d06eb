"""LLM faults during generation (issue 8, item 2): the stub endpoint answers with 429s, 500s,
timeouts, connection resets, replies that trickle in a byte at a time (issue 32), broken JSON,
schema failures, truncated, empty and refused replies; the job must finish and record every
failure with its reason, and the counts must match what was injected.

What "match" means here, precisely (see `tests.stub_endpoint.expected_statuses`):
- every HTTP request the stub received is one attempt the client counted: stub requests ==
  sum(llm_calls.attempts) == client.summary()['network_calls'];
- replaying the client's documented retry policy over the stub's log call by call gives
  exactly the statuses in llm_calls: a 429 (or 500, timeout, reset) followed by a success is
  a retry inside an 'ok' call, not a failure; 'error' needs max_retries+1 transport faults in
  one send; a bad reply is 'invalid' only when its repair round is bad too, cut-off output is
  'truncated' only when the larger retry is cut off too; empty and refusal end a call at once;
- client.summary()['failures'] == the non-ok statuses of llm_calls == what `golden stats`
  prints under "llm calls by status"; every non-ok row has an error message;
- every retried request slept once; every retried 429 slept exactly its Retry-After.
Retry sleeps are made instant through OpenAIClient's `sleep` parameter (their lengths are kept).
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections import Counter

from click.testing import CliRunner

from builder.cli import golden
from builder.generate.models import GenerateOptions
from builder.generate.runner import run_generate
from builder.llm.client import OpenAIClient
from builder.llm.settings import LLMSettings
from builder.store import Store
from tests.stub_endpoint import FAULTS, StubEndpoint, expected_statuses
from tests.support.scripted_kb import build_kb

MAX_RETRIES = 3
TIMEOUT_S = 2.0  # far above a normal reply (~5 ms), so only injected faults time out
RATES = {"429": 0.05, "500": 0.04, "timeout": 0.02, "reset": 0.03, "partial": 0.02,
         "stall": 0.01, "bad_json": 0.03, "bad_schema": 0.03, "truncated": 0.03, "empty": 0.02,
         "refusal": 0.02, "not_json": 0.01}
# The first calls after warm-up get these fault sequences, so every kind of fault and every
# way a call can end is exercised whatever the random draws do.
SCRIPTS = [
    ["429", "ok"], ["500"] * (MAX_RETRIES + 1), ["bad_json", "bad_schema"],
    ["truncated", "truncated"], ["empty"], ["refusal"], ["timeout", "ok"], ["reset", "ok"],
    ["bad_schema", "ok"], ["truncated", "ok"], ["429", "500", "reset", "ok"],
    ["partial", "ok"], ["stall", "ok"], ["not_json"], ["trickle", "ok"],
]


class ScriptedFaults:
    """`fault_for` hook: hands SCRIPTS out to the first new calls after warm-up."""

    def __init__(self, start: int = 5):
        self.start = start
        self.scripts = [list(s) for s in SCRIPTS]
        self.assigned: dict[str, list[str]] = {}

    def __call__(self, hit) -> str | None:
        if hit.seq < self.start:
            return None
        if hit.call_key not in self.assigned and self.scripts:
            self.assigned[hit.call_key] = self.scripts.pop(0)
        script = self.assigned.get(hit.call_key)
        return script.pop(0) if script else None


def llm_rows(db) -> list[dict]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM llm_calls WHERE job = 'generate'")]
    finally:
        conn.close()


def run_with_faults(tmp_path, *, seed: int, rates: dict, n: int = 12, scripted: bool = True):
    db = tmp_path / "faults.db"
    store = build_kb(db)
    sleeps: list[float] = []

    async def instant_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        await asyncio.sleep(0)

    stub = StubEndpoint(faults=rates, seed=seed, timeout_sleep=TIMEOUT_S + 0.5, retry_after="1",
                        fault_for=ScriptedFaults() if scripted else None)
    with stub:
        settings = LLMSettings(base_url=stub.url, model="stub-model", timeout=TIMEOUT_S,
                               max_retries=MAX_RETRIES, concurrency=4)
        client = OpenAIClient(store, settings, job="generate", sleep=instant_sleep,
                              progress=lambda m: None)
        summary = run_generate(store, client, GenerateOptions(n=n, seed=seed, concurrency=4))
        client_summary = client.summary()
    store.close()
    return db, stub, sleeps, summary, client_summary


def check_counts_match(db, stub, sleeps, summary, client_summary) -> dict:
    """The assertions of the module docstring; returns the figures for the report."""
    hits = stub.hits()
    rows = llm_rows(db)
    recorded = Counter(r["status"] for r in rows)
    expected, retried = expected_statuses(hits, MAX_RETRIES)
    injected = Counter(h.fault for h in hits)

    assert len(hits) == sum(r["attempts"] for r in rows) == client_summary["network_calls"]
    assert recorded == expected, f"recorded {dict(recorded)} != expected {dict(expected)}"
    failures = {k: v for k, v in recorded.items() if k != "ok"}
    assert client_summary["failures"] == failures
    assert summary.llm_failures == sum(failures.values())
    assert client_summary["calls"] == client_summary["cached"] + len(rows)
    for r in rows:
        if r["status"] != "ok":
            assert r["error"] and r["error"].strip(), r
    assert len(sleeps) == sum(retried.values())
    assert sleeps.count(1.0) >= retried["429"]  # Retry-After: 1 honoured for each

    result = CliRunner().invoke(golden, ["--db", str(db), "stats"])
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.output.splitlines() if ln.startswith("llm calls by status"))
    shown = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", line.split(":", 1)[1])}
    assert shown == dict(recorded)
    return {"requests": len(hits), "injected": dict(injected), "retried": dict(retried),
            "recorded": dict(recorded), "verified": summary.verified_total}


def test_generation_finishes_and_records_every_injected_fault(tmp_path):
    db, stub, sleeps, summary, client_summary = run_with_faults(tmp_path, seed=7, rates=RATES)
    figures = check_counts_match(db, stub, sleeps, summary, client_summary)
    print(f"faults: {figures}")
    injected = figures["injected"]
    assert all(injected.get(kind, 0) >= 1 for kind in FAULTS), injected
    for status in ("ok", "error", "invalid", "truncated", "empty", "refusal"):
        assert figures["recorded"].get(status, 0) >= 1, figures["recorded"]
    assert summary.stopped is None
    # Failed units are asked again in later rounds, so the run still reaches its target.
    assert summary.verified_total >= 10


def test_a_rerun_asks_again_only_what_failed(tmp_path):
    """Failed calls are never served from the cache: a clean second run re-sends exactly the
    failed calls' requests that its rounds still need, and nothing that succeeded."""
    db, stub, *_ = run_with_faults(tmp_path, seed=3, rates=RATES)
    ok_messages = {r["messages"] for r in llm_rows(db) if r["status"] == "ok"}
    store = Store(db)
    with StubEndpoint(seed=3, watch_db=str(db)) as clean:
        settings = LLMSettings(base_url=clean.url, model="stub-model", max_retries=MAX_RETRIES)
        client = OpenAIClient(store, settings, job="generate", progress=lambda m: None)
        run_generate(store, client, GenerateOptions(n=12, seed=3, concurrency=4))
    store.close()
    again = clean.hits()
    assert not [h for h in again if h.already_cached]
    assert not [h for h in again if h.messages_json in ok_messages]
