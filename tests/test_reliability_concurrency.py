"""Concurrent writers (issue 8, item 3): the generator writes candidates while two review UIs
accept, edit, tag and undo on the same database for ~10 s (60 s in tests/stress/). No
"database is locked", no decision lost: every write a UI saw succeed is in the review_log
with its annotator and action, and every candidate's review state is the `after` of its last
log row. See tests/concurrency_harness.py and tests/review_driver.py.
"""

from __future__ import annotations

from tests.concurrency_harness import format_figures, run_concurrent

SECONDS = 10


def test_generator_and_two_reviewers_at_once_lose_nothing(tmp_path):
    fig = run_concurrent(tmp_path, SECONDS)
    print(format_figures(fig))
    assert fig["driver_errors"] == [] and fig["driver_exits"] == [0, 0]
    assert fig["generator_exit"] == 0
    assert fig["writer_errors"] == []
    assert fig["locked"] == 0 and fig["locked_in_stderr"] == 0
    assert fig["problems"] == []
    assert fig["write_errors"] == 0
    assert fig["decisions"] >= 20  # both UIs really worked
    assert fig["writer_rows"] >= 50


def test_the_same_decision_by_a_second_annotator_is_recorded(tmp_path):
    """Found by the run above: bob accepting what ann had just accepted (his UI had not
    refreshed yet) returned "no change" and left no trace of bob's decision."""
    from builder.store import Store
    from builder.store import review_log
    from tests.support.rows import add_candidates

    db = tmp_path / "two.db"
    with Store(db) as ann, Store(db) as bob:
        add_candidates(ann, 1)
        first = review_log.record_decision(ann, "c000000", "ann", "accept")
        second = review_log.record_decision(bob, "c000000", "bob", "accept")
        again = review_log.record_decision(bob, "c000000", "bob", "accept")
        assert first and second and again is None  # a repeat of one's own decision is a no-op
        log = ann.query("SELECT annotator, action FROM review_log ORDER BY id")
        assert log == [{"annotator": "ann", "action": "accept"},
                       {"annotator": "bob", "action": "accept"}]
        assert ann.query("SELECT reviewer FROM candidates")[0]["reviewer"] == "bob"
        assert review_log.undo_last(bob, "bob").restored == 1  # back to ann's accept
        row = ann.query("SELECT status, reviewer FROM candidates")[0]
        assert (row["status"], row["reviewer"]) == ("accepted", "ann")
