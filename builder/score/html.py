"""A self-contained HTML report: inline CSS, inline SVG bar charts, no scripts, no external
resources. Every string that came from a file or the judge goes through `html.escape`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from builder.score.report import LOWER_IS_BETTER, breakdown_columns, fmt, visible

SCALE_5 = {"faithfulness", "answer_relevancy", "correctness"}

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:72rem;
color:#1d2125;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.9rem}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f4f5f7}.warn{background:#fff4e5;border-left:4px solid #f0a030;padding:.5rem}
.muted{color:#667}svg text{font-size:11px;fill:#1d2125}
"""


def _e(value: Any, limit: int | None = None) -> str:
    return escape(visible(value, limit), quote=True)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]],
           numeric: set[int] | None = None) -> str:
    numeric = numeric or set()
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            cls = ' class="num"' if i in numeric else ""
            cells.append(f"<td{cls}>{cell}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def bar_chart(bars: Sequence[tuple[str, float, float]], *, width: int = 560) -> str:
    """Horizontal bars: (label, value, maximum). Values are drawn as value / maximum."""
    row_h, label_w, value_w = 22, 190, 70
    plot_w = width - label_w - value_w
    height = row_h * len(bars) + 8
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'role="img">']
    for i, (label, value, maximum) in enumerate(bars):
        y = 4 + i * row_h
        share = 0.0 if maximum <= 0 else max(0.0, min(1.0, value / maximum))
        parts.append(f'<text x="0" y="{y + 14}">{_e(label, 30)}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{plot_w}" height="14" '
                     f'fill="#eef0f3"/>')
        parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{share * plot_w:.1f}" '
                     f'height="14" fill="#3b7dd8"/>')
        parts.append(f'<text x="{label_w + plot_w + 6}" y="{y + 14}">{_e(fmt(value))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _chart_bars(metrics: Mapping[str, float], names: Sequence[str]) -> list:
    return [(n, metrics[n], 5.0 if n in SCALE_5 else 1.0) for n in names if n in metrics]


def render_html(report: Mapping[str, Any]) -> str:
    summary = report["summary"]
    c = report["counts"]
    title = f"golden score: {Path(report['run'] or 'run').name}"
    out = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p class=\"muted\">golden file {_e(report['golden'])} · run file {_e(report['run'])}"
        f" · {c['golden_items']} items ({c['answerable']} answerable, {c['unanswerable']} "
        f"unanswerable) · {c['in_run']} in the run · {c['missing_from_run']} missing · "
        f"{c['judged']} judged</p>",
    ]
    out += [f'<p class="warn">{_e(w)}</p>' for w in report["warnings"]]

    out.append("<h2>Summary</h2>")
    cols = breakdown_columns(report)
    out.append(bar_chart(_chart_bars(summary, cols)))
    out.append(_table(["metric", "value"],
                      [[_e(k + (" (lower is better)" if k in LOWER_IS_BETTER else "")),
                        _e(fmt(v))] for k, v in summary.items()], numeric={1}))

    if report["operations"]:
        out.append("<h2>Operations</h2>")
        out.append(_table(["figure", "value"],
                          [[_e(k), _e(fmt(v))] for k, v in report["operations"].items()],
                          numeric={1}))

    for field in ("type", "difficulty"):
        groups = report["breakdowns"].get(field) or {}
        if not groups:
            continue
        out.append(f"<h2>By {_e(field)}</h2>")
        for metric in [m for m in cols if m.startswith("ndcg") or m == "correctness"]:
            bars = [(name, g[metric], 5.0 if metric in SCALE_5 else 1.0)
                    for name, g in groups.items() if metric in g]
            if bars:
                out.append(f"<p class=\"muted\">{_e(metric)}</p>{bar_chart(bars)}")
        out.append(_table([field, "n", *cols],
                          [[_e(name), str(g["n"]), *(_e(fmt(g.get(m))) for m in cols)]
                           for name, g in groups.items()],
                          numeric=set(range(1, len(cols) + 2))))

    if report["bad_cases"]:
        out.append(f"<h2>Bad cases ({len(report['bad_cases'])})</h2>")
        out.append("<p class=\"muted\">Correctness below 4 (or an unanswerable question "
                   "answered). Cause: a gold chunk not retrieved → retrieval; retrieved but "
                   "the answer is unfaithful → generation; retrieved and faithful but wrong →"
                   " knowledge base.</p>")
        out.append(_table(
            ["query", "type", "correctness", "faithfulness", "cause", "question", "reason"],
            [[_e(b["query_id"]), _e(b["type"]), _e(fmt(b["correctness"])),
              _e(fmt(b["faithfulness"])), _e(b["attribution"]), _e(b["question"], 300),
              _e(b["reason"], 300)] for b in report["bad_cases"]],
        ))
    unscored = report["judge"]["unscored"]
    if unscored:
        out.append(f"<h2>Not scored by the judge ({len(unscored)})</h2>")
        out.append(_table(["query", "metric", "reason"],
                          [[_e(u["query_id"]), _e(u["metric"]), _e(u["reason"], 300)]
                           for u in unscored]))
    if report["missing_query_ids"]:
        out.append(f"<h2>Not in the run ({len(report['missing_query_ids'])})</h2>")
        out.append("<p>" + ", ".join(_e(q) for q in report["missing_query_ids"]) + "</p>")
    if report["judge"]["model"]:
        out.append(f"<p class=\"muted\">judge model {_e(report['judge']['model'])}</p>")
    out.append("</body></html>\n")
    return "\n".join(out)
