"""Drive one headless review UI (`ReviewApp` under `run_test()`) for a while, the way a quick
reviewer would: accept, skip, reject, edit, tag, undo, move on. Run as a subprocess by the
concurrency tests (two of these at once against one database, while a generator writes):

    python -m tests.review_driver --db golden.db --annotator ann1 --seconds 10 --seed 1 \
        --out ann1.json

Every write the UI hands to its `DecisionWriter` is recorded with what came back (the
review_log id, the undo result, or the exception), so the test can check that every decision
the UI saw succeed is in the review_log. `check_log` does that check.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

SIZE = (140, 40)
# (weight, action): the mix of a reviewer who mostly accepts and sometimes changes their mind.
ACTIONS = [(35, "accept"), (10, "skip"), (10, "reject"), (15, "edit"), (5, "tag"),
           (20, "undo"), (5, "next")]


async def drive(db: str, annotator: str, seconds: float, seed: int) -> dict:
    from review_tui.app import ReviewApp
    from review_tui.screens.review import ReviewScreen

    rng = random.Random(seed)
    writes: list[dict] = []
    pressed: dict[str, int] = {}
    app = ReviewApp(db, annotator)
    original_submit = app.writer.submit

    def recording_submit(fn, *args, **kwargs):
        record = {"fn": fn.__name__, "args": [a for a in args if isinstance(a, str)],
                  "kwargs": {k: v for k, v in kwargs.items() if isinstance(v, (str, type(None)))},
                  "at": time.time()}
        writes.append(record)
        future = original_submit(fn, *args, **kwargs)

        def done(f):
            exc = f.exception()
            if exc is not None:
                record["error"] = f"{type(exc).__name__}: {exc}"
                return
            result = f.result()
            if fn.__name__ == "record_decision":
                record["log_id"] = result
            elif fn.__name__ == "undo_last":
                record["undo"] = None if result is None else {
                    "action": result.action, "candidate_ids": result.candidate_ids,
                    "restored": result.restored, "conflicts": result.conflicts}
            elif fn.__name__ == "bulk_decide":
                record["bulk"] = list(result)

        future.add_done_callback(done)
        return future

    app.writer.submit = recording_submit
    error = None
    names = [a for _, a in ACTIONS]
    weights = [w for w, _ in ACTIONS]
    try:
        async with app.run_test(size=SIZE) as pilot:
            deadline = time.monotonic() + seconds
            edit_no = 0
            while time.monotonic() < deadline:
                screen = app.screen
                if not isinstance(screen, ReviewScreen):  # a modal left open: close it
                    await pilot.press("escape")
                    continue
                action = rng.choices(names, weights)[0]
                pressed[action] = pressed.get(action, 0) + 1
                if action == "accept":
                    await pilot.press("a")
                elif action == "skip":
                    await pilot.press("s")
                elif action == "reject":
                    await pilot.press("r", rng.choice("12345"))
                elif action == "edit":
                    if screen.current is None:
                        continue
                    await pilot.press("e")
                    edit_no += 1
                    app.screen.query_one("#edit-answer").text = (
                        f"Edited by {annotator} #{edit_no}")
                    await pilot.press(rng.choice(["ctrl+s", "ctrl+o"]))
                elif action == "tag":
                    await pilot.press("t", *f"t{rng.randint(1, 3)}", "enter")
                elif action == "undo":
                    await pilot.press("u")
                else:
                    await pilot.press("n")
                if rng.random() < 0.3:
                    await pilot.pause()
            if isinstance(app.screen, ReviewScreen):
                await app.screen.settle()
            await app.writer.drain()
    except Exception:  # noqa: BLE001 - reported to the test, which fails on it
        error = traceback.format_exc()
    return {"annotator": annotator, "writes": writes, "pressed": pressed, "error": error}


def check_log(db: str | Path, results: list[dict]) -> dict:
    """Compare what the drivers saw succeed with the review_log and the candidates' state.

    Returns counts and a list of problems (empty when nothing was lost):
    - every record_decision that returned a log id: that review_log row exists with the
      candidate, annotator and action the UI asked for; one that returned None (nothing
      changed) for accept/reject/skip: that annotator has made that decision on that
      candidate before (an identical decision by SOMEONE ELSE does not count);
    - every undo that returned a result: one 'undo' row by that annotator per candidate id,
      and no other undo rows; the log has exactly as many rows as the UIs saw succeed;
    - write errors, and among them "database is locked";
    - the projection: each candidate's review columns equal the `after` state of its last
      review_log row (no decision was overwritten by another writer).
    """
    conn = sqlite3.connect(db, timeout=30)
    conn.row_factory = sqlite3.Row
    try:
        log = {r["id"]: dict(r) for r in conn.execute("SELECT * FROM review_log")}
        problems: list[str] = []
        decisions = undos = no_change = errors = locked = 0
        undone: Counter = Counter()
        for res in results:
            who = res["annotator"]
            for w in res["writes"]:
                if "error" in w:
                    errors += 1
                    locked += "locked" in w["error"].lower()
                    problems.append(f"{who}: {w['fn']} failed: {w['error']}")
                    continue
                if w["fn"] == "record_decision":
                    if w.get("log_id") is None:
                        no_change += 1
                        cid, annotator, action = w["args"][:3]
                        # A decision that changed nothing is fine only when this annotator
                        # already made it: another annotator's identical decision is not theirs.
                        if action in ("accept", "reject", "skip") and not any(
                                (r["candidate_id"], r["annotator"], r["action"]) == (
                                    cid, annotator, action) for r in log.values()):
                            problems.append(f"{who}: {action} of {cid} returned no log row and "
                                            f"{annotator} has no {action} of it in the log")
                        continue
                    decisions += 1
                    row = log.get(w["log_id"])
                    cid, annotator, action = w["args"][:3]
                    if row is None:
                        problems.append(f"{who}: log row {w['log_id']} missing")
                    elif (row["candidate_id"], row["annotator"], row["action"]) != (
                            cid, annotator, action):
                        problems.append(f"{who}: log row {w['log_id']} is {dict(row)}, "
                                        f"expected {cid} {annotator} {action}")
                elif w["fn"] == "undo_last" and w.get("undo"):
                    for cid in w["undo"]["candidate_ids"]:
                        undos += 1
                        undone[(who, cid)] += 1
        logged_undos = Counter((r["annotator"], r["candidate_id"]) for r in log.values()
                               if r["action"] == "undo" and r["undoes"] is not None)
        if logged_undos != undone:
            problems.append(f"undo rows {dict(logged_undos - undone)} not seen by a UI, "
                            f"undos {dict(undone - logged_undos)} seen but not logged")
        if len(log) != decisions + undos:
            problems.append(f"{len(log)} review_log rows, but the UIs saw {decisions} "
                            f"decisions and {undos} undos succeed")
        fields = ("status", "edit_question", "edit_answer", "edit_type", "edit_difficulty",
                  "reject_reason", "reject_note", "reviewer", "reviewed_at")
        last = conn.execute(
            "SELECT r.candidate_id, r.after FROM review_log r JOIN (SELECT candidate_id,"
            " max(id) AS id FROM review_log GROUP BY candidate_id) m ON m.id = r.id").fetchall()
        for cid, after in last:
            state = json.loads(after)
            row = conn.execute(f"SELECT {', '.join(fields)} FROM candidates WHERE id = ?",
                               (cid,)).fetchone()
            tags = [t for (t,) in conn.execute(
                "SELECT tag FROM candidate_tags WHERE candidate_id = ? ORDER BY tag", (cid,))]
            now = {**dict(row), "tags": tags}
            if any(now[k] != state.get(k) for k in (*fields, "tags")):
                problems.append(f"candidate {cid}: state {now} != last log row {state}")
        log_rows = len(log)
    finally:
        conn.close()
    return {"decisions": decisions, "undos": undos, "no_change": no_change,
            "write_errors": errors, "locked": locked, "log_rows": log_rows,
            "problems": problems}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--db", required=True)
    p.add_argument("--annotator", required=True)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    result = asyncio.run(drive(args.db, args.annotator, args.seconds, args.seed))
    Path(args.out).write_text(json.dumps(result), encoding="utf-8")
    return 1 if result["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
