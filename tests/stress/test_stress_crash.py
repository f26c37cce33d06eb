"""20 SIGKILLs of `golden generate` across every stage, each followed by a resume (issue 8,
item 1, long version). Run by hand: python -m pytest -m stress tests/stress -s
GOLDEN_CRASH_SEED replays a campaign."""

from __future__ import annotations

import os
import random

import pytest

from tests.crash_harness import crash_job, format_report

JOBS = 4
KILLS_PER_JOB = 5
STAGES = ("facts", "questions", "evolve", "verify")


@pytest.mark.stress
def test_twenty_kills_across_all_stages(tmp_path):
    seed = int(os.environ.get("GOLDEN_CRASH_SEED", random.SystemRandom().randrange(10**6)))
    print(f"\ncrash campaign seed {seed} (GOLDEN_CRASH_SEED={seed} replays it)")
    rng = random.Random(seed)
    reports = []
    for j in range(JOBS):
        job_seed = rng.randrange(10**6)
        reports.append(crash_job(tmp_path / f"job{j}", kills=KILLS_PER_JOB, seed=job_seed,
                                 first_stage=STAGES[j % len(STAGES)]))
        print(format_report(reports[-1:], job_seed))
    print(format_report(reports, seed))
    assert sum(r.kills for r in reports) == JOBS * KILLS_PER_JOB
    for r in reports:
        assert r.final_exit == 0, r.final_stderr
        assert r.integrity == [] and r.lost == [] and r.duplicates == 0
        assert r.repeated_calls == 0, r.repeated_detail
        assert r.reached_what_an_uninterrupted_run_reaches() and r.rerun_was_idle()
    stages = {s.split("_")[0] for r in reports for s in r.stages}
    assert set(STAGES) <= stages, stages


@pytest.mark.stress
def test_kills_while_the_endpoint_misbehaves(tmp_path):
    """Kills landing during retries and back-off: failed calls may be asked again after a
    resume (they were never cached), answered ones never."""
    seed = int(os.environ.get("GOLDEN_CRASH_SEED", random.SystemRandom().randrange(10**6)))
    print(f"\ncrash+faults seed {seed}")
    faults = {"429": 0.05, "500": 0.05, "reset": 0.03, "timeout": 0.02, "bad_json": 0.03,
              "truncated": 0.03, "empty": 0.02}
    report = crash_job(tmp_path, kills=6, seed=seed, faults=faults, first_stage="questions")
    print(format_report([report], seed))
    assert report.final_exit == 0, report.final_stderr
    assert report.integrity == [] and report.lost == [] and report.duplicates == 0
    assert report.repeated_calls == 0, report.repeated_detail
