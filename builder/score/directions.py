"""Which way is better for every figure a report can hold: the one place the gate, `compare`'s
arrows and the renderers ask.

Higher is better for every retrieval metric and for faithfulness, relevancy, correctness,
context relevance and correct refusals. Lower is better for the rates of failure
(`hallucination_rate`, `wrong_refusal_rate`) and for every operations figure (latency
percentiles, cost and tokens per query). Counts (`latency_n`, `cost_n`, ...) have no
direction: they are context, never gated or marked better/worse.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from builder.score.retrieval import metric_names

# Every metric the LLM judge can put in a report (`judge` computes them).
JUDGE_METRICS = (
    "faithfulness", "faithfulness_supported", "hallucination_rate", "answer_relevancy",
    "correctness", "context_relevance", "wrong_refusal_rate", "correct_refusal_rate",
)
LOWER_IS_BETTER_JUDGE = ("hallucination_rate", "wrong_refusal_rate")
OPERATIONS = ("latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "mean_cost", "total_cost",
              "mean_prompt_tokens", "total_prompt_tokens", "mean_completion_tokens",
              "total_completion_tokens")
LOWER_IS_BETTER = frozenset(LOWER_IS_BETTER_JUDGE + OPERATIONS)
SCALE_5 = frozenset(("faithfulness", "answer_relevancy", "correctness"))  # judge scores 1-5


def value_range(metric: str) -> tuple[float, float]:
    """The values a figure can take: 1-5 judge scores, 0-1 shares and rates, operations >= 0
    (the gate refuses a threshold outside it: it would never pass, or never fail)."""
    if metric in SCALE_5:
        return 1.0, 5.0
    if metric in JUDGE_METRICS or "@" in metric or metric in ("mrr", "map"):
        return 0.0, 1.0
    return 0.0, math.inf


def lower_is_better(metric: str) -> bool:
    return metric in LOWER_IS_BETTER


def known_metrics(ks: Sequence[int], *, judge: bool = True) -> list[str]:
    """Every figure that has a direction for these cutoffs, in display order."""
    return (metric_names(sorted(set(ks))) + (list(JUDGE_METRICS) if judge else [])
            + list(OPERATIONS))


def verdict(metric: str, delta: float | None, *, tolerance: float = 1e-12) -> str:
    """'better', 'worse' or 'same' for a change of `delta` in `metric` (its direction)."""
    if delta is None or abs(delta) <= tolerance:
        return "same"
    improved = delta < 0 if lower_is_better(metric) else delta > 0
    return "better" if improved else "worse"


def arrow(delta: float | None, *, tolerance: float = 1e-12) -> str:
    """The change's direction as an arrow (up = the value grew), whatever is better."""
    if delta is None or abs(delta) <= tolerance:
        return "="
    return "↑" if delta > 0 else "↓"
