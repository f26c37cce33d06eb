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


def test_two_ingests_of_folders_with_the_same_file_names_started_together(tmp_path, monkeypatch):
    """Issue 32: both used to exit 0, the second silently replacing the first one's documents
    (run one after the other, the second is refused). Both threads finish reading and checking
    before either writes (a barrier at the last check); the one that writes second must be
    refused as if it had started after the other, with nothing of its own written."""
    import threading

    import builder.ingest.pipeline as pipeline
    from builder.errors import InputError
    from builder.ingest.pipeline import ingest_paths
    from builder.store import Store

    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        for n in range(5):
            (tmp_path / folder / f"doc{n}.md").write_text(
                f"# Doc {n}\n\nDocument {n} of folder {folder}.\n", encoding="utf-8")
    db = tmp_path / "g.db"
    Store(db).close()

    barrier = threading.Barrier(2, timeout=60)
    waited = threading.local()
    real_check = pipeline._check_custom_ids

    def check_then_wait(*args, **kwargs):
        real_check(*args, **kwargs)
        if not getattr(waited, "done", False):  # the reading phase's check, not the re-check
            waited.done = True
            barrier.wait()

    monkeypatch.setattr(pipeline, "_check_custom_ids", check_then_wait)
    outcomes: dict[str, object] = {}

    def ingest(folder: str) -> None:
        with Store(db) as store:
            try:
                outcomes[folder] = ingest_paths(store, [str(tmp_path / folder)],
                                                parallel_min_chars=None)
            except InputError as exc:
                outcomes[folder] = exc

    threads = [threading.Thread(target=ingest, args=(f,)) for f in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    refused = {f: o for f, o in outcomes.items() if isinstance(o, InputError)}
    assert len(outcomes) == 2 and len(refused) == 1, outcomes
    [(loser, error)] = refused.items()
    winner = "b" if loser == "a" else "a"
    assert "is already ingested from" in str(error) and f"{winner}/doc" in str(error)
    with Store(db) as store:
        paths = [r["path"] for r in store.query("SELECT path FROM documents ORDER BY id")]
    assert paths == [str(tmp_path / winner / f"doc{n}.md") for n in range(5)]
