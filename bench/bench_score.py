"""Benchmark: golden's scoring against pytrec_eval-terrier on the same data, measured both ways
in one run.

Data: 10,000 queries x 100 retrieved ids (TREC run, scores with 2 decimals: many ties), graded
qrels (20 judged per query, grades 0-3). Measures at k = 1, 3, 5, 10: P, recall, success (hit
rate), ndcg_cut, plus recip_rank (MRR) and map: 18 measures both sides compute (golden adds
mrr@k, 22 in all). Values are checked equal per query to 1e-9.

Three figures, each the median of `--repeat` interleaved runs (so machine noise hits both
sides alike):
- compute: from in-memory dicts to per-query figures (pytrec_eval: RelevanceEvaluator +
  evaluate; golden: `retrieval.evaluate`), in a worker process each;
- end to end, process wall: `golden score --qrels Q --trec-run R --no-judge --no-save --out
  x.json` against a pytrec_eval script that parses the same two files with
  `pytrec_eval.parse_qrel/parse_run`, evaluates and writes the per-query figures as JSON;
- end to end with golden's default save (the scored run stored in SQLite), same reference.

pytrec_eval lives only in a separate venv (it is not a golden dependency):

    python3 -m venv /work/benchvenv && /work/benchvenv/bin/pip install pytrec_eval-terrier==0.5.11
    python bench/bench_score.py [--bench-python /work/benchvenv/bin/python] [--repeat 5]
        [--against /path/to/other/checkout] [--no-compute]

Ratios are paired: each round runs every command once, back to back (every other round in
reverse order), and the figure is the median of the rounds' own ratios (a load spike then hits
both sides of a ratio alike), beside the ratio of the medians. They are given for process wall
time and for process CPU time (user + system): when other work holds the cores, wall time
includes waiting for a core and CPU time does not, so the CPU ratio is the steadier of the
two. `--against` also runs another checkout's golden (its default save) in the same rounds:
the code before a change, measured under the same load. The load average is printed before
and after.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N_QUERIES = 10_000
N_RETRIEVED = 100
KS = (1, 3, 5, 10)
PAIRS = {f"{g}@{k}": f"{p}_{k}" for k in KS for g, p in
         (("precision", "P"), ("recall", "recall"), ("hit_rate", "success"),
          ("ndcg", "ndcg_cut"))} | {"mrr": "recip_rank", "map": "map"}
MEASURES = {f"{m}.{','.join(map(str, KS))}" for m in ("P", "recall", "success", "ndcg_cut")} | {
    "recip_rank", "map"}
ROOT = Path(__file__).resolve().parents[1]

PYTREC_SCRIPT = """
import json, sys
import pytrec_eval
with open(sys.argv[1]) as f:
    qrel = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
measures = set(json.loads(sys.argv[4]))
results = pytrec_eval.RelevanceEvaluator(qrel, measures).evaluate(run)
with open(sys.argv[3], "w") as f:
    json.dump(results, f)
"""


def write_data(folder: Path, seed: int = 7) -> tuple[Path, Path]:
    rng = random.Random(seed)
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    with qrels.open("w") as q, run.open("w") as r:
        for i in range(N_QUERIES):
            qid = f"q{i}"
            pool = list(dict.fromkeys(f"d{rng.randrange(5000)}" for _ in range(300)))
            for d in rng.sample(pool, 20):
                q.write(f"{qid} 0 {d} {rng.choice((0, 0, 1, 2, 3))}\n")
            for rank, d in enumerate(pool[:N_RETRIEVED], 1):
                r.write(f"{qid} Q0 {d} {rank} {round(rng.random(), 2)} bench\n")
    return qrels, run


def worker_compute(side: str, qrels_path: str, run_path: str) -> dict:
    """In-process compute time from parsed dicts (parsing not timed)."""
    if side == "golden":
        sys.path.insert(0, str(ROOT))
        from builder.score.trec import read_qrels, read_trec_run
        from builder.score.retrieval import evaluate

        qrels, run = read_qrels(qrels_path), read_trec_run(run_path)
        t0 = time.perf_counter()
        evaluate(qrels, run, KS)
        return {"compute_s": time.perf_counter() - t0}
    import pytrec_eval

    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    t0 = time.perf_counter()
    pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
    return {"compute_s": time.perf_counter() - t0}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], cwd: Path, cpu: list[float]) -> float:
    """The command's process wall time; its CPU time (user + system) is appended to `cpu`."""
    c0, t0 = _children_cpu(), time.perf_counter()
    subprocess.run(cmd, check=True, cwd=cwd, capture_output=True)
    wall = time.perf_counter() - t0
    cpu.append(_children_cpu() - c0)
    return wall


