"""Read-only counts for `golden stats` past ingest: candidates, LLM calls.

They read across the generation, review and LLM tables, so they live here rather than in any
one of those modules.
"""

from __future__ import annotations

from builder.store.db import Store


def pipeline_counts(store: Store, *, top_errors: int = 5) -> dict:
    """Counts past ingest, read-only: verified items by type; candidates by verdict and by
    review status;
    llm_calls by status and the most frequent error messages (first 120 characters); requests
    staged for batch engines by status."""

    def grouped(sql: str) -> dict[str, int]:
        return {str(k): n for k, n in store.conn.execute(sql).fetchall()}

    return {
        "verified_by_type": grouped(
            "SELECT type, COUNT(*) FROM candidates WHERE verdict = 'passed' "
            "AND duplicate_of IS NULL GROUP BY type ORDER BY type"),
        "candidates_by_verdict": grouped(
            "SELECT verdict, COUNT(*) FROM candidates GROUP BY verdict ORDER BY verdict"),
        "candidates_by_status": grouped(
            "SELECT status, COUNT(*) FROM candidates GROUP BY status ORDER BY status"),
        "llm_calls_by_status": grouped(
            "SELECT status, COUNT(*) FROM llm_calls GROUP BY status ORDER BY status"),
        "batch_requests_by_status": grouped(
            "SELECT status, COUNT(*) FROM batch_requests GROUP BY status ORDER BY status"),
        "llm_top_errors": store.query(
            """
            SELECT COALESCE(substr(error, 1, 120), '(' || status || ', no message)') AS reason,
                   COUNT(*) AS n
            FROM llm_calls WHERE status != 'ok'
            GROUP BY reason ORDER BY n DESC, reason LIMIT ?
            """, (top_errors,)),
    }
