"""Comparing score reports: a baseline and one or more changed runs, metric by metric.

For every summary metric and every run: its value, the delta against the baseline, a paired
bootstrap 95% confidence interval of the per-query delta over the queries both reports scored,
and an arrow with a verdict in the metric's own direction (`directions`: a drop in
hallucination_rate is better). Per-type and per-difficulty means with their deltas, the
operations figures with theirs, and per run the queries that got worse on a headline metric,
worst drop first, each with the metrics that improved for it at the same time (the trade-off
that one metric's gain cost in another).

Guarantees:
- the bootstrap is seeded and resamples queries, not metrics: one resample of the shared
  queries serves every metric of a run, so intervals are paired across metrics too, and the
  same inputs always give the same intervals (percentile method);
- a run that shares no query with the baseline is an InputError (exit 2): there is nothing to
  compare;
- the result is a plain dict of plain values (`compare_reports`), rendered as JSON, Markdown,
  HTML or a terminal table by the functions here and in `html`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel

from builder.errors import InputError
from builder.score.directions import arrow, lower_is_better, verdict
from builder.score.inputs import within
from builder.score.cells import fmt, md_cell, md_table, one_cell, query_label
from builder.text.input_files import read_input_text

RESAMPLES = 1000
SEED = 0
CONFIDENCE = 0.95
WORSE_LIMIT = 50   # worse queries listed per run in Markdown, HTML and the terminal


class Resamples:
    """`resamples` bootstrap draws of `n` items (with replacement), kept as per-item counts so
    that any metric's mean over any subset of the items can be resampled from the same draws."""

    def __init__(self, n: int, resamples: int, seed: int):
        rng = random.Random(seed)
        population = range(n)
        self.counts: list[bytearray] = []
        for _ in range(resamples):
            counts = bytearray(n)
            for i in rng.choices(population, k=n):
                counts[i] += 1
            self.counts.append(counts)

    def interval(self, pairs: Sequence[tuple[int, float]],
                 confidence: float = CONFIDENCE) -> tuple[float, float] | None:
        """Interval of the mean of `pairs` ((item index, value)): each draw's mean over the
        drawn copies of those items; draws holding none of them are skipped."""
        if len(pairs) < 2:
            return None
        means = []
        for counts in self.counts:
            weight = total = 0
            for i, value in pairs:
                c = counts[i]
                if c:
                    weight += c
                    total += c * value
            if weight:
                means.append(total / weight)
        if not means:
            return None
        means.sort()
        tail = (1 - confidence) / 2
        last = len(means) - 1
        return means[int(tail * last + 0.5)], means[int((1 - tail) * last + 0.5)]


def headline_metrics(summary: Mapping[str, float]) -> list[str]:
    """Metrics a query is called 'worse' on: largest-k hit rate, recall and nDCG, MRR, and the
    judge's correctness, faithfulness and context relevance."""
    ks = sorted({int(m.split("@")[1]) for m in summary if "@" in m})
    k = ks[-1] if ks else None
    wanted = ([f"hit_rate@{k}", f"recall@{k}", f"ndcg@{k}"] if k else []) + [
        "mrr", "correctness", "faithfulness", "context_relevance"]
    return [m for m in wanted if m in summary]


def breakdown_metrics(summary: Mapping[str, float]) -> list[str]:
    """Metrics shown per type and difficulty: the headline ones plus hallucination rate."""
    return headline_metrics(summary) + [m for m in ("hallucination_rate",) if m in summary]


def run_labels(reports: Sequence[Mapping[str, Any]], labels: Sequence[str] | None) -> list[str]:
    """A short distinct name per report: the given labels, else the run file's stem; when run
    files share a name (run.jsonl scored three times), the report files' stems; only when those
    collide too, a number."""
    if labels:
        if len(labels) != len(reports):
            raise InputError(f"--labels names {len(labels)} runs for {len(reports)} reports")
        return list(labels)
    names = [Path(r.get("run") or r.get("path") or f"run {i}").stem
             for i, r in enumerate(reports, 1)]
    if len(set(names)) < len(names):
        by_file = [Path(r["path"]).stem if r.get("path") else names[i]
                   for i, r in enumerate(reports)]
        if len(set(by_file)) == len(by_file):
            return by_file
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    return [name if seen[name] == 1 else f"{name} ({i})" for i, name in enumerate(names, 1)]


