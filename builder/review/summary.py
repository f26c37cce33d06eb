"""Everything known about the review team's work, as one JSON-ready dict: what
`golden review-stats` prints and the review screen's statistics dialog shows. The reads are in
`builder.store.review_stats` and `review_overlap`, the figures in `agreement`.
"""

from __future__ import annotations


def review_summary(store) -> dict:
    """Everything `golden review-stats` reports, as one JSON-ready dict: agreement, reject
    reasons, adjudication, overlap and per-annotator decisions and throughput."""
    from builder.review.agreement import agreement, throughput
    from builder.store.review_overlap import get_overlap
    from builder.store.review_stats import (adjudication_counts, decision_times,
                                            shared_votes, vote_counts)

    counts = vote_counts(store)
    times = decision_times(store)
    overlap = get_overlap(store.conn)
    return {
        "overlap": {"k": overlap.k, "share": overlap.share},
        "agreement": agreement(shared_votes(store)),
        "adjudication": adjudication_counts(store),
        "annotators": {name: {**counts.get(name, {"accept": 0, "reject": 0, "skip": 0,
                                                 "final": 0}),
                              **throughput(times.get(name, []))}
                       for name in sorted(set(counts) | set(times))},
    }
