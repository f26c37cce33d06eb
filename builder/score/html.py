"""Self-contained HTML pages for a score report and for a comparison: inline CSS, inline SVG
charts drawn here, no scripts and no external resources (the page opens offline, in a mail
attachment or a CI artifact viewer, and cannot phone home).

Why hand-drawn SVG rather than a charting library: the charts are horizontal bars (values in
[0, 1] or on a 1-5 scale), about 40 lines of SVG. Vega-Lite or Chart.js would have to be
inlined as several hundred KB of JavaScript per page and run script in a page that holds
untrusted text; matplotlib would pull in NumPy and still produce SVG. Neither would draw
anything these bars do not.

Every string that came from a file, a run or the judge goes through `html.escape` (via `_e`);
ids used as anchors are positions (`q-12`), never the untrusted query id itself.
"""

from __future__ import annotations

import math

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from builder.score.compare import change_text, deltas_text
from builder.score.directions import SCALE_5, arrow, lower_is_better
from builder.score.cells import (
    breakdown_columns, fmt, one_cell, query_label, report_title, trend_columns, trust_text,
)

_NUM = ' class="num"'
PER_QUERY_LIMIT = 2000   # per-query rows on one page; the JSON report has every query
PALETTE = ("#3b7dd8", "#e07b39", "#4ca66b", "#9b59b6", "#c0392b", "#16a2b8", "#7f8c8d")
FAMILIES = ("hit_rate", "mrr", "recall", "precision", "ndcg")

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:80rem;
color:#1d2125;padding:0 1rem;line-height:1.4}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
h3{font-size:1rem;margin:1rem 0 .25rem}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.88rem}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th{background:#f4f5f7}.warn{background:#fff4e5;border-left:4px solid #f0a030;padding:.5rem}
.muted{color:#667}.better{color:#1a7f37;font-weight:600}.worse{color:#cf222e;font-weight:600}
nav a{margin-right:1rem}tr:target{background:#fff8c5}.ids{font-family:monospace;
font-size:.8rem}.ids span{white-space:nowrap}svg text{font-size:11px;fill:#1d2125}
.wide{overflow-x:auto;max-width:100%}th{font-size:.8rem}
.legend{font-size:.85rem;margin:.25rem 0}.legend span{margin-right:1rem;white-space:nowrap}
.tag{display:inline-block;padding:0 .35rem;border-radius:3px;font-size:.78rem;
background:#eef0f3;margin-right:.2rem;text-decoration:none;color:#1d2125}
.tag.miss{background:#fde2e1}.tag.bad{background:#fff0c2}
"""


def _e(value: Any, limit: int | None = None) -> str:
    return escape(one_cell(value, limit), quote=True)


def _num(value: Any) -> str:
    return _e(fmt(value))


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], *,
           numeric: set[int] | None = None, row_ids: Sequence[str | None] | None = None) -> str:
    """An HTML table; cells are already-escaped HTML, header cells are escaped here."""
    numeric = numeric or set()
    head = "".join(f"<th>{_breakable(h)}</th>" for h in header)
    body = []
    for n, row in enumerate(rows):
        rid = row_ids[n] if row_ids else None
        attr = f' id="{rid}"' if rid else ""
        cells = "".join(f"<td{_NUM if i in numeric else ''}>{cell}</td>"
                        for i, cell in enumerate(row))
        body.append(f"<tr{attr}>{cells}</tr>")
    return (f'<div class="wide"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _breakable(name: str) -> str:
    """A header such as `correct_refusal_rate` may break after its underscores and before an
    `@`, so many judge columns fit 1280 px instead of pushing the table off the page."""
    return _e(name).replace("_", "_<wbr>").replace("@", "<wbr>@")


def ids_cell(ids: Sequence[str], limit: int | None = None) -> str:
    """Chunk ids, each kept whole (a hash never wraps in its middle), wrapping between ids."""
    shown, total = [], 0
    for cid in ids:
        total += len(cid) + 2
        if limit is not None and total > limit:
            shown.append("<span>…</span>")
            break
        shown.append(f"<span>{_e(cid)}</span>")
    return f'<span class="ids">{", ".join(shown)}</span>'



def _page(title: str, body: Sequence[str]) -> str:
    return "\n".join([
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>", *body, "</body></html>\n"])


# ---------------------------------------------------------------- charts

def grouped_bars(groups: Sequence[str], series: Sequence[str],
                 values: Sequence[Sequence[float | None]], *,
                 scales: Sequence[float] | None = None, maxima: Sequence[float] | None = None,
                 width: int = 640) -> str:
    """One block of bars per group, one bar per series (legend on top when there are several).
    A bar's length is value / its series' scale (or the group's maximum); None draws no bar."""
    row_h, label_w, value_w = 18, 200, 64
    plot_w = width - label_w - value_w
    block = row_h * len(series) + 8
    height = block * len(groups) + 4
    legend = ""
    if len(series) > 1:  # in HTML, where long names wrap instead of being clipped
        legend = '<p class="legend">' + "".join(
            f'<span><span style="color:{PALETTE[s % len(PALETTE)]}">■</span> {_e(name)}</span>'
            for s, name in enumerate(series)) + "</p>"
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'role="img" aria-label="bar chart">']
    for g, label in enumerate(groups):
        top = g * block
        parts.append(f'<text x="0" y="{top + row_h - 4}">{_e(label, 30)}</text>')
        for s in range(len(series)):
            value = values[g][s]
            y = top + s * row_h
            scale = (scales[s] if scales else None) or (maxima[g] if maxima else 1.0)
            color = PALETTE[s % len(PALETTE)]
            if value is None:  # no value: an empty dashed box, never a zero-length bar
                parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{plot_w}" '
                             f'height="{row_h - 5}" fill="none" stroke="#b8bec6" '
                             'stroke-dasharray="3 3"/>')
                parts.append(f'<text x="{label_w + plot_w + 6}" y="{y + row_h - 5}" '
                             'fill="#667">n/a</text>')
                continue
            parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{plot_w}" height="{row_h - 5}"'
                         f' fill="#eef0f3"/>')
            share = 0.0 if scale <= 0 else max(0.0, min(1.0, value / scale))
            # a zero is a thin stub of the series' colour, so it is seen as a value
            parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{max(share * plot_w, 2):.1f}" '
                         f'height="{row_h - 5}" fill="{color}"/>')
            parts.append(f'<text x="{label_w + plot_w + 6}" y="{y + row_h - 5}">'
                         f'{_e(fmt(value))}</text>')
    parts.append("</svg>")
    return legend + "".join(parts)


def _scale(metric: str) -> float:
    return 5.0 if metric in SCALE_5 else 1.0


# ---------------------------------------------------------------- score report

def headline_matrix(summary: Mapping[str, float], ks: Sequence[int]) -> str:
    """Retrieval metrics at every k in one matrix (families x cutoffs), uncut MRR and MAP."""
    rows = []
    for fam in FAMILIES:
        if f"{fam}@{ks[0]}" in summary:
            rows.append([_e(fam), *(_num(summary.get(f"{fam}@{k}")) for k in ks)])
    for name in ("mrr", "map"):
        if name in summary:
            rows.append([_e(f"{name} (uncut)"), _num(summary[name]), *([""] * (len(ks) - 1))])
    return _table(["metric", *(f"@{k}" for k in ks)], rows, numeric=set(range(1, len(ks) + 1)))


def render_html(report: Mapping[str, Any]) -> str:
    summary = report["summary"]
    c = report["counts"]
    ks = report["options"]["ks"]
    title = report_title(report)
    anchors = {qid: f"q-{n}" for n, qid in enumerate(report["per_query"])}
    misses = report.get("retrieval_misses") or []
    bad = report["bad_cases"]
    if report.get("subtitle"):
        about = _e(report["subtitle"])
    else:
        about = (f"golden file {_e(report['golden'])} · run file {_e(report['run'])}"
                 f" · {c['golden_items']} items ({c['answerable']} answerable, "
                 f"{c['unanswerable']} unanswerable) · {c['in_run']} in the run · "
                 f"{c['missing_from_run']} missing · {c.get('unknown_in_run', 0)} run queries "
                 f"not in the golden file · {c['judged']} judged")
    links = [("headline", "headline")]
    links += [(f"by-{field}", f"by {field}") for field in ("type", "difficulty")
              if report["breakdowns"].get(field)]  # no labels (production logs): no section
    if report.get("retrieval_miss_k") is not None:
        links.append(("misses", "retrieval misses"))
    links.append(("bad", "bad cases"))
    if report.get("trends"):
        links.append(("trends", "trends"))
    links.append(("queries", "queries"))
    out = [f"<p class=\"muted\">{about}</p>",
           "<nav>" + "".join(f'<a href="#{a}">{t}</a>' for a, t in links) + "</nav>"]
    out += [f'<p class="warn">{_e(w)}</p>' for w in report["warnings"]]

    out.append("<h2 id=\"headline\">Headline</h2>")
    if ks:
        out.append(headline_matrix(summary, ks))
    judge_rows = [(k, v) for k, v in summary.items() if "@" not in k and k not in ("mrr", "map")]
    if judge_rows:
        out.append("<h3>Judge</h3>")
        out.append(_table(["metric", "value", "better", "judge vs human labels"], [
            [_e(k), _num(v), "lower" if lower_is_better(k) else "higher",
             _e(trust_text(report, k))] for k, v in judge_rows], numeric={1}))
    if report["operations"]:
        out.append("<h3>Operations</h3>")
        out.append(_table(["figure", "value"],
                          [[_e(k), _num(v)] for k, v in report["operations"].items()],
                          numeric={1}))

    cols = breakdown_columns(report)
    chart_metrics = [m for m in cols if m.startswith(("hit_rate", "ndcg"))
                     or m in ("correctness", "faithfulness", "hallucination_rate",
                              "correct_refusal_rate")]
    for field in ("type", "difficulty"):
        groups = report["breakdowns"].get(field) or {}
        if not groups:
            continue
        out.append(f"<h2 id=\"by-{field}\">By {_e(field)}</h2>")
        out.append("<p class=\"muted\">Bars: " + ", ".join(
            _e(m) + (" (of 5)" if m in SCALE_5 else "") for m in chart_metrics) + ".</p>")
        out.append(grouped_bars([f"{name} (n {g['n']})" for name, g in groups.items()],
                                chart_metrics,
                                [[g.get(m) for m in chart_metrics] for g in groups.values()],
                                scales=[_scale(m) for m in chart_metrics]))
        out.append(_table([field, "n", *cols],
                          [[_e(name), str(g["n"]), *(_num(g.get(m)) for m in cols)]
                           for name, g in groups.items()],
                          numeric=set(range(1, len(cols) + 2))))

    out += _misses_section(report, misses, anchors)
    out += _bad_section(bad, anchors, report.get("bad_case_rule"))
    out += _trends_section(report.get("trends"))
    out += _queries_section(report, anchors, misses, bad)

    unscored = report["judge"]["unscored"]
    if unscored:
        items = c.get("judge_unscored_items", len({u["query_id"] for u in unscored}))
        out.append(f"<h2>Not scored by the judge ({items} items, {len(unscored)} metrics)</h2>")
        out.append(_table(["question", "metric", "reason"], [
            [_query_link(report["per_query"].get(u["query_id"]) or u, anchors, u["query_id"]),
             _e(u["metric"]), _e(u["reason"], 300)] for u in unscored]))
    missing = report.get("missing_queries") or []
    if missing:
        out.append(f"<h2>Not in the run ({len(missing)})</h2><ul>")
        out += [f"<li>{_e(query_label(m), 300)}</li>" for m in missing]
        out.append("</ul>")
    unknown = report.get("unknown_run_queries") or []
    if unknown:
        out.append(f"<h2>Run queries not in the golden file "
                   f"({c.get('unknown_in_run', len(unknown))}, ignored)</h2><ul>")
        out += [f"<li>{_e(u['query'], 300)}</li>" for u in unknown]
        out.append("</ul>")
    if report["judge"]["model"]:
        out.append(f"<p class=\"muted\">judge model {_e(report['judge']['model'])}</p>")
    return _page(title, out)


def _query_link(entry: Mapping[str, Any], anchors: Mapping[str, str], qid: str) -> str:
    text = _e(query_label(entry), 300)
    anchor = anchors.get(qid)
    return f'<a href="#{anchor}">{text}</a>' if anchor else text


def _misses_section(report, misses, anchors) -> list[str]:
    k = report.get("retrieval_miss_k")
    if k is None:
        return []
    total = report["counts"].get("retrieval_misses", len(misses))
    out = [f"<h2 id=\"misses\">Retrieval misses: gold not in the top {k} ({total})</h2>"]
    if not misses:
        return out + ["<p class=\"muted\">Every answerable query found all its gold chunks "
                      "in the top k.</p>"]
    if total > len(misses):
        out.append(f"<p class=\"muted\">The worst {len(misses)}; the JSON report's per_query "
                   "has every query.</p>")
    out.append("<p class=\"muted\">Worst first: no gold chunk retrieved at all, then by "
               f"recall@{k}, reciprocal rank and nDCG@{k}. No judge needed.</p>")
    out.append(_table(
        ["question", "type", "difficulty", f"recall@{k}", "missing gold", f"retrieved (top {k})"],
        [[_query_link(m, anchors, m["query_id"]), _e(m["type"]), _e(m["difficulty"]),
          _num(m[f"recall@{k}"]), ids_cell(m["missing_ids"]),
          ids_cell(m["retrieved_ids"], 400)]
         for m in misses], numeric={3}, row_ids=[f"miss-{i}" for i in range(len(misses))]))
    return out


def _bad_section(bad, anchors, rule: str | None = None) -> list[str]:
    out = [f"<h2 id=\"bad\">Bad cases ({len(bad)})</h2>"]
    if rule:
        out.append(f"<p class=\"muted\">{_e(rule)}</p>")
        if not bad:
            return out + ["<p class=\"muted\">None.</p>"]
        out.append(_table(
            ["question", "date", "cause", "signals", "evidence"],
            [[_query_link(b, anchors, b["query_id"]), _e((b.get("at") or "")[:10]),
              _e(b["attribution"]), _e(", ".join(b.get("signals") or [])),
              "<br>".join(_e(x, 300) for x in b.get("evidence") or [b["reason"]])]
             for b in bad], row_ids=[f"bad-{i}" for i in range(len(bad))]))
        return out
    if not bad:
        return out + ["<p class=\"muted\">None (bad cases need the judge's correctness; see "
                      "the retrieval misses without it).</p>"]
    out.append("<p class=\"muted\">Correctness below 4 (or an unanswerable question "
               "answered). Cause: a gold chunk not retrieved → retrieval; retrieved but "
               "the answer is unfaithful → generation; retrieved and faithful but wrong →"
               " knowledge base.</p>")
    out.append(_table(
        ["question", "type", "correctness", "faithfulness", "cause", "reason"],
        [[_query_link(b, anchors, b["query_id"]), _e(b["type"]), _num(b["correctness"]),
          _num(b["faithfulness"]), _e(b["attribution"]), _e(b["reason"], 300)] for b in bad],
        numeric={2, 3}, row_ids=[f"bad-{i}" for i in range(len(bad))]))
    return out


def line_chart(labels: Sequence[str], values: Sequence[float | None], *, maximum: float,
               width: int = 300, height: int = 110) -> str:
    """One series over periods as an inline SVG line with dots; None leaves a gap. The y axis
    runs from 0 to `maximum` (1 for shares, 5 for 1-5 scores)."""
    left, right, top, bottom = 34, 8, 8, 22
    plot_w, plot_h = width - left - right, height - top - bottom
    n = len(values)

    def x(i: int) -> float:
        return left + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        share = 0.0 if maximum <= 0 else max(0.0, min(1.0, v / maximum))
        return top + plot_h * (1 - share)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'role="img" aria-label="line chart">',
             f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#f7f8fa"/>',
             f'<text x="0" y="{top + 9}">{_e(fmt_axis(maximum))}</text>',
             f'<text x="0" y="{top + plot_h}">0</text>']
    segment: list[str] = []
    for i, v in enumerate([*values, None]):
        if v is not None:
            segment.append(f"{x(i):.1f},{y(v):.1f}")
            parts.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="2.5" fill="{PALETTE[0]}">'
                         f"<title>{_e(labels[i])}: {_e(fmt(v))}</title></circle>")
        elif segment:
            if len(segment) > 1:
                parts.append(f'<polyline points="{" ".join(segment)}" fill="none" '
                             f'stroke="{PALETTE[0]}" stroke-width="1.5"/>')
            segment = []
    if labels:
        parts.append(f'<text x="{left}" y="{height - 6}">{_e(labels[0], 12)}</text>')
        if n > 1:
            parts.append(f'<text x="{left + plot_w}" y="{height - 6}" text-anchor="end">'
                         f"{_e(labels[-1], 12)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def fmt_axis(value: float) -> str:
    return f"{value:g}"


_NICE = (1, 2, 2.5, 5, 10)


def axis_maximum(metric: str, values: Sequence[float]) -> float:
    """The top of a trend chart's y axis: 5 for 1-5 scores; else the smallest round number
    (1, 2, 2.5, 5 times a power of ten) at or above the largest value, so a rate moving
    between 5% and 15% fills the chart instead of lying flat on a 0-1 axis."""
    if metric in SCALE_5:
        return 5.0
    top = max(values, default=0.0)
    if top <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(top))
    return next(n * power for n in _NICE if n * power >= top - 1e-12)


