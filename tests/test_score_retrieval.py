"""Retrieval metric conventions beyond the trec_eval conformance files."""

from __future__ import annotations

import math

import pytest

from builder.score.retrieval import evaluate, mean_metrics, query_metrics


def test_hand_computed_figures():
    m = query_metrics(["x", "a", "y", "b"], {"a": 1, "b": 1, "c": 1, "x": 0}, (1, 2, 4, 10))
    assert m["hit_rate@1"] == 0 and m["hit_rate@2"] == 1
    assert m["mrr@1"] == 0 and m["mrr@2"] == 0.5 and m["mrr"] == 0.5
    assert m["precision@4"] == 0.5 and m["precision@10"] == 0.2  # always divided by k
    assert m["recall@4"] == pytest.approx(2 / 3)
    assert m["map"] == pytest.approx((1 / 2 + 2 / 4) / 3)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert m["ndcg@10"] == pytest.approx(dcg / idcg)


def test_graded_gains_linear_and_exponential():
    judged = {"a": 3, "b": 1}
    lin = query_metrics(["b", "a"], judged, (2,))
    exp = query_metrics(["b", "a"], judged, (2,), gain="exp")
    assert lin["ndcg@2"] == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))
    assert exp["ndcg@2"] == pytest.approx((1 + 7 / math.log2(3)) / (7 + 1 / math.log2(3)))


def test_relevance_level_changes_relevance_not_gains():
    judged = {"a": 1, "b": 2}
    m = query_metrics(["a", "b"], judged, (1, 2), level=2)
    assert m["precision@1"] == 0 and m["mrr"] == 0.5 and m["recall@2"] == 1
    assert m["ndcg@2"] == query_metrics(["a", "b"], judged, (1, 2))["ndcg@2"]


def test_query_with_only_nonrelevant_judgments_scores_zero_and_counts():
    per_query = evaluate({"1": {"a": 0}, "2": {"b": 1}}, {"1": ["a"], "2": ["b"]}, (1,))
    assert per_query["1"]["ndcg@1"] == 0 and per_query["1"]["map"] == 0
    assert mean_metrics(per_query.values())["precision@1"] == 0.5


def test_missing_queries_dropped_unless_complete_and_unjudged_run_queries_ignored():
    judgments = {"1": {"a": 1}, "2": {"b": 1}}
    rankings = {"1": ["a"], "9": ["z"]}
    assert list(evaluate(judgments, rankings, (1,))) == ["1"]
    complete = evaluate(judgments, rankings, (1,), complete=True)
    assert complete["2"]["hit_rate@1"] == 0 and set(complete) == {"1", "2"}


def test_empty_ranking_scores_zero():
    m = query_metrics([], {"a": 1}, (5,))
    assert {"hit_rate@5", "mrr@5", "recall@5", "precision@5", "ndcg@5", "map", "mrr"} <= set(m)
    assert all(v == 0 for v in m.values())


def test_scored_rankings_match_an_explicit_trec_eval_sort():
    """{docno: score} is ranked as trec_eval does: score descending, ties by docno descending."""
    import random

    rng = random.Random(5)
    for _ in range(200):
        docs = [f"d{rng.randrange(60)}" for _ in range(40)]
        scores = {d: rng.choice((0.1, 0.2, 0.3, 0.5)) for d in docs}  # many ties
        judged = {f"d{rng.randrange(60)}": rng.choice((0, 1, 2, 3)) for _ in range(15)}
        ranking = sorted(scores, key=lambda d: (scores[d], d), reverse=True)
        assert query_metrics(scores, judged, (1, 5, 10, 50)) == \
            query_metrics(ranking, judged, (1, 5, 10, 50))
