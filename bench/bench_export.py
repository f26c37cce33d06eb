"""Benchmark: `golden export` over 1,000,000 candidates -- wall time and peak RSS.

Builds (once, then reuses) a database with 2,000 documents, 20,000 chunks and N candidates
(30% of them in leakage groups of 3 variants; 90% accepted; a few edited, tagged, duplicates),
then runs, each in its own process so peak RSS is that run's alone:

- reference: the least any export can do -- stream the accepted rows from one cursor and write
  one json.dumps line per row (no chunk texts, no split);
- export native with --split train=0.6,dev=0.2,test=0.2;
- export ragas without split.

Prints time, peak RSS and the ratio to the reference (same run, same machine load).
Target: peak RSS under 300 MB.

    python bench/bench_export.py [--n 1000000] [--dir /tmp/golden-bench-export] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from builder.vocabulary import DIFFICULTIES, TYPES

NOW = "2025-01-01T00:00:00.000000+00:00"
DIFFS = [*DIFFICULTIES, None]

REFERENCE = r"""
import json, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
cur = conn.execute("SELECT * FROM candidates WHERE status = 'accepted' AND duplicate_of IS NULL")
cols = [c[0] for c in cur.description]
n = 0
with open(sys.argv[2], "w", encoding="utf-8") as fh:
    while rows := cur.fetchmany(2000):
        for row in rows:
            fh.write(json.dumps(dict(zip(cols, row)), ensure_ascii=False) + "\n")
            n += 1
print(n)
"""


def build(db_path: Path, n: int) -> None:
    from builder.store import Store

    Store(db_path).close()  # create and migrate
    rng = random.Random(1)
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO documents (id, path, title, format, content_hash, n_chars, n_tokens,"
        " language, ingested_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        [(f"docs/d{d}.md", f"docs/d{d}.md", f"Document {d}", "markdown", f"h{d}", 5000, 1200,
          "en", NOW, NOW) for d in range(2000)],
    )
    # Chunk texts ~600 chars; the FTS triggers make this the slow part, so drop them first.
    for trig in [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='trigger' AND tbl_name='chunks'")]:
        conn.execute(f"DROP TRIGGER {trig}")
    words = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron "
             "pi rho sigma tau upsilon phi chi psi omega").split()
    conn.executemany(
        "INSERT INTO chunks (id, document_id, seq, text, n_tokens, language)"
        " VALUES (?,?,?,?,?,?)",
        [(f"c{c}", f"docs/d{c // 10}.md", c % 10,
          " ".join(rng.choice(words) for _ in range(100)), 120, "en") for c in range(20000)],
    )

    def rows():
        i = 0
        while i < n:
            grouped = rng.random() < 0.125  # so that 30% of items sit in groups of three
            size = min(3 if grouped else 1, n - i)
            fact = f"fact-{i}" if size > 1 else None
            for v in range(size):
                cid = f"cand-{i:08d}"
                chunks = [f"c{rng.randrange(20000)}" for _ in range(rng.choice((1, 1, 2)))]
                r = rng.random()
                status = "accepted" if r < 0.9 else ("pending" if r < 0.97 else "rejected")
                yield (
                    cid, rng.choice(TYPES), f"What does item {i} say about {rng.choice(words)}?",
                    f"Item {i} says that {' '.join(rng.choice(words) for _ in range(20))}.",
                    "en", rng.choice(DIFFS), json.dumps(chunks),
                    json.dumps([{"chunk_id": chunks[0], "quote": "alpha beta", "start": 0,
                                 "end": 10}]),
                    fact, f"cand-{i - v:08d}" if v else None, f"docs/d{int(chunks[0][1:]) // 10}.md",
                    "gen-model", "passed", "cand-00000000" if rng.random() < 0.01 and i else None,
                    status, "Edited question?" if rng.random() < 0.05 else None,
                    "ann" if status != "pending" else None, NOW if status != "pending" else None,
                    NOW, NOW,
                )
                i += 1

    conn.executemany(
        "INSERT INTO candidates (id, type, question, answer, language, difficulty, chunk_ids,"
        " evidence, seed_fact_id, parent_id, document_id, generator_model, verdict, duplicate_of,"
        " status, edit_question, reviewer, reviewed_at, created_at, updated_at)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        rows(),
    )
    conn.executemany("INSERT INTO candidate_tags (candidate_id, tag) VALUES (?, ?)",
                     [(f"cand-{i:08d}", "bench") for i in range(0, n, 50)])
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def measure(cmd: list[str]) -> tuple[float, float, float, str]:
    """Run cmd in a fresh process; return (wall s, CPU s, peak RSS MB of that process, stdout).

    CPU seconds (user + system) are reported beside wall time because the machine is shared:
    wall time swings with other load, CPU time much less."""
    # A small launcher reports its child's own peak RSS (RUSAGE_CHILDREN of a fresh parent).
    launcher = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "dt = time.perf_counter() - t\n"
        "if p.returncode: sys.stderr.write(p.stderr); sys.exit(p.returncode)\n"
        "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(f'{dt} {ru.ru_utime + ru.ru_stime} {ru.ru_maxrss / 1024}')\n"
        "print(p.stdout + p.stderr, end='')\n"
    )
    out = subprocess.run([sys.executable, "-c", launcher, *cmd], capture_output=True, text=True,
                         check=True).stdout
    first, _, rest = out.partition("\n")
    seconds, cpu, rss = (float(x) for x in first.split())
    return seconds, cpu, rss, rest


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--dir", default="/tmp/golden-bench-export")
    ap.add_argument("--keep", action="store_true", help="keep the database for the next run")
    args = ap.parse_args()
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    db = work / f"golden-{args.n}.db"
    if not db.exists():
        t = time.perf_counter()
        build(db, args.n)
        print(f"built {db} ({args.n:,} candidates) in {time.perf_counter() - t:.1f} s, "
              f"{db.stat().st_size / 1e6:.0f} MB")
    golden = [sys.executable, "-m", "builder.cli", "--db", str(db), "export"]
    runs = [
        ("reference: cursor scan + json.dumps",
         [sys.executable, "-c", REFERENCE, str(db), str(work / "ref.jsonl")]),
        ("export native --split 0.6/0.2/0.2",
         golden + ["--out", str(work / "native.jsonl"), "--split", "train=0.6,dev=0.2,test=0.2"]),
        ("export ragas (no split)", golden + ["--out", str(work / "ragas.jsonl"), "--format", "ragas"]),
    ]
    ref_wall = ref_cpu = None
    print(f"{'run':38} {'wall s':>7} {'x ref':>6} {'CPU s':>7} {'x ref':>6} {'peak RSS MB':>12}")
    for label, cmd in runs:
        seconds, cpu, rss, out = measure(cmd)
        ref_wall, ref_cpu = ref_wall or seconds, ref_cpu or cpu
        print(f"{label:38} {seconds:7.1f} {seconds / ref_wall:6.2f} {cpu:7.1f} "
              f"{cpu / ref_cpu:6.2f} {rss:12.0f}", flush=True)
        for line in out.splitlines():
            if line.startswith(("wrote", "golden: warning")):
                print("    " + line)
    sizes = {p.name: p.stat().st_size for p in work.glob("*.jsonl")}
    print("output sizes MB: " + ", ".join(f"{k} {v / 1e6:.0f}" for k, v in sorted(sizes.items())))
    for p in work.glob("*.jsonl*"):
        p.unlink()
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
