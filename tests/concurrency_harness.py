"""Concurrent writers against one database: a generator (a real `golden generate` subprocess
against the stub endpoint, plus a loop writing candidates through builder.store.candidates the
way the generator does) while two review UIs (tests/review_driver.py, one subprocess each)
accept, edit, tag and undo. Used by tests/test_reliability_concurrency.py (~10 s) and
tests/stress/ (60 s).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from builder.store import Store
from builder.store import candidates as cstore
from tests.crash_harness import clean_env, golden_cmd
from tests.review_driver import check_log
from tests.support.rows import add_candidates, add_documents
from tests.stub_endpoint import StubEndpoint
from tests.support.scripted_kb import build_kb

ROOT = Path(__file__).resolve().parents[1]


def writer_loop(db: Path, seconds: float, stats: dict) -> None:
    """Insert one verified candidate every ~20 ms (record_candidates, then
    record_verification and record_difficulty, each its own transaction, as the pipeline
    does), on its own connection, until `seconds` have passed."""
    store = Store(db, migrate=False)
    chunk_ids = ["doc0.md#0", "doc1.md#1", "doc2.md#2"]
    deadline = time.monotonic() + seconds
    i = 0
    try:
        while time.monotonic() < deadline:
            cid = f"w{i:06d}"
            row = {"id": cid, "type": "single_hop", "question": f"Writer question {i}?",
                   "answer": f"Writer answer {i}", "language": "en",
                   "chunk_ids": [chunk_ids[i % 3]], "hops": [[chunk_ids[i % 3]]],
                   "evidence": [], "fact_ids": [], "document_id": chunk_ids[i % 3][:7],
                   "generator_model": "loop", "prompts": {}}
            try:
                cstore.record_candidates(store, [row], stage="writer", key=cid, info={})
                cstore.record_verification(store, cid, verification=[], verdict="passed",
                                           rejection_reasons=[], stage="writer-verify", key=cid)
                cstore.record_difficulty(store, [(cid, "easy", {"points": 0})])
                stats["written"] += 1
            except Exception as exc:  # noqa: BLE001 - counted and reported
                stats["errors"].append(f"{type(exc).__name__}: {exc}")
            i += 1
            time.sleep(0.02)
    finally:
        store.close()


def run_concurrent(tmp: Path, seconds: float, *, seed: int = 1, seeded: int = 300) -> dict:
    db = tmp / "concurrent.db"
    store = build_kb(db)
    chunk_ids = add_documents(store)
    add_candidates(store, seeded, chunk_ids=chunk_ids)
    store.close()

    writer_stats: dict = {"written": 0, "errors": []}
    gen_log = tmp / "generate.stderr"
    with StubEndpoint(seed=seed, latency=(0.1, 0.3)) as stub:
        drivers = []
        for k, name in enumerate(("annA", "annB")):
            out = tmp / f"{name}.json"
            err = open(tmp / f"{name}.stderr", "wb")
            drivers.append((out, err, subprocess.Popen(
                [sys.executable, "-m", "tests.review_driver", "--db", str(db), "--annotator",
                 name, "--seconds", str(seconds), "--seed", str(seed * 10 + k), "--out",
                 str(out)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err,
                env=clean_env())))
        with open(gen_log, "wb") as gerr:
            gen = subprocess.Popen(
                golden_cmd(db, stub.url, "--n", "12", "--docs", "[^d]*", "--concurrency", "2"),
                stdout=subprocess.DEVNULL, stderr=gerr, env=clean_env())
        writer = threading.Thread(target=writer_loop, args=(db, seconds, writer_stats))
        writer.start()
        gen_exit = gen.wait(seconds + 120)
        writer.join(seconds + 60)
        results, driver_exits = [], []
        for out, err, proc in drivers:
            driver_exits.append(proc.wait(seconds + 120))
            err.close()
            results.append(json.loads(out.read_text()) if out.exists() else
                           {"annotator": out.stem, "writes": [], "error": "no output"})
        generated = len(stub.log)
    checked = check_log(db, results)
    stderr_text = gen_log.read_text(errors="replace") + "".join(
        (tmp / f"{n}.stderr").read_text(errors="replace") for n in ("annA", "annB"))
    return {
        "seconds": seconds,
        "generator_exit": gen_exit,
        "generator_requests": generated,
        "writer_rows": writer_stats["written"],
        "writer_errors": writer_stats["errors"],
        "driver_exits": driver_exits,
        "driver_errors": [r["error"] for r in results if r.get("error")],
        "writes_submitted": sum(len(r["writes"]) for r in results),
        "pressed": [r.get("pressed") for r in results],
        "locked_in_stderr": stderr_text.lower().count("database is locked"),
        **checked,
    }


def format_figures(fig: dict) -> str:
    return (f"concurrency {fig['seconds']:.0f} s: decisions {fig['decisions']} + undos "
            f"{fig['undos']} seen succeed by the UIs ({fig['writes_submitted']} writes "
            f"submitted, {fig['no_change']} no-ops), review_log rows {fig['log_rows']}, "
            f"lost {len(fig['problems'])}, lock errors {fig['locked']} (+{fig['locked_in_stderr']}"
            f" in stderr), write errors {fig['write_errors']}; generator exit "
            f"{fig['generator_exit']} ({fig['generator_requests']} LLM requests), writer loop "
            f"{fig['writer_rows']} candidates, {len(fig['writer_errors'])} errors; keys "
            f"{fig['pressed']}")
