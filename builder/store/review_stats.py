"""Reads behind `golden review-stats` and the review screen's agreement line: the annotators'
votes on candidates two or more of them decided, and the times of each annotator's decisions.

Read-only. Candidates with 2+ accept/reject votes are found through the partial index of m006
(`candidates_votes`), so the agreement figures cost what the overlap items cost, not a scan of
every vote.
"""

from __future__ import annotations

from builder.store.db import Store


def shared_votes(store: Store) -> list[tuple[str, str, str, str | None]]:
    """(candidate_id, annotator, decision, reason) of every annotator's (not final) vote on
    the candidates that 2+ annotators accepted or rejected, ordered by candidate."""
    return store.conn.execute(
        "SELECT v.candidate_id, v.annotator, v.decision, v.reason FROM candidates c"
        " JOIN review_votes v ON v.candidate_id = c.id"
        " WHERE c.votes > 1 AND v.final = 0 AND v.decision IN ('accept', 'reject')"
        " ORDER BY v.candidate_id, v.annotator").fetchall()


def vote_counts(store: Store) -> dict[str, dict[str, int]]:
    """annotator -> {accept, reject, skip, final}: their current decisions."""
    out: dict[str, dict[str, int]] = {}
    for annotator, final, decision, n in store.conn.execute(
            "SELECT annotator, final, decision, count(*) FROM review_votes"
            " GROUP BY annotator, final, decision"):
        row = out.setdefault(annotator, {"accept": 0, "reject": 0, "skip": 0, "final": 0})
        row["final" if final else decision] += n
    return out


def decision_times(store: Store, annotator: str | None = None) -> dict[str, list[str]]:
    """annotator -> the times (ISO text, ascending) of their accept/reject/skip log rows,
    undone ones included (the work was done)."""
    sql = ("SELECT annotator, at FROM review_log WHERE action IN ('accept', 'reject', 'skip')")
    params: list = []
    if annotator is not None:
        sql += " AND annotator = ?"
        params.append(annotator)
    out: dict[str, list[str]] = {}
    for who, at in store.conn.execute(sql + " ORDER BY annotator, at", params):
        out.setdefault(who, []).append(at)
    return out


def adjudication_counts(store: Store) -> dict[str, int]:
    """{open: candidates waiting for an adjudicator, settled: candidates a final decision
    settled}."""
    open_ = store.conn.execute("SELECT count(*) FROM candidates WHERE status = 'pending'"
                               " AND votes > 0 AND conflict = 1").fetchone()[0]
    settled = store.conn.execute("SELECT count(DISTINCT candidate_id) FROM review_votes"
                                 " WHERE final = 1").fetchone()[0]
    return {"open": open_, "settled": settled}
