"""Retrieval metrics that equal trec_eval's (version 10.0), per query and as means.

What is guaranteed (tested against trec_eval's own test files to 4 decimals):

- `precision@k` = relevant in the top k / k, even when fewer than k were retrieved (`P_k`).
- `recall@k` = relevant in the top k / relevant judged for the query (`recall_k`).
- `hit_rate@k` = 1 when any relevant document is in the top k (`success_k`).
- `ndcg@k` = trec_eval's `ndcg_cut_k`: gain = the judged relevance value (graded), divided by
  log2(rank + 1); the ideal ranking is built from every judged document of the query. The
  relevance level does not change the gains, exactly as in trec_eval. `gain="exp"` uses
  2^rel - 1 instead (not a trec_eval option).
- `map` = trec_eval's `map` and `mrr` = trec_eval's `recip_rank`: both over the whole ranking,
  not cut at k. `mrr@k` is golden's own: 1/rank of the first relevant document when that
  rank is <= k, else 0.
- A document is relevant when its judged value is >= `level` (trec_eval `-l`, default 1);
  documents not judged count as non-relevant.
- Which queries count (`evaluate`): every query in the judgments that the run answered,
  including queries whose judgments are all non-relevant (all metrics 0). Queries the run
  did not answer are left out, unless `complete` (trec_eval `-c`): then they score 0 on
  every metric and count in the means. Queries in the run but not in the judgments are
  ignored.

A query's retrieved documents come either as a list (the list order is the ranking: JSONL
runs) or as a {docno: score} mapping (TREC runs), ranked as trec_eval does: score descending,
ties by docno descending, the rank column ignored. Duplicates are the caller's to reject.

Every metric depends only on the ranks of the judged documents, so that is all that is
computed: no full sort of a scored ranking, no Python loop over unjudged documents.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from operator import itemgetter

RETRIEVAL_FAMILIES = ("hit_rate", "mrr", "recall", "precision", "ndcg")
UNCUT = ("mrr", "map")
DEFAULT_KS = (1, 3, 5, 10)
GAINS = ("linear", "exp")


def metric_names(ks: Sequence[int]) -> list[str]:
    """The per-query retrieval metric keys for these cutoffs, in report order."""
    return [f"{fam}@{k}" for fam in RETRIEVAL_FAMILIES for k in ks] + list(UNCUT)


def _discounts(n: int) -> list[float]:
    # trec_eval 10: the gain at rank r (index i = r - 1) is divided by log2(r + 1).
    return [math.log2(i + 2) for i in range(n)]


_DISC_CACHE: list[float] = _discounts(1024)


def _disc(n: int) -> list[float]:
    global _DISC_CACHE
    if n > len(_DISC_CACHE):
        _DISC_CACHE = _discounts(max(n, 2 * len(_DISC_CACHE)))
    return _DISC_CACHE


@lru_cache(maxsize=64)
def _cutoff_names(ks: tuple[int, ...]) -> tuple[tuple[int, str, str, str, str, str], ...]:
    return tuple((k, f"hit_rate@{k}", f"mrr@{k}", f"recall@{k}", f"precision@{k}", f"ndcg@{k}")
                 for k in sorted(set(ks)))


def judged_ranks(retrieved: Sequence[str] | Mapping[str, float],
                 judged: Mapping[str, int]) -> list[tuple[int, int]]:
    """(0-based rank, grade) of each judged document that was retrieved, best rank first."""
    if isinstance(retrieved, Mapping):
        return _ranks_by_score(retrieved, judged)
    if not isinstance(retrieved, list):
        retrieved = list(retrieved)
    index = retrieved.index
    return sorted([(index(d), judged[d]) for d in judged.keys() & set(retrieved)])


def ranked_ids(retrieved: Sequence[str] | Mapping[str, float], k: int) -> list[str]:
    """The first `k` documents of a ranking, as trec_eval orders a scored one (score
    descending, ties by docno descending)."""
    if isinstance(retrieved, Mapping):
        return [d for d, _ in sorted(retrieved.items(), key=lambda kv: (kv[1], kv[0]),
                                     reverse=True)[:k]]
    return list(retrieved[:k])


def _ranks_by_score(scores: Mapping[str, float], judged: Mapping[str, int]
                    ) -> list[tuple[int, int]]:
    # rank = documents with a higher score + documents with the same score and a greater
    # docno. Sorted scores give the first part by bisection; only on a tie are the docnos
    # sorted by score too (same order as the scores), the tied ones being the slice [lo, hi).
    common = judged.keys() & scores.keys()
    if not common:
        return []
    ordered = sorted(scores.values())
    n = len(ordered)
    by_score = None
    found = []
    for d in common:
        s = scores[d]
        hi = bisect_right(ordered, s)
        lo = bisect_left(ordered, s, 0, hi)
        rank = n - hi
        if hi - lo > 1:
            if by_score is None:
                by_score = sorted(scores, key=scores.__getitem__)
            rank += sum(map(d.__lt__, by_score[lo:hi]))  # tied docnos greater than d
        found.append((rank, judged[d]))
    found.sort()
    return found


def query_metrics(
    retrieved: Sequence[str] | Mapping[str, float], judged: Mapping[str, int],
    ks: Sequence[int] = DEFAULT_KS, *, level: int = 1, gain: str = "linear",
) -> dict[str, float]:
    """All retrieval metrics of one query: `retrieved` a best-first list or {docno: score},
    `judged` docno -> relevance."""
    cutoffs = _cutoff_names(tuple(ks))
    kmax = cutoffs[-1][0]
    found = judged_ranks(retrieved, judged)
    rel_pos = [p for p, r in found if r >= level]
    ascending = sorted(judged.values())
    num_rel = len(ascending) - bisect_left(ascending, level)
    grades = ascending[:-kmax - 1:-1]  # the kmax best grades, best first: the ideal ranking
    first = rel_pos[0] + 1 if rel_pos else 0
    ap = 0.0
    if num_rel:
        for j, p in enumerate(rel_pos, 1):
            ap += j / (p + 1)
        ap /= num_rel

    disc = _disc(kmax)
    if gain == "exp":
        gained = [(p, (2 ** r - 1) / disc[p]) for p, r in found if r > 0 and p < kmax]
        ideal = [(2 ** r - 1) / disc[i] for i, r in enumerate(grades) if r > 0]
    else:
        gained = [(p, r / disc[p]) for p, r in found if r > 0 and p < kmax]
        ideal = [r / disc[i] for i, r in enumerate(grades) if r > 0]

    out: dict[str, float] = {}
    for k, hit_name, mrr_name, recall_name, precision_name, ndcg_name in cutoffs:
        hits = bisect_left(rel_pos, k)
        out[hit_name] = 1.0 if hits else 0.0
        out[mrr_name] = 1.0 / first if first and first <= k else 0.0
        out[recall_name] = hits / num_rel if num_rel else 0.0
        out[precision_name] = hits / k
        dcg = 0.0
        for p, v in gained:
            if p < k:
                dcg += v
        idcg = sum(ideal[:k])
        out[ndcg_name] = dcg / idcg if idcg > 0 else dcg
    out["mrr"] = 1.0 / first if first else 0.0
    out["map"] = ap
    return out


def zero_metrics(ks: Sequence[int]) -> dict[str, float]:
    """What a query the run did not answer scores under `complete`."""
    return {name: 0.0 for name in metric_names(sorted(set(ks)))}


def evaluate(
    judgments: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Sequence[str] | Mapping[str, float]],
    ks: Sequence[int] = DEFAULT_KS, *, level: int = 1, gain: str = "linear",
    complete: bool = False,
) -> dict[str, dict[str, float]]:
    """Per-query metrics for every judged query the run answered (all judged ones when
    `complete`), keyed by query id in the judgments' order."""
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}")
    out: dict[str, dict[str, float]] = {}
    for qid, judged in judgments.items():
        ranking = rankings.get(qid)
        if ranking is None:
            if complete:
                out[qid] = zero_metrics(ks)
            continue
        out[qid] = query_metrics(ranking, judged, ks, level=level, gain=gain)
    return out


_NUMBER_TYPES = {float, int}


def mean_metrics(per_query: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Mean of each metric over the queries that have it (keys in first-seen order); values
    that are not numbers (None, booleans, text) are skipped.

    Queries are grouped by their set of metric names (retrieval-only, retrieval + judge, ...:
    a handful of shapes), and each name is summed down its group by `sum(map(itemgetter))`
    rather than a Python loop over every (query, metric) pair."""
    shapes: dict[tuple[str, ...], list[Mapping[str, float]]] = {}
    for metrics in per_query:
        key = tuple(metrics)
        rows = shapes.get(key)
        if rows is None:
            shapes[key] = [metrics]
        else:
            rows.append(metrics)
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for names, rows in shapes.items():
        for name in names:
            values = list(map(itemgetter(name), rows))
            if not set(map(type, values)) <= _NUMBER_TYPES:
                values = [v for v in values if isinstance(v, (int, float))
                          and not isinstance(v, bool)]
                if not values:
                    continue
            sums[name] = sums.get(name, 0.0) + sum(values)
            counts[name] = counts.get(name, 0) + len(values)
    order = {name: None for names in shapes for name in names}
    return {name: sums[name] / counts[name] for name in order if name in sums}
