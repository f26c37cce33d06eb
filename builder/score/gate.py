"""`--fail-under METRIC=VALUE`: a CI gate on the report's summary.

A threshold fails when the summary value is below it (for every metric, including the
lower-is-better rates: gate those with a separate check). Unknown metric names and
non-numeric values are usage errors (exit 2), checked before any scoring starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from builder.errors import InputError, JobError
from builder.score.judge import JUDGE_METRICS
from builder.score.retrieval import metric_names


def parse_thresholds(specs: Sequence[str], ks: Sequence[int], *,
                     judge: bool) -> dict[str, float]:
    """`["ndcg@10=0.5", ...]` -> {"ndcg@10": 0.5}; InputError naming any unknown metric."""
    known = metric_names(sorted(set(ks))) + list(JUDGE_METRICS)
    out: dict[str, float] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        name = name.strip()
        if not sep:
            raise InputError(f"--fail-under expects METRIC=VALUE, got {spec!r}")
        if name not in known:
            raise InputError(f"--fail-under: unknown metric {name!r} (known for --k "
                             f"{','.join(map(str, ks))}: {', '.join(known)})")
        if name in JUDGE_METRICS and not judge:
            raise InputError(f"--fail-under: {name} needs the judge (drop --no-judge)")
        try:
            out[name] = float(value)
        except ValueError:
            raise InputError(f"--fail-under: {value!r} is not a number (in {spec!r})") from None
    return out


def check_thresholds(summary: Mapping[str, float], thresholds: Mapping[str, float]) -> None:
    """Raise JobError (exit 1) naming every metric below its threshold, or not computed."""
    failures = []
    for name, minimum in thresholds.items():
        value = summary.get(name)
        if value is None:
            failures.append(f"{name} not computed (threshold {minimum:g})")
        elif value < minimum:
            failures.append(f"{name} {value:.4f} < {minimum:g}")
    if failures:
        raise JobError("below threshold: " + "; ".join(failures))
