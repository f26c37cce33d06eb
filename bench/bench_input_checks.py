"""Benchmark: what the input checks of issue 32 cost on the largest inputs golden reads, paired
against another checkout of golden (the one before them) in the same run.

The checks: every input file opened through `builder.text.input_files` (non-blocking open,
fstat), every qrels grade range-checked, every JSON line parsed by `text.jsonl.parse_json`
(lone-surrogate scan when a `\\ud8..` escape appears). Measured end to end, process wall:
`golden score --qrels Q --trec-run R --no-judge --no-save --out x.json` on bench_score's data
(10,000 queries x 100 ids: 1,000,000 run lines, 200,000 qrels), and `golden score --golden G
--run R` on 10,000 native golden lines and run lines. Runs alternate between the two
checkouts; the medians and their ratio are printed, and the per-query figures are checked
identical.

    git worktree add /tmp/before <commit before>   # the reference
    python bench/bench_input_checks.py --reference /tmp/before [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))

from bench_score import write_data  # noqa: E402


def write_jsonl(folder: Path, n: int = 10_000) -> tuple[Path, Path]:
    golden, run = folder / "golden.jsonl", folder / "run.jsonl"
    with golden.open("w") as g, run.open("w") as r:
        for i in range(n):
            g.write(json.dumps({"id": f"q{i}", "query": f"Question number {i} about caf\u00e9?",
                                "expected_answer": "An answer.", "relevant_chunk_ids":
                                [f"d{i}", f"d{i + 1}"], "type": "single_hop"}) + "\n")
            r.write(json.dumps({"query_id": f"q{i}", "retrieved_ids": [f"d{i + k}" for k in
                                range(20)], "latency_ms": 120 + i % 50, "cost": 0.001}) + "\n")
    return golden, run


def run_once(root: Path, folder: Path, args: list[str], out: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(root)}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "builder.cli", "--db", str(folder / "g.db"), "score",
                    *args, "--no-judge", "--no-save", "--out", str(out)], check=True, env=env,
                   capture_output=True, cwd=folder)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, help="another checkout of golden")
    ap.add_argument("--repeat", type=int, default=5)
    opts = ap.parse_args()
    sides = {"this": ROOT, "reference": Path(opts.reference).resolve()}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        qrels, trec_run = write_data(folder)
        golden, run = write_jsonl(folder)
        cases = {"trec": ["--qrels", str(qrels), "--trec-run", str(trec_run)],
                 "jsonl": ["--golden", str(golden), "--run", str(run)]}
        for case, args in cases.items():
            times: dict[str, list[float]] = {side: [] for side in sides}
            for _ in range(opts.repeat):
                for side, root in sides.items():
                    times[side].append(run_once(root, folder, args, folder / f"{side}.json"))
            figures = [json.loads((folder / f"{s}.json").read_text())["per_query"] for s in sides]
            assert figures[0] == figures[1], "the two checkouts disagree"
            medians = {side: statistics.median(ts) for side, ts in times.items()}
            print(f"{case}: this {medians['this']:.2f} s, reference {medians['reference']:.2f} s"
                  f" (medians of {opts.repeat}), ratio {medians['this'] / medians['reference']:.2f}")


if __name__ == "__main__":
    main()
