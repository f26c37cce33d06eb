"""A verified item marked as the duplicate of one that later failed is released: it counts
towards n and is the one kept, whatever order the run judged the two in."""

from __future__ import annotations

from builder.generate import dedup
from builder.generate.candidate import kept_passed, stale_duplicates


def row(cid: str, verdict: str, duplicate_of: str | None = None) -> dict:
    return {"id": cid, "type": "single_hop", "question": "How long is the return window?",
            "answer": "30 days", "verdict": verdict, "duplicate_of": duplicate_of,
            "verification": [], "status": "pending"}


def test_a_passed_duplicate_of_a_failed_keeper_is_stale_and_kept():
    pool = [row("a", "failed"), row("b", "passed", duplicate_of="a")]
    assert stale_duplicates(pool) == ["b"]
    assert [c["id"] for c in kept_passed(pool)] == ["b"]
    # once released, the dedup pass keeps the passed one and marks the failed one
    released = [row("a", "failed"), row("b", "passed")]
    assert dedup.find_duplicates(released) == [("a", "b")]


def test_a_duplicate_of_a_passed_keeper_stays_a_duplicate():
    pool = [row("a", "passed"), row("b", "passed", duplicate_of="a"),
            row("c", "failed", duplicate_of="a")]
    assert stale_duplicates(pool) == []
    assert [c["id"] for c in kept_passed(pool)] == ["a"]