def compare_reports(reports: Sequence[Mapping[str, Any]], *, labels: Sequence[str] | None = None,
                    resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, Any]:
    """Compare `reports[1:]` against `reports[0]` (the baseline); see the module docstring.
    Each report is a score report dict (at least `summary` and `per_query`)."""
    if len(reports) < 2:
        raise InputError("compare needs a baseline and at least one other report")
    names = run_labels(reports, labels)
    base = reports[0]
    qa = base["per_query"]
    metric_order = list(base["summary"])
    for r in reports[1:]:
        metric_order += [m for m in r["summary"] if m not in metric_order]

    commons, draws = [None], [None]
    for name, r in zip(names[1:], reports[1:]):
        common = [q for q in qa if q in r["per_query"]]
        if not common:
            raise InputError(f"{name} shares no query with the baseline {names[0]}: nothing to "
                             "compare (are they scored against the same golden file?)",
                             path=r.get("path"))
        commons.append(common)
        draws.append(Resamples(len(common), resamples, seed))

    rows = []
    for metric in metric_order:
        values = [r["summary"].get(metric) for r in reports]
        changes: list[dict[str, Any] | None] = [None]
        for i, r in enumerate(reports[1:], 1):
            qb = r["per_query"]
            pairs = [(j, qb[q]["metrics"][metric] - qa[q]["metrics"][metric])
                     for j, q in enumerate(commons[i])
                     if metric in qa[q]["metrics"] and metric in qb[q]["metrics"]]
            delta = (values[i] - values[0]
                     if values[i] is not None and values[0] is not None else None)
            ci = draws[i].interval(pairs) if pairs else None
            changes.append({
                "delta": delta, "paired_n": len(pairs),
                "paired_delta": sum(d for _, d in pairs) / len(pairs) if pairs else None,
                "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None,
                "significant": bool(ci and (ci[0] > 0 or ci[1] < 0)),
                "verdict": verdict(metric, delta), "arrow": arrow(delta),
            })
        rows.append({"metric": metric, "lower_is_better": lower_is_better(metric),
                     "values": values, "changes": changes})

    heads = [m for m in headline_metrics(base["summary"])
             if all(m in r["summary"] for r in reports[1:])]
    return {
        "runs": [{"label": name, "run": r.get("run"), "report": r.get("path")}
                 for name, r in zip(names, reports)],
        "resamples": resamples, "seed": seed, "confidence": CONFIDENCE,
        "common_queries": [len(qa)] + [len(c) for c in commons[1:]],
        "only_baseline": [0] + [sum(1 for q in qa if q not in r["per_query"])
                                for r in reports[1:]],
        "only_run": [0] + [sum(1 for q in r["per_query"] if q not in qa) for r in reports[1:]],
        "metrics": rows,
        "operations": _operations(reports),
        "breakdowns": {field: _breakdowns(reports, field) for field in ("type", "difficulty")},
        "headline_metrics": heads,
        "worse": [[]] + [_worse(qa, r["per_query"], commons[i], heads, metric_order)
                         for i, r in enumerate(reports[1:], 1)],
    }


