"""LLM faults at high rates over several seeds, in-process (instant retry sleeps) and once
through the real CLI (`golden generate --timeout 1`, real back-off sleeps, max_retries from
golden.toml). Issue 8, item 2, long version. Run by hand: python -m pytest -m stress tests/stress -s
"""

from __future__ import annotations

import re
import subprocess
import sqlite3
from collections import Counter

import pytest
from click.testing import CliRunner

from builder.cli import golden
from tests.crash_harness import clean_env, golden_cmd
from tests.stub_endpoint import StubEndpoint, expected_statuses
from tests.support.scripted_kb import build_kb
from tests.test_reliability_faults import RATES, check_counts_match, run_with_faults

HIGH = {k: v * 2 for k, v in RATES.items()}  # ~50% of requests faulted


@pytest.mark.stress
@pytest.mark.parametrize("seed", range(8))
def test_high_fault_rates(tmp_path, seed):
    db, stub, sleeps, summary, client_summary = run_with_faults(
        tmp_path, seed=seed, rates=HIGH, scripted=seed % 2 == 0)
    figures = check_counts_match(db, stub, sleeps, summary, client_summary)
    print(f"\nseed {seed}: {figures}")


@pytest.mark.stress
def test_faults_through_the_cli(tmp_path):
    db = tmp_path / "cli.db"
    build_kb(db).close()
    (tmp_path / "golden.toml").write_text("[llm]\nmax_retries = 2\n")
    with StubEndpoint(faults=RATES, seed=11, timeout_sleep=1.5, retry_after="1") as stub:
        cmd = golden_cmd(db, stub.url, "--n", "12", "--timeout", "1", "--concurrency", "4",
                         "--config", str(tmp_path / "golden.toml"))
        done = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), timeout=600)
        hits = stub.hits()
    assert done.returncode == 0, done.stderr[-2000:]
    expected, retried = expected_statuses(hits, 2)
    conn = sqlite3.connect(db)
    recorded = Counter(dict(conn.execute("SELECT status, count(*) FROM llm_calls GROUP BY status")))
    attempts = conn.execute("SELECT sum(attempts) FROM llm_calls").fetchone()[0]
    conn.close()
    print(f"\nCLI: requests {len(hits)} injected {dict(Counter(h.fault for h in hits))} "
          f"retried {dict(retried)} recorded {dict(recorded)}")
    assert attempts == len(hits)
    assert recorded == expected
    failed = sum(v for k, v in recorded.items() if k != "ok")
    assert re.search(rf"\b{failed} failed calls?\b", re.sub(r"\s+", " ", done.stdout)), done.stdout
    stats = CliRunner().invoke(golden, ["--db", str(db), "stats"])
    line = next(ln for ln in stats.output.splitlines() if ln.startswith("llm calls by status"))
    assert {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", line.split(":", 1)[1])} == \
        dict(recorded)