def _fresh(db: Path) -> None:
    """No database left from the round before: each save creates its file, as the first
    `golden score` in a folder does."""
    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        path.unlink(missing_ok=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=3, metavar=("SIDE", "QRELS", "RUN"))
    ap.add_argument("--bench-python", default="/work/benchvenv/bin/python")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-compute", action="store_true",
                    help="Only the end-to-end commands (not the in-process compute figures).")
    ap.add_argument("--against", type=Path, default=None,
                    help="Another checkout whose golden (default save) runs in the same rounds.")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker_compute(*args.worker)))
        return

    golden = [sys.executable, "-m", "builder.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        qrels, run = write_data(folder)
        script = folder / "pytrec_score.py"
        script.write_text(PYTREC_SCRIPT)
        pytrec_cmd = [args.bench_python, str(script), str(qrels), str(run),
                      str(folder / "pytrec.json"), json.dumps(sorted(MEASURES))]
        golden_cmd = [*golden, "--db", str(folder / "bench.db"), "score", "--qrels", str(qrels),
                      "--trec-run", str(run), "--no-judge", "--out", str(folder / "golden.json")]
        ends = {  # name: (command, folder it runs in, wants a new database)
            "golden end to end": ([*golden_cmd, "--no-save"], ROOT, False),
            "pytrec end to end": (pytrec_cmd, ROOT, False),
            "golden end to end + save": ([*golden_cmd, "--name", "r"], ROOT, True)}
        if args.against:
            ends["other end to end + save"] = (
                [*golden_cmd[:-1], str(folder / "other.json"), "--name", "r"], args.against, True)
        names = ([] if args.no_compute else ["golden compute", "pytrec compute"]) + list(ends)
        times: dict[str, list[float]] = {k: [] for k in names}
        cpu: dict[str, list[float]] = {k: [] for k in ends}
        load_before = os.getloadavg()
        for i in range(args.repeat):  # interleaved
            for side, python in (() if args.no_compute else
                                 (("golden", sys.executable), ("pytrec", args.bench_python))):
                out = subprocess.run([python, __file__, "--worker", side, str(qrels), str(run)],
                                     check=True, capture_output=True, text=True, cwd=ROOT).stdout
                times[f"{side} compute"].append(json.loads(out)["compute_s"])
            # every other round in reverse order, so no command always runs first (or last)
            for name in (list(ends) if i % 2 == 0 else list(reversed(ends))):
                cmd, cwd, fresh = ends[name]
                if fresh:
                    _fresh(folder / "bench.db")
                times[name].append(timed(cmd, cwd, cpu[name]))
        load_after = os.getloadavg()

        ours = json.loads((folder / "golden.json").read_text())["per_query"]
        theirs = json.loads((folder / "pytrec.json").read_text())
        mismatches = sum(1 for q, measures in theirs.items() for g, p in PAIRS.items()
                         if abs(ours[q]["metrics"][g] - measures[p]) > 1e-9)

    med = {k: statistics.median(v) for k, v in times.items()}

    def paired(figures: dict[str, list[float]], name: str) -> str:
        ref = figures["pytrec end to end"]
        ratios = [a / b for a, b in zip(figures[name], ref)]
        return (f"{statistics.median(ratios):.2f}x (rounds {min(ratios):.2f}-{max(ratios):.2f};"
                f" ratio of medians {statistics.median(figures[name]) / statistics.median(ref):.2f}x)")

    print(f"{N_QUERIES} queries x {N_RETRIEVED} retrieved ids, k={','.join(map(str, KS))}, "
          f"{len(PAIRS)} shared measures; median of {args.repeat} interleaved runs "
          "(a shared machine: compare the ratios, not the seconds)")
    print(f"{'':<28}{'seconds':>10}{'CPU s':>10}")
    for k, v in med.items():
        shown = f"{statistics.median(cpu[k]):>10.3f}" if k in cpu else ""
        print(f"{k:<28}{v:>10.3f}{shown}")
    if not args.no_compute:
        print(f"golden / pytrec_eval-terrier compute: "
              f"{med['golden compute'] / med['pytrec compute']:.2f}x (below 1 = golden faster)")
    for title, figures in (("process wall", times), ("process CPU (user + system)", cpu)):
        print(f"paired, per round, against pytrec_eval end to end, {title}:")
        for name in ends:
            if name != "pytrec end to end":
                print(f"  {name:<26}{paired(figures, name)}")
        if args.against:
            ratios = [a / b for a, b in zip(figures["golden end to end + save"],
                                            figures["other end to end + save"])]
            print(f"  {'this save / other save':<26}{statistics.median(ratios):.2f}x (rounds "
                  f"{min(ratios):.2f}-{max(ratios):.2f})")
    print("load average before: {:.2f} {:.2f} {:.2f}, after: {:.2f} {:.2f} {:.2f}".format(
        *load_before, *load_after))
    print(f"per-query values compared: {len(theirs) * len(PAIRS)}, mismatches: {mismatches}")
    if mismatches:
        sys.exit(1)


if __name__ == "__main__":
    main()