def _operations(reports: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    names: list[str] = []
    for r in reports:
        names += [n for n in (r.get("operations") or {}) if n not in names
                  and not n.endswith("_n")]
    rows = []
    for name in names:
        values = [(r.get("operations") or {}).get(name) for r in reports]
        changes: list[dict[str, Any] | None] = [None]
        for v in values[1:]:
            delta = v - values[0] if v is not None and values[0] is not None else None
            changes.append({"delta": delta, "verdict": verdict(name, delta),
                            "arrow": arrow(delta)})
        rows.append({"metric": name, "lower_is_better": lower_is_better(name),
                     "values": values, "changes": changes})
    return rows


def _breakdowns(reports: Sequence[Mapping[str, Any]], field: str) -> dict[str, Any]:
    """Per group (in the baseline's order, then groups only later runs have): n and the
    breakdown metrics' means per run, with deltas against the baseline."""
    metrics = breakdown_metrics(reports[0]["summary"])
    tables = [(r.get("breakdowns") or {}).get(field) or {} for r in reports]
    groups: list[str] = []
    for t in tables:
        groups += [g for g in t if g not in groups]
    out: dict[str, Any] = {}
    for g in groups:
        cells = [t.get(g) or {} for t in tables]
        entry: dict[str, Any] = {"n": [int(c.get("n", 0)) for c in cells], "metrics": {}}
        for m in metrics:
            values = [c.get(m) for c in cells]
            deltas = [None] + [v - values[0] if v is not None and values[0] is not None
                               else None for v in values[1:]]
            entry["metrics"][m] = {"values": values, "deltas": deltas,
                                   "verdicts": [None] + [verdict(m, d) for d in deltas[1:]]}
        out[g] = entry
    return out


def _worse(qa: Mapping[str, Any], qb: Mapping[str, Any], common: Sequence[str],
           heads: Sequence[str], metric_order: Sequence[str]) -> list[dict[str, Any]]:
    worse = []
    for q in common:
        ma, mb = qa[q]["metrics"], qb[q]["metrics"]
        drops = {m: mb[m] - ma[m] for m in heads
                 if m in ma and m in mb and verdict(m, mb[m] - ma[m]) == "worse"}
        if not drops:
            continue
        gains = {m: mb[m] - ma[m] for m in metric_order
                 if m in ma and m in mb and verdict(m, mb[m] - ma[m]) == "better"}
        entry = qb[q]
        worse.append({"query_id": q, "question": entry.get("question"),
                      "type": entry.get("type"), "difficulty": entry.get("difficulty"),
                      "drops": drops, "gains": gains,
                      "worst": min(-abs(d) for d in drops.values())})
    worse.sort(key=lambda w: (w["worst"], w["query_id"]))
    return worse


# A figure in a report must be a finite number no larger than this (either sign): `golden
# score` writes means and totals of bounded values (`inputs.MAX_MEASURE`), far below it, while
# a hand-edited `Infinity` or 1e308 would make a delta, a bootstrap mean or the JSON output
# (which cannot hold inf or NaN) fail. Such a report is refused while it is read.
MAX_FIGURE = 1e100
Figure = Annotated[float, within(-MAX_FIGURE, MAX_FIGURE)]


class _PerQuery(BaseModel):
    metrics: dict[str, Figure]
    question: str | None = None
    type: str | None = None
    difficulty: str | None = None


class _ReportFile(BaseModel):
    """What `compare` needs from a report JSON written by `golden score --out X.json`."""

    run: str | None = None
    summary: dict[str, Figure]
    per_query: dict[str, _PerQuery]
    breakdowns: dict[str, dict[str, dict[str, Figure]]] = {}
    operations: dict[str, Figure] = {}


def read_report(path: str) -> dict[str, Any]:
    """A score report JSON as a plain dict (InputError naming the file when it is not one)."""
    from pydantic import ValidationError

    text = read_input_text(path)
    try:
        data = _ReportFile.model_validate_json(text)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "file"
        message = err["msg"].removeprefix("Value error, ")
        raise InputError(f"not a golden score report JSON ({where}: {message})",
                         path=path) from None
    out = data.model_dump()
    out["path"] = path
    return out


# ---------------------------------------------------------------- text renderers

def change_text(change: Mapping[str, Any] | None, *, ci: bool = True, digits: int = 4) -> str:
    """`+0.0500 ↑ better [+0.010, +0.090]*` (the star: the interval excludes 0)."""
    if change is None or change["delta"] is None:
        return "–"
    text = f"{change['delta']:+.{digits}f} {change['arrow']}"
    if change["verdict"] != "same":
        text += f" {change['verdict']}"
    if ci and change.get("ci_low") is not None:
        text += f" [{change['ci_low']:+.3f}, {change['ci_high']:+.3f}]"
        if change["significant"]:
            text += "*"
    return text


def render_comparison_markdown(result: Mapping[str, Any]) -> str:
    labels = [r["label"] for r in result["runs"]]
    lines = ["# golden compare", ""]
    for i, r in enumerate(result["runs"]):
        role = "baseline" if i == 0 else f"{result['common_queries'][i]} queries shared"
        lines.append(f"- **{md_cell(r['label'])}**: `{md_cell(r['run'] or r['report'], None)}`"
                     f" ({role})")
    lines += ["", f"Deltas against {md_cell(labels[0])}; ↑/↓ is the direction of the change, "
              "better/worse follows the metric (lower is better for hallucination and wrong-"
              f"refusal rates, latency and cost). Paired bootstrap "
              f"{result['confidence']:.0%} interval in brackets ({result['resamples']} "
              f"resamples, seed {result['seed']}); * = the interval excludes 0.", ""]
    header = ["metric", md_cell(labels[0])] + [md_cell(x) for x in labels[1:]] + [
        f"Δ {md_cell(x)}" for x in labels[1:]]
    lines += ["## Metrics", ""]
    lines += md_table(header, [_md_row(r) for r in result["metrics"]])
    if result["operations"]:
        lines += ["## Operations", ""]
        lines += md_table(header, [_md_row(r, ci=False) for r in result["operations"]])
    for field in ("type", "difficulty"):
        groups = result["breakdowns"][field]
        if not groups:
            continue
        lines += [f"## By {field}", ""]
        metrics = list(next(iter(groups.values()))["metrics"])
        head = [field, "metric", *map(md_cell, labels)] + [f"Δ {md_cell(x)}" for x in labels[1:]]
        rows = []
        for g, entry in groups.items():
            for m in metrics:
                cell = entry["metrics"][m]
                rows.append([md_cell(g) + f" (n {'/'.join(map(str, entry['n']))})", md_cell(m),
                             *(fmt(v) for v in cell["values"]),
                             *(_delta_word(d, v) for d, v in zip(cell["deltas"][1:],
                                                                 cell["verdicts"][1:]))])
        lines += md_table(head, rows)
    for i, worse in enumerate(result["worse"][1:], 1):
        lines += [f"## Worse in {md_cell(labels[i])} ({len(worse)} queries)", ""]
        if not worse:
            lines += ["No query got worse on " + ", ".join(result["headline_metrics"]) + ".", ""]
            continue
        lines += md_table(["question", "type", "worse on", "better on"], [
            [md_cell(query_label(w), 120), md_cell(w["type"]), md_cell(deltas_text(w["drops"])),
             md_cell(deltas_text(w["gains"]), 160)] for w in worse[:WORSE_LIMIT]])
        if len(worse) > WORSE_LIMIT:
            lines += [f"({len(worse) - WORSE_LIMIT} more in the JSON output)", ""]
    return "\n".join(lines)


def _md_row(row: Mapping[str, Any], *, ci: bool = True) -> list[str]:
    name = row["metric"] + (" (lower is better)" if row["lower_is_better"] else "")
    return [md_cell(name), *(fmt(v) for v in row["values"]),
            *(md_cell(change_text(c, ci=ci), None) for c in row["changes"][1:])]


def _delta_word(delta: float | None, word: str | None) -> str:
    if delta is None:
        return "–"
    return f"{delta:+.4f} {arrow(delta)}" + (f" {word}" if word and word != "same" else "")


def deltas_text(values: Mapping[str, float]) -> str:
    return ", ".join(f"{m} {d:+.3f}" for m, d in values.items())


def _terminal_value(value: Any) -> str:
    """A figure in few characters: 3 decimals under 10, one above (latencies, tokens)."""
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return fmt(value)


def _terminal_delta(change: Mapping[str, Any] | None, *, words: bool = True):
    """`+0.050↑ worse*`: the change, its arrow, better/worse (unless not `words`), and * when
    the paired interval excludes 0."""
    from rich.text import Text

    if change is None or change["delta"] is None:
        return Text("–")
    text = _terminal_value(change["delta"])
    text = ("+" if change["delta"] >= 0 else "") + text.lstrip("+") + change["arrow"]
    if change["verdict"] != "same" and words:
        text += f" {change['verdict']}"
    if change.get("significant"):
        text += "*"
    return Text(text, style={"better": "green", "worse": "red"}.get(change["verdict"], ""))


def print_comparison(result: Mapping[str, Any], console=None, *, limit: int = 20) -> None:
    """The terminal view: the headline metrics (largest k), MRR, MAP, the judge's and the
    operations figures, each delta with its arrow and verdict (* when the paired interval
    excludes 0); every metric with its interval is in the --out files."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = console or Console(highlight=False)
    labels = [r["label"] for r in result["runs"]]
    shown = set(result["headline_metrics"]) | {"mrr", "map"}
    rows = [r for r in result["metrics"] if r["metric"] in shown or "@" not in r["metric"]]
    # Titles as `Text`: a run label is untrusted (a file name) and must not be read as markup.
    table = Table(title=Text(f"Baseline: {one_cell(labels[0])} (* the paired interval excludes "
                             "0; all metrics and intervals: --out compare.md or .html)"),
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    body = rows + result["operations"]
    deltas = [[_terminal_delta(c) for c in row["changes"][1:]] for row in body]
    widths = [max((len(cells[j].plain) for cells in deltas), default=1)
              for j in range(len(labels) - 1)]
    needed = (max(len(row["metric"]) for row in body) + 3
              + sum(max(6, min(len(label), 12)) + 3 for label in labels)
              + sum(max(w, len(label) + 2) + 3 for w, label in zip(widths, labels[1:])))
    if needed > console.width:
        # too narrow for the words: the arrow, the colour and the mark say it
        deltas = [[_terminal_delta(c, words=False) for c in row["changes"][1:]] for row in body]
        table.title = Text(f"Baseline: {one_cell(labels[0])} (↑/↓ the change; green better, "
                           "red worse; * the paired interval excludes 0; all metrics and "
                           "intervals: --out compare.md or .html)")
    # The deltas (and their significance marks) are never cut: their columns are as wide as
    # their widest cell; the run labels wrap in their headers instead of being cut.
    table.add_column("metric", overflow="fold", min_width=12)
    for label in labels:
        table.add_column(Text(one_cell(label, 40)), justify="right", overflow="fold",
                         min_width=6)
    for j, label in enumerate(labels[1:]):
        widest = max((len(cells[j].plain) for cells in deltas), default=1)
        table.add_column(Text("Δ " + one_cell(label, 40)), justify="right", overflow="fold",
                         min_width=widest)
    for row, cells in zip(body, deltas):
        table.add_row(row["metric"], *(_terminal_value(v) for v in row["values"]), *cells)
    console.print(table)
    for i, worse in enumerate(result["worse"][1:], 1):
        console.print(Text(f"{one_cell(labels[i])}: {result['common_queries'][i]} queries shared "
                           f"with the baseline; {len(worse)} got worse on "
                           f"{', '.join(result['headline_metrics']) or 'no shared metric'}."))
        if worse:
            wt = Table(title=Text(f"Worse in {one_cell(labels[i])} (worst "
                                  f"{min(limit, len(worse))})"),
                       title_justify="left")
            for col in ("question", "worse on", "better on"):
                wt.add_column(col)
            for w in worse[:limit]:
                wt.add_row(Text(one_cell(query_label(w), 60)), Text(deltas_text(w["drops"])),
                           Text(one_cell(deltas_text(w["gains"]), 60)))
            console.print(wt)
