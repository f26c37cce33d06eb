"""Comparing two score reports (A = baseline, B = candidate) metric by metric.

For each summary metric: A, B, delta = B - A, and a paired bootstrap 95% confidence interval of
the delta over the queries both reports scored for that metric (percentile method, seeded, so
the same inputs always give the same interval). Also the items that got worse on a headline
metric, worst drop first.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from builder.score.report import LOWER_IS_BETTER, fmt, md_cell, md_table, visible

RESAMPLES = 1000
SEED = 0


def bootstrap_ci(diffs: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED,
                 confidence: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of paired differences; None with < 2 pairs."""
    n = len(diffs)
    if n < 2:
        return None
    rng = random.Random(seed)
    get = diffs.__getitem__
    population = range(n)
    means = sorted(sum(map(get, rng.choices(population, k=n))) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    lo = means[int(tail * resamples)]
    hi = means[min(resamples - 1, int((1 - tail) * resamples))]
    return lo, hi


def headline_metrics(summary: Mapping[str, float]) -> list[str]:
    """Metrics an item is called 'worse' on: largest-k hit rate, recall and nDCG, MRR, and the
    judge's correctness, faithfulness and context relevance."""
    ks = sorted({int(m.split("@")[1]) for m in summary if "@" in m})
    k = ks[-1] if ks else None
    wanted = ([f"hit_rate@{k}", f"recall@{k}", f"ndcg@{k}"] if k else []) + [
        "mrr", "correctness", "faithfulness", "context_relevance"]
    return [m for m in wanted if m in summary]


def compare_reports(a: Mapping[str, Any], b: Mapping[str, Any], *,
                    resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, Any]:
    """Side-by-side metrics with deltas and CIs, and the items that got worse."""
    sa, sb = a["summary"], b["summary"]
    qa, qb = a["per_query"], b["per_query"]
    common = [q for q in qa if q in qb]
    rows = []
    for metric in list(sa) + [m for m in sb if m not in sa]:
        diffs = [qb[q]["metrics"][metric] - qa[q]["metrics"][metric] for q in common
                 if metric in qa[q]["metrics"] and metric in qb[q]["metrics"]]
        ci = bootstrap_ci(diffs, resamples=resamples, seed=seed)
        va, vb = sa.get(metric), sb.get(metric)
        rows.append({
            "metric": metric, "a": va, "b": vb,
            "delta": vb - va if va is not None and vb is not None else None,
            "paired_n": len(diffs),
            "paired_delta": sum(diffs) / len(diffs) if diffs else None,
            "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None,
            "significant": bool(ci and (ci[0] > 0 or ci[1] < 0)),
            "lower_is_better": metric in LOWER_IS_BETTER,
        })
    heads = [m for m in headline_metrics(sa) if m in sb]
    worse = []
    for q in common:
        ma, mb = qa[q]["metrics"], qb[q]["metrics"]
        drops = {m: mb[m] - ma[m] for m in heads if m in ma and m in mb and mb[m] < ma[m]}
        if drops:
            worse.append({"query_id": q, "question": qb[q].get("question"),
                          "type": qb[q].get("type"), "drops": drops,
                          "worst": min(drops.values())})
    worse.sort(key=lambda w: (w["worst"], w["query_id"]))
    return {
        "a": a.get("run"), "b": b.get("run"), "resamples": resamples, "seed": seed,
        "common_queries": len(common), "only_a": sum(1 for q in qa if q not in qb),
        "only_b": sum(1 for q in qb if q not in qa), "metrics": rows,
        "headline_metrics": heads, "worse": worse,
    }


def print_comparison(result: Mapping[str, Any], console=None, *, limit: int = 20) -> None:
    console = console or Console(highlight=False)
    table = Table(title=f"A: {visible(result['a'])}  vs  B: {visible(result['b'])}",
                  title_justify="left")
    for col in ("metric", "A", "B", "delta", "95% CI (paired)", "n"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for row in result["metrics"]:
        ci = (f"[{row['ci_low']:+.4f}, {row['ci_high']:+.4f}]"
              if row["ci_low"] is not None else "–")
        delta = "–" if row["delta"] is None else f"{row['delta']:+.4f}"
        style = ""
        if row["significant"] and row["delta"] is not None:
            better = (row["delta"] < 0) if row["lower_is_better"] else (row["delta"] > 0)
            style = "green" if better else "red"
        table.add_row(row["metric"], fmt(row["a"]), fmt(row["b"]), Text(delta, style=style),
                      ci, str(row["paired_n"]))
    console.print(table)
    worse = result["worse"]
    console.print(Text(f"{result['common_queries']} queries in both; {len(worse)} got worse on "
                       f"{', '.join(result['headline_metrics']) or 'no shared metric'}."))
    if worse:
        wt = Table(title=f"Worse items (worst {min(limit, len(worse))})", title_justify="left")
        for col in ("query", "drops", "question"):
            wt.add_column(col)
        for w in worse[:limit]:
            wt.add_row(Text(visible(w["query_id"], 24)), _drops_text(w["drops"]),
                       Text(visible(w["question"], 60)))
        console.print(wt)


def render_comparison_markdown(result: Mapping[str, Any]) -> str:
    lines = ["# golden compare", "", f"- A: `{md_cell(result['a'], None)}`",
             f"- B: `{md_cell(result['b'], None)}`",
             f"- {result['common_queries']} queries in both; bootstrap {result['resamples']} "
             f"resamples, seed {result['seed']}", ""]
    lines += md_table(
        ["metric", "A", "B", "delta", "95% CI", "n"],
        [[md_cell(r["metric"]), fmt(r["a"]), fmt(r["b"]),
          "–" if r["delta"] is None else f"{r['delta']:+.4f}",
          "–" if r["ci_low"] is None else f"[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]",
          str(r["paired_n"])] for r in result["metrics"]])
    if result["worse"]:
        lines += [f"## Worse items ({len(result['worse'])})", ""]
        lines += md_table(["query", "drops", "question"], [
            [md_cell(w["query_id"]), md_cell(_drops_text(w["drops"])), md_cell(w["question"], 120)]
            for w in result["worse"]])
    return "\n".join(lines)


def _drops_text(drops: Mapping[str, float]) -> str:
    return ", ".join(f"{m} {d:+.3f}" for m, d in drops.items())