def _trends_section(trends: Mapping[str, Any] | None) -> list[str]:
    if not trends:
        return []
    out = [f"<h2 id=\"trends\">Trends per {_e(trends['period'])}</h2>"]
    rows = trends["rows"]
    if not rows:
        return out + ["<p class=\"muted\">No records in the trend window.</p>"]
    out.append("<p class=\"muted\">Feedback rates over every record; judge means over the "
               "records of the random sample judged with the current judge (lower is better "
               "for hallucination and refusal rates). Hover a dot for its value.</p>")
    labels = [r["period"] for r in rows]
    charts = []
    for metric in trend_columns(trends):  # one chart per figure of the table below
        values = [r.get(metric) for r in rows]
        if all(v is None for v in values):
            continue
        maximum = axis_maximum(metric, [v for v in values if v is not None])
        direction = " (lower is better)" if lower_is_better(metric) else ""
        charts.append(f'<figure style="display:inline-block;margin:0 1rem 1rem 0">'
                      f"<figcaption>{_e(metric + direction)}</figcaption>"
                      f"{line_chart(labels, values, maximum=maximum)}</figure>")
    out += charts
    cols = trend_columns(trends)
    out.append(_table([trends["period"], *cols],
                      [[_e(r["period"]), *(_num(r[c]) for c in cols)] for r in rows],
                      numeric=set(range(1, len(cols) + 1))))
    return out


