"""Benchmark: golden's retrieval metrics against pytrec_eval-terrier on the same data.

10,000 queries x 100 retrieved ids (scores with ties), graded qrels (0-3), 5 metrics at k=10:
hit_rate@10 (success_10), recall@10, precision@10 (P_10), ndcg@10 (ndcg_cut_10), MRR
(recip_rank; golden computes map and the other cutoffs too). Both sides rank by score and
break ties by docno, so the means must be identical; the script checks them to 1e-9.

Each side runs in its own process, several times, reporting the median of:
- compute: from in-memory dicts to per-query figures (pytrec_eval: RelevanceEvaluator +
  evaluate; golden: ranking by score + `evaluate`),
- process wall: interpreter start, imports, reading the JSON data, compute.

pytrec_eval lives only in a separate venv (it is not a golden dependency):

    python3 -m venv /work/benchvenv && /work/benchvenv/bin/pip install pytrec_eval-terrier
    /work/venv/bin/python bench/bench_score.py [--bench-python /work/benchvenv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N_QUERIES = 10_000
N_RETRIEVED = 100
K = 10
PAIRS = {  # golden metric -> pytrec_eval measure
    "hit_rate@10": "success_10", "recall@10": "recall_10", "precision@10": "P_10",
    "ndcg@10": "ndcg_cut_10", "mrr": "recip_rank",
}
ROOT = Path(__file__).resolve().parents[1]


def make_data(seed: int = 7) -> dict:
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(N_QUERIES):
        qid = f"q{q}"
        pool = [f"d{rng.randrange(5000)}" for _ in range(300)]
        judged = {d: rng.choice((0, 0, 1, 2, 3)) for d in rng.sample(pool, 20)}
        qrels[qid] = judged
        docs = list(dict.fromkeys(pool))[:N_RETRIEVED]
        run[qid] = {d: round(rng.random(), 2) for d in docs}  # 2 decimals: many ties
    return {"qrels": qrels, "run": run}


def worker_golden(path: str) -> dict:
    sys.path.insert(0, str(ROOT))
    from builder.score.retrieval import evaluate, mean_metrics

    data = json.loads(Path(path).read_text())
    t0 = time.perf_counter()
    per_query = evaluate(data["qrels"], data["run"], (K,))  # ranked by score as trec_eval
    compute = time.perf_counter() - t0
    means = mean_metrics(per_query.values())
    return {"compute_s": compute, "means": {m: means[m] for m in PAIRS}}


def worker_pytrec(path: str) -> dict:
    import pytrec_eval

    data = json.loads(Path(path).read_text())
    t0 = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(
        data["qrels"], {"success.10", "recall.10", "P.10", "ndcg_cut.10", "recip_rank"})
    per_query = evaluator.evaluate(data["run"])
    compute = time.perf_counter() - t0
    means = {g: statistics.fmean(q[p] for q in per_query.values()) for g, p in PAIRS.items()}
    return {"compute_s": compute, "means": means}


def run_worker(python: str, side: str, path: str) -> tuple[dict, float]:
    t0 = time.perf_counter()
    out = subprocess.run([python, __file__, "--worker", side, path], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out), time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=2, metavar=("SIDE", "DATA"))
    ap.add_argument("--bench-python", default="/work/benchvenv/bin/python")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if args.worker:
        side, path = args.worker
        print(json.dumps((worker_golden if side == "golden" else worker_pytrec)(path)))
        return

    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "data.json")
        Path(path).write_text(json.dumps(make_data()))
        results = {"golden": [], "pytrec_eval": []}
        for _ in range(args.repeat):  # interleaved, so machine noise hits both sides alike
            results["golden"].append(run_worker(sys.executable, "golden", path))
            results["pytrec_eval"].append(run_worker(args.bench_python, "pytrec", path))

    g_means = results["golden"][0][0]["means"]
    p_means = results["pytrec_eval"][0][0]["means"]
    print(f"{N_QUERIES} queries x {N_RETRIEVED} retrieved ids, 5 metrics at k={K}, "
          f"median of {args.repeat} interleaved runs")
    print(f"{'metric':<14}{'golden':>12}{'pytrec_eval':>14}")
    identical = True
    for m in PAIRS:
        same = abs(g_means[m] - p_means[m]) < 1e-9
        identical &= same
        print(f"{m:<14}{g_means[m]:>12.6f}{p_means[m]:>14.6f}  {'ok' if same else 'DIFFERENT'}")
    figures = {}
    for side, runs in results.items():
        figures[side] = (statistics.median(r["compute_s"] for r, _ in runs),
                         statistics.median(wall for _, wall in runs))
    print(f"{'':<14}{'compute s':>12}{'process wall s':>16}")
    for side, (compute, wall) in figures.items():
        print(f"{side:<14}{compute:>12.3f}{wall:>16.3f}")
    gc, gw = figures["golden"]
    pc, pw = figures["pytrec_eval"]
    print(f"golden / pytrec_eval: compute {gc / pc:.2f}x, process wall {gw / pw:.2f}x "
          "(below 1 = golden faster)")
    print("means identical:", identical)
    if not identical:
        sys.exit(1)


if __name__ == "__main__":
    main()
