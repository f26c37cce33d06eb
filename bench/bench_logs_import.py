"""Benchmark: `golden logs import` of 1,000,000 production log lines: lines per second and peak
RSS (the issue's target: under 300 MB), against a floor measured in the same run.

Data: golden's own JSONL, generated with a fixed seed: questions of 8-20 words, answers of
20-60 words, 3-5 retrieved ids with their context texts drawn from a pool of 5,000 chunk texts
of ~80 words (contexts repeat across records, as in production), a session id, latency,
tokens, cost, 3% thumbs down, 2% thumbs up, 1% handed off; 1% of records carry an e-mail
address, a phone number or a card number in the question (scrubbed on import). About 2 KB a
line.

Figures (each the median of `--repeat` runs, in fresh processes, on one file):
- golden: `golden logs import FILE` into a new database: wall time, lines/s, peak RSS of the
  process (`wait4`), database size; then the same file again (idempotent re-import: nothing
  added);
- floor: a Python process that reads the same file line by line and `json.loads` each line
  (what any importer must do at least): wall time and peak RSS. golden / floor is the cost of
  validating, scrubbing and storing.

    python bench/bench_logs_import.py [--lines 1000000] [--repeat 1] [--keep DIR]

`--keep DIR` leaves the file and the database there (bench_logs_evaluate.py can reuse them).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RSS_MB = 300
WORDS = ("return refund jacket tent warranty shipping order store hours member gold basic "
         "express standard days price discount rental club trail boots size exchange receipt "
         "store credit cash card delivery pickup locker outerwear repair policy online").split()


def sentence(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi))).capitalize() + "."


def write_log(path: Path, n: int, seed: int = 17) -> None:
    rng = random.Random(seed)
    pool = [sentence(rng, 60, 100) for _ in range(5000)]
    base = 1740787200  # 2025-03-01
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            k = rng.randint(3, 5)
            ids = rng.sample(range(len(pool)), k)
            query = sentence(rng, 8, 20)[:-1] + "?"
            if i % 100 == 7:
                query += rng.choice([" mail me at jo.smith@example.com",
                                     " call +44 20 7946 0958", " card 4111 1111 1111 1111"])
            roll = rng.random()
            feedback = ({"thumbs": "down", "reason": sentence(rng, 3, 8)} if roll < 0.03 else
                        {"thumbs": "up"} if roll < 0.05 else
                        {"handed_off": True} if roll < 0.06 else None)
            line = {"id": f"req-{i:07d}", "timestamp": base + i * 2.6,
                    "session_id": f"s-{i // 4:06d}", "query": query,
                    "answer": sentence(rng, 20, 60), "retrieved_ids": [f"kb#{j}" for j in ids],
                    "contexts": [pool[j] for j in ids], "latency_ms": rng.randint(300, 4000),
                    "prompt_tokens": rng.randint(600, 2500), "completion_tokens":
                    rng.randint(20, 200), "cost": round(rng.random() / 500, 6),
                    "model": "gpt-4o-mini"}
            if feedback:
                line["feedback"] = feedback
            fh.write(json.dumps(line) + "\n")


FLOOR = """
import json, sys
n = 0
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        json.loads(line)
        n += 1
print(n)
"""


def run_measured(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MB, stdout) of one child process, reaped with wait4 to read
    its own peak RSS."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): "
                             f"{err.read().strip()[-500:]}")
        return wall, usage.ru_maxrss / 1024, out.read()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-logs-"))
    work.mkdir(parents=True, exist_ok=True)
    log = work / "logs.jsonl"
    if not log.exists() or sum(1 for _ in open(log, "rb")) != args.lines:
        t = time.perf_counter()
        write_log(log, args.lines)
        print(f"wrote {args.lines:,} lines ({log.stat().st_size / 1e6:,.0f} MB) in "
              f"{time.perf_counter() - t:.0f} s")
    golden = [sys.executable, "-m", "builder.cli"]
    floors, imports, reimports = [], [], []
    for r in range(args.repeat):
        db = work / "golden.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        floors.append(run_measured([sys.executable, "-c", FLOOR, str(log)], work))
        imports.append(run_measured([*golden, "--db", str(db), "logs", "import", str(log)],
                                    work))
        reimports.append(run_measured([*golden, "--db", str(db), "logs", "import", str(log)],
                                      work))
        print(f"run {r + 1}: floor {floors[-1][0]:.1f} s; import {imports[-1][0]:.1f} s, "
              f"{imports[-1][1]:.0f} MB; re-import {reimports[-1][0]:.1f} s")
    med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
    n = args.lines
    print(imports[-1][2].strip())
    print(f"\n{n:,} lines, {log.stat().st_size / 1e6:,.0f} MB; median of {args.repeat} run(s):")
    print(f"  golden logs import: {med(imports, 0):.1f} s = {n / med(imports, 0):,.0f} lines/s,"
          f" peak RSS {med(imports, 1):.0f} MB (target < {TARGET_RSS_MB} MB: "
          f"{med(imports, 1) / TARGET_RSS_MB:.2f} of it)")
    print(f"  re-import (nothing new): {med(reimports, 0):.1f} s = "
          f"{n / med(reimports, 0):,.0f} lines/s, peak RSS {med(reimports, 1):.0f} MB")
    print(f"  floor (read + json.loads): {med(floors, 0):.1f} s, peak RSS {med(floors, 1):.0f} MB"
          f" -> golden takes {med(imports, 0) / med(floors, 0):.1f}x the floor's time")
    db = work / "golden.db"
    print(f"  database: {db.stat().st_size / 1e6:,.0f} MB (the file: "
          f"{log.stat().st_size / 1e6:,.0f} MB)")
    if args.keep is None:
        print(f"  (files left in {work}; delete them when done)")


if __name__ == "__main__":
    main()