def _queries_section(report, anchors, misses, bad) -> list[str]:
    per_query = report["per_query"]
    ks = report["options"]["ks"]
    k = max(ks) if ks else None
    cols = [m for m in (f"hit_rate@{k}", f"recall@{k}", f"ndcg@{k}", "mrr", "correctness",
                        "faithfulness", "hallucination_rate", "correct_refusal_rate",
                        "wrong_refusal_rate") if m in report["summary"]]
    miss_at = {m["query_id"]: i for i, m in enumerate(misses)}
    bad_at = {b["query_id"]: i for i, b in enumerate(bad)}
    qids = list(per_query)
    note = ""
    if len(qids) > PER_QUERY_LIMIT:
        listed = set(miss_at) | set(bad_at)
        qids = [q for q in qids if q in listed][:PER_QUERY_LIMIT]
        note = (f"<p class=\"muted\">{len(per_query)} queries: only the {len(qids)} listed "
                "above are shown; the JSON report has every query.</p>")
    rows, ids = [], []
    for q in qids:
        e = per_query[q]
        tags = []
        if q in miss_at:
            tags.append(f'<a class="tag miss" href="#miss-{miss_at[q]}">retrieval miss</a>')
        if q in bad_at:
            tags.append(f'<a class="tag bad" href="#bad-{bad_at[q]}">bad case: '
                        f'{_e(bad[bad_at[q]]["attribution"])}</a>')
        if not e.get("in_run", True):
            tags.append('<span class="tag">not in run</span>')
        rows.append([_e(e.get("question") or q, 200), _e(e["type"]), _e(e["difficulty"]),
                     *(_num(e["metrics"].get(m)) for m in cols), "".join(tags)])
        ids.append(anchors[q])
    return [f"<h2 id=\"queries\">Queries ({len(per_query)})</h2>", note,
            _table(["question", "type", "difficulty", *cols, "flags"], rows,
                   numeric=set(range(3, 3 + len(cols))), row_ids=ids)]


