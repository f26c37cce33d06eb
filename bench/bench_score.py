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
        [--against /path/to/other/checkout]

Ratios are paired: each round runs every command once, back to back, and the figure is the
median of the rounds' own ratios (a load spike then hits both sides of a ratio alike), beside
the ratio of the medians. `--against` also runs another checkout's golden (its default save)
in the same rounds: the code before a change, measured under the same load. The load average
is printed before and after.
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


def timed(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=cwd, capture_output=True)
    return time.perf_counter() - t0


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
        names = ["golden compute", "pytrec compute", "golden end to end", "pytrec end to end",
                 "golden end to end + save"] + (["other end to end + save"] if args.against
                                                else [])
        times: dict[str, list[float]] = {k: [] for k in names}
        load_before = os.getloadavg()
        for i in range(args.repeat):  # interleaved
            for side, python in (("golden", sys.executable), ("pytrec", args.bench_python)):
                out = subprocess.run([python, __file__, "--worker", side, str(qrels), str(run)],
                                     check=True, capture_output=True, text=True, cwd=ROOT).stdout
                times[f"{side} compute"].append(json.loads(out)["compute_s"])
            times["golden end to end"].append(timed([*golden_cmd, "--no-save"], ROOT))
            times["pytrec end to end"].append(timed(pytrec_cmd, ROOT))
            _fresh(folder / "bench.db")
            times["golden end to end + save"].append(timed([*golden_cmd, "--name", f"r{i}"], ROOT))
            if args.against:
                _fresh(folder / "bench.db")
                times["other end to end + save"].append(
                    timed([*golden_cmd[:-1], str(folder / "other.json"), "--name", f"r{i}"],
                          args.against))
        load_after = os.getloadavg()

        ours = json.loads((folder / "golden.json").read_text())["per_query"]
        theirs = json.loads((folder / "pytrec.json").read_text())
        mismatches = sum(1 for q, measures in theirs.items() for g, p in PAIRS.items()
                         if abs(ours[q]["metrics"][g] - measures[p]) > 1e-9)

    med = {k: statistics.median(v) for k, v in times.items()}
    ref = times["pytrec end to end"]

    def paired(name: str) -> str:
        ratios = [a / b for a, b in zip(times[name], ref)]
        return (f"{statistics.median(ratios):.2f}x (rounds {min(ratios):.2f}-"
                f"{max(ratios):.2f}; ratio of medians {med[name] / med['pytrec end to end']:.2f}x)")

    print(f"{N_QUERIES} queries x {N_RETRIEVED} retrieved ids, k={','.join(map(str, KS))}, "
          f"{len(PAIRS)} shared measures; median of {args.repeat} interleaved runs "
          "(a shared machine: compare the ratios, not the seconds)")
    print(f"{'':<28}{'seconds':>10}")
    for k, v in med.items():
        print(f"{k:<28}{v:>10.3f}")
    ratio = {k: med[f"golden {k}"] / med[f"pytrec {k}"] for k in ("compute", "end to end")}
    print(f"golden / pytrec_eval-terrier: compute {ratio['compute']:.2f}x,"
          f" end to end {ratio['end to end']:.2f}x, end to end with the default save "
          f"{med['golden end to end + save'] / med['pytrec end to end']:.2f}x"
          " (below 1 = golden faster)")
    print("paired, per round, against pytrec_eval end to end:")
    for name in names[2:]:
        if name != "pytrec end to end":
            print(f"  {name:<26}{paired(name)}")
    print("load average before: {:.2f} {:.2f} {:.2f}, after: {:.2f} {:.2f} {:.2f}".format(
        *load_before, *load_after))
    print(f"per-query values compared: {len(theirs) * len(PAIRS)}, mismatches: {mismatches}")
    if mismatches:
        sys.exit(1)


if __name__ == "__main__":
    main()
