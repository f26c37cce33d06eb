"""Trends of production quality per day or ISO week: what every record says (volume, thumbs,
hand-offs, re-asks, latency) and what the judge says of the random sample (faithfulness,
hallucination rate, relevancy, context relevance, refusal rate).

Judge figures come from stored evaluations (`log_evaluations`) under ONE judge configuration
(the current one), over the records in the deterministic sample (`sample_key < rate`) only:
feedback-flagged records are judged too but are not a random sample, so they would bias the
means. A period's mean is the sum over its days divided by the count, so weeks are exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta, timezone
from typing import Any

from builder.store import Store
from builder.store.logs import last_record_at, trend_counts, trend_judged

TREND_METRICS = ("faithfulness", "hallucination_rate", "answer_relevancy", "context_relevance",
                 "wrong_refusal_rate")
RATES = ("thumbs_down_rate", "thumbs_up_rate", "handoff_rate", "reasked_rate")
PERIODS = ("day", "week")


def period_start(day: date, period: str) -> date:
    return day - timedelta(days=day.weekday()) if period == "week" else day


def period_label(start: date, period: str) -> str:
    if period == "week":
        year, week, _ = start.isocalendar()
        return f"{year}-W{week:02d}"
    return start.isoformat()


def trend_window(store: Store, period: str, periods: int, until: str | None
                 ) -> tuple[str, str] | None:
    """[start, end) of the last `periods` periods ending at `until` (exclusive), or after the
    newest record when `until` is None; None when there is no record at all."""
    if until is not None:
        end = datetime.fromisoformat(until)
        last_day = (end - timedelta(microseconds=1)).date()
    else:
        newest = last_record_at(store)
        if newest is None:
            return None
        last_day = datetime.fromisoformat(newest).date()
    first = period_start(last_day, period) - timedelta(days=(7 if period == "week" else 1)
                                                       * (periods - 1))
    end_day = last_day + timedelta(days=1)
    start = datetime.combine(first, datetime.min.time(), tzinfo=timezone.utc)
    stop = datetime.combine(end_day, datetime.min.time(), tzinfo=timezone.utc)
    return (start.isoformat(timespec="microseconds"),
            until if until is not None else stop.isoformat(timespec="microseconds"))


def build_trends(store: Store, *, judge_key: str, rate: float, period: str, periods: int,
                 until: str | None, metrics: Sequence[str] = TREND_METRICS) -> dict[str, Any]:
    """{"period", "window", "metrics", "rows": one per period with records, rates, judged and
    each metric's mean (None when nothing was judged)}, oldest first."""
    window = trend_window(store, period, periods, until)
    out: dict[str, Any] = {"period": period, "window": window, "metrics": list(metrics),
                           "rates": list(RATES), "rows": []}
    if window is None:
        return out
    start, end = window
    groups: dict[date, dict[str, Any]] = {}

    def group(day_text: str) -> dict[str, Any]:
        first = period_start(date.fromisoformat(day_text), period)
        return groups.setdefault(first, {"records": 0, "thumbs_up": 0, "thumbs_down": 0,
                                         "handed_off": 0, "reasked": 0, "latency_sum": 0.0,
                                         "latency_n": 0, "judged": 0,
                                         **{f"{m}_sum": 0.0 for m in metrics},
                                         **{f"{m}_n": 0 for m in metrics}})

    for row in trend_counts(store, start, end):
        g = group(row["day"])
        for name in ("records", "thumbs_up", "thumbs_down", "handed_off", "reasked",
                     "latency_sum", "latency_n"):
            g[name] += row[name] or 0
    for row in trend_judged(store, judge_key, rate, metrics, start, end):
        g = group(row["day"])
        g["judged"] += row["judged"]
        for m in metrics:
            g[f"{m}_sum"] += row[f"{m}_sum"] or 0.0
            g[f"{m}_n"] += row[f"{m}_n"] or 0
    for first in sorted(groups):
        g = groups[first]
        n = g["records"]
        row = {"period": period_label(first, period), "start": first.isoformat(),
               "records": n,
               "thumbs_down_rate": g["thumbs_down"] / n if n else None,
               "thumbs_up_rate": g["thumbs_up"] / n if n else None,
               "handoff_rate": g["handed_off"] / n if n else None,
               "reasked_rate": g["reasked"] / n if n else None,
               "latency_mean_ms": g["latency_sum"] / g["latency_n"] if g["latency_n"] else None,
               "judged": g["judged"]}
        for m in metrics:
            row[m] = g[f"{m}_sum"] / g[f"{m}_n"] if g[f"{m}_n"] else None
        out["rows"].append(row)
    return out