# ---------------------------------------------------------------- comparison

def _change_cell(change: Mapping[str, Any] | None, *, ci: bool = True) -> str:
    if change is None or change.get("delta") is None:
        return "–"
    cls = {"better": "better", "worse": "worse"}.get(change["verdict"], "")
    text = _e(change_text(change, ci=ci and "ci_low" in change))
    return f'<span class="{cls}">{text}</span>' if cls else text


def render_comparison_html(result: Mapping[str, Any]) -> str:
    labels = [r["label"] for r in result["runs"]]
    title = f"golden compare: {labels[0]} vs " + ", ".join(labels[1:])
    out = ["<ul>"]
    for i, r in enumerate(result["runs"]):
        role = ("baseline" if i == 0 else
                f"{result['common_queries'][i]} queries shared with the baseline")
        out.append(f"<li><b>{_e(r['label'])}</b>: {_e(r['run'] or r['report'])} ({role})</li>")
    out.append("</ul>")
    out.append(f"<p class=\"muted\">Δ against {_e(labels[0])}. ↑/↓ is the direction of the "
               "change; <span class=\"better\">better</span> / <span class=\"worse\">worse"
               "</span> follow each metric's direction (lower is better for hallucination and "
               f"wrong-refusal rates, latency and cost). Paired bootstrap "
               f"{result['confidence']:.0%} interval in brackets ({result['resamples']} "
               f"resamples, seed {result['seed']}); * = the interval excludes 0.</p>")
    heads = result["headline_metrics"]
    if heads:
        by_metric = {r["metric"]: r for r in result["metrics"]}
        out.append("<h2>Headline metrics</h2>")
        out.append(grouped_bars(
            [m + (" (of 5)" if m in SCALE_5 else "") for m in heads], labels,
            [by_metric[m]["values"] for m in heads],
            maxima=[_scale(m) for m in heads]))
    header = ["metric", *labels, *(f"Δ {x}" for x in labels[1:])]
    out.append("<h2>Metrics</h2>")
    out.append(_table(header, [
        [_e(r["metric"] + (" (lower is better)" if r["lower_is_better"] else "")),
         *(_num(v) for v in r["values"]), *(_change_cell(c) for c in r["changes"][1:])]
        for r in result["metrics"]], numeric=set(range(1, len(header)))))
    if result["operations"]:
        out.append("<h2>Operations</h2>")
        out.append(_table(header, [
            [_e(r["metric"]), *(_num(v) for v in r["values"]),
             *(_change_cell(c, ci=False) for c in r["changes"][1:])]
            for r in result["operations"]], numeric=set(range(1, len(header)))))
    for field in ("type", "difficulty"):
        groups = result["breakdowns"][field]
        if not groups:
            continue
        out.append(f"<h2>By {_e(field)}</h2>")
        metrics = list(next(iter(groups.values()))["metrics"])
        for m in metrics[:1] + [x for x in metrics if x == "correctness"]:
            out.append(f"<h3>{_e(m)}</h3>")
            out.append(grouped_bars(list(groups), labels,
                                    [g["metrics"][m]["values"] for g in groups.values()],
                                    maxima=[_scale(m)] * len(groups)))
        rows = []
        for g, entry in groups.items():
            for m in metrics:
                cell = entry["metrics"][m]
                deltas = [_change_cell({"delta": d, "verdict": v, "arrow": arrow(d)}, ci=False)
                          for d, v in zip(cell["deltas"][1:], cell["verdicts"][1:])]
                rows.append([_e(f"{g} (n {'/'.join(map(str, entry['n']))})"), _e(m),
                             *(_num(v) for v in cell["values"]), *deltas])
        out.append(_table([field, "metric", *labels, *(f"Δ {x}" for x in labels[1:])], rows,
                          numeric=set(range(2, 2 + 2 * len(labels)))))
    for i, worse in enumerate(result["worse"][1:], 1):
        out.append(f"<h2>Worse in {_e(labels[i])} ({len(worse)} queries)</h2>")
        if not worse:
            out.append("<p class=\"muted\">No query got worse on "
                       f"{_e(', '.join(heads))}.</p>")
            continue
        out.append(_table(["question", "type", "worse on", "better on (same query)"], [
            [_e(query_label(w), 200), _e(w["type"]),
             f'<span class="worse">{_e(deltas_text(w["drops"]))}</span>',
             f'<span class="better">{_e(deltas_text(w["gains"]), 300)}</span>']
            for w in worse[:200]]))
    return _page(title, out)
