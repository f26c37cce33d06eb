"""Crash safety of `golden generate`: SIGKILL at random moments, resume, and nothing is lost,
duplicated or asked twice (issue 8, item 1; the 20-kill version is tests/stress/).

A real `golden generate` subprocess talks to the stub endpoint (tests/stub_endpoint.py), which
answers as the ideal model with 50-200 ms of latency, so a kill can land in start-up or any
LLM stage. See tests/crash_harness.py for what each count means.
"""

from __future__ import annotations

import os

from tests.crash_harness import crash_job, format_report

KILLS = 3


def test_sigkill_during_generation_then_resume_loses_and_repeats_nothing(tmp_path):
    seed = int(os.environ.get("GOLDEN_CRASH_SEED", "20250611"))
    print(f"crash seed {seed} (set GOLDEN_CRASH_SEED to replay)")
    report = crash_job(tmp_path, kills=KILLS, seed=seed)
    print(format_report([report], seed))
    assert report.kills == KILLS
    assert report.final_exit == 0, report.final_stderr
    assert report.integrity == []
    assert report.lost == []
    assert report.duplicates == 0
    assert report.repeated_calls == 0, report.repeated_detail
    assert report.reached_what_an_uninterrupted_run_reaches()
    assert report.rerun_was_idle()
