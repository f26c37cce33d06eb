"""Inter-annotator agreement and throughput, from the annotators' votes.

- Per pair of annotators: the candidates both accepted or rejected, observed agreement and
  Cohen's kappa (nominal: accept vs reject).
- Overall: Krippendorff's alpha (nominal), which takes any number of annotators and items
  that only some of them decided; with two annotators and no missing votes it is close to
  Cohen's kappa (it corrects for chance from the pooled rather than each rater's own shares).
- Reject reasons: over the candidates two annotators both rejected, agreement on the reason
  and Cohen's kappa over the reasons, per pair and pooled.
- Throughput per annotator: decisions, active time (gaps between consecutive decisions of at
  most IDLE_SECONDS; a longer gap is a break, not work), decisions per active hour, median
  seconds per decision (a rate only after a minute of work).

Every coefficient is None (not NaN) when it is undefined: no pairable items, or no variation
at all (every vote the same), where chance agreement is 1 and kappa/alpha divide by zero.
Pure functions over plain data: the reads are in builder/store/review_stats.py.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from datetime import datetime
from itertools import combinations
from typing import Any

IDLE_SECONDS = 300.0
MIN_ACTIVE_SECONDS = 60.0
"""Below a minute of work a rate per hour says nothing (two decisions a second apart would
read as 7,200/h): `per_hour` is None until then."""


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]],
                weight: Callable[[Hashable, Hashable], float] | None = None,
                categories: Sequence[Hashable] | None = None) -> float | None:
    """Cohen's kappa of two raters' labels, `pairs` = [(rater A's, rater B's), ...].

    `weight(a, b)` is the disagreement weight (default nominal: 0 when equal, else 1; a
    quadratic weight gives the weighted kappa over an ordinal scale). `categories` defaults to
    the labels seen. kappa = 1 - sum(w * observed) / sum(w * expected), expected from each
    rater's own label shares. None when undefined."""
    n = len(pairs)
    if n == 0:
        return None
    weight = weight or (lambda a, b: 0.0 if a == b else 1.0)
    cats = list(categories) if categories is not None else sorted(
        {x for pair in pairs for x in pair}, key=repr)
    observed = Counter(pairs)
    share_a = Counter(a for a, _ in pairs)
    share_b = Counter(b for _, b in pairs)
    num = sum(weight(a, b) * observed[(a, b)] for a in cats for b in cats)
    den = sum(weight(a, b) * share_a[a] * share_b[b] / n for a in cats for b in cats)
    if den == 0:
        return None
    return 1 - num / den


def krippendorff_alpha(units: Iterable[Sequence[Hashable]]) -> float | None:
    """Krippendorff's alpha for nominal data. Each unit is the list of values the raters gave
    one item (any number of raters; items with fewer than two values are not pairable and are
    left out). alpha = 1 - (n - 1) * sum(o_ck, c != k) / sum(n_c * n_k, c != k), with o the
    coincidence matrix and n the number of pairable values. None when undefined."""
    coincidences: Counter = Counter()
    for unit in units:
        m = len(unit)
        if m < 2:
            continue
        for i, j in ((i, j) for i in range(m) for j in range(m) if i != j):
            coincidences[(unit[i], unit[j])] += 1 / (m - 1)
    totals: Counter = Counter()
    for (c, _k), v in coincidences.items():
        totals[c] += v
    n = sum(totals.values())
    disagree = sum(v for (c, k), v in coincidences.items() if c != k)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    if n <= 1 or expected == 0:
        return None
    return 1 - (n - 1) * disagree / expected


def _pairwise(by_item: dict[str, dict[str, Any]]) -> dict[tuple[str, str], list[tuple]]:
    pairs: dict[tuple[str, str], list[tuple]] = defaultdict(list)
    for labels in by_item.values():
        for a, b in combinations(sorted(labels), 2):
            pairs[(a, b)].append((labels[a], labels[b]))
    return pairs


def _summary(pairs: list[tuple]) -> dict[str, Any]:
    n = len(pairs)
    agree = sum(a == b for a, b in pairs)
    return {"n": n, "agree": agree, "observed": agree / n if n else None,
            "kappa": cohen_kappa(pairs)}


def agreement(votes: Iterable[tuple[str, str, str, str | None]]) -> dict[str, Any]:
    """Agreement from (candidate_id, annotator, decision, reason) votes (accept/reject only).

    Returns {"items": candidates with 2+ decisions, "annotators": [...],
    "overall": {"alpha", "items", "values"}, "pairs": [{"a", "b", "n", "agree", "observed",
    "kappa"}], "reasons": {"n", "agree", "observed", "kappa", "pairs": [...]}}."""
    decisions: dict[str, dict[str, str]] = defaultdict(dict)
    reasons: dict[str, dict[str, str]] = defaultdict(dict)
    for cid, annotator, decision, reason in votes:
        decisions[cid][annotator] = decision
        if decision == "reject" and reason:
            reasons[cid][annotator] = reason
    shared = {cid: labels for cid, labels in decisions.items() if len(labels) > 1}
    annotators = sorted({a for labels in shared.values() for a in labels})
    pairs = [{"a": a, "b": b, **_summary(p)} for (a, b), p in sorted(_pairwise(shared).items())]
    reason_pairs = _pairwise({cid: r for cid, r in reasons.items() if len(r) > 1})
    pooled = [p for ps in reason_pairs.values() for p in ps]
    return {
        "items": len(shared),
        "annotators": annotators,
        "overall": {"alpha": krippendorff_alpha(list(labels.values())
                                                for labels in shared.values()),
                    "items": len(shared),
                    "values": sum(len(labels) for labels in shared.values())},
        "pairs": pairs,
        "reasons": {**_summary(pooled),
                    "pairs": [{"a": a, "b": b, **_summary(p)}
                              for (a, b), p in sorted(reason_pairs.items())]},
    }


def throughput(times: Sequence[str]) -> dict[str, Any]:
    """Throughput from one annotator's decision times (ISO text, ascending): decisions,
    active_seconds, per_hour (None under MIN_ACTIVE_SECONDS of active time), median_seconds
    (None with no gap to measure)."""
    stamps = [datetime.fromisoformat(t).timestamp() for t in times]
    gaps = [b - a for a, b in zip(stamps, stamps[1:]) if 0 <= b - a <= IDLE_SECONDS]
    active = sum(gaps)
    return {"decisions": len(stamps), "active_seconds": active,
            "per_hour": len(gaps) / active * 3600 if active >= MIN_ACTIVE_SECONDS else None,
            "median_seconds": statistics.median(gaps) if gaps else None}
