"""How one value of a score report reads in every rendering (Markdown, HTML, the terminal;
`report`, `html` and `compare` all use these): numbers, query labels, titles, the columns of
breakdown and trend tables, Markdown cells and tables.

Untrusted strings stay data: a Markdown cell shows its text with control characters made
visible (`builder.text.terminal`), HTML special characters escaped and Markdown markup
backslash-escaped, on one line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builder.score.directions import JUDGE_METRICS
from builder.text.terminal import visible


def one_cell(value: Any, limit: int | None = None) -> str:
    """Untrusted text as one table cell or title: shown by `builder.text.terminal.visible` on
    one line, cut to `limit` characters."""
    return visible(value, multiline=False, limit=limit)


def fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def trust_text(report: Mapping[str, Any], metric: str) -> str:
    """Beside a judged figure: the judge's measured agreement with human labels, or "not
    calibrated" (`trust`); empty for figures no judge made."""
    from builder.score.trust import describe

    if metric not in JUDGE_METRICS:
        return ""
    entry = ((report.get("judge") or {}).get("calibration") or {}).get(metric)
    return describe({**entry, "metric": metric} if entry else None)


def md_cell(text: Any, limit: int | None = 200) -> str:
    """One Markdown table cell: no markup, no HTML, no line breaks."""
    s = one_cell(text, limit)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]|#!~])", r"\\\1", s)


def md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines + [""]


def breakdown_columns(report: Mapping[str, Any]) -> list[str]:
    """Metrics shown in per-type/difficulty tables: the largest-k retrieval figures + judge."""
    ks = report["options"]["ks"]
    k = max(ks) if ks else None
    wanted = [f"hit_rate@{k}", f"recall@{k}", f"ndcg@{k}", "mrr", "map", "correctness",
              "faithfulness", "hallucination_rate", "context_relevance", "wrong_refusal_rate",
              "correct_refusal_rate"]
    present = set(report["summary"])
    return [m for m in wanted if m in present]


def report_title(report: Mapping[str, Any]) -> str:
    """The report's own title (`golden logs: ...`), else `golden score: <run file>`."""
    return report.get("title") or f"golden score: {Path(report['run'] or 'run').name or 'run'}"


def trend_columns(trends: Mapping[str, Any]) -> list[str]:
    """The columns of a trend table, in order: volume, feedback rates, latency, judge means."""
    return ["records", *trends["rates"], "latency_mean_ms", "judged", *trends["metrics"]]


def query_label(entry: Mapping[str, Any]) -> str:
    """How a message names a query: its text when known (a seed-format id is only a hash),
    else its id."""
    return entry.get("question") or entry.get("query_id") or ""
