"""builder/store/review_queue.py, review_log.py and calibration.py: decisions and their log, undo,
tags, bulk, paging, calibration."""

from __future__ import annotations

import json
import threading
from dataclasses import replace

import pytest

from builder.store import Store
from builder.store import calibration, review_leases, review_log, review_queue
from builder.errors import ReviewError
from builder.store.review_queue import CandidateFilter
from tests.support.rows import add_candidates, add_documents


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "g.db")
    yield s
    s.close()


def cand(store, cid):
    return store.query("SELECT * FROM candidates WHERE id = ?", (cid,))[0]


def log(store, cid=None):
    sql = "SELECT * FROM review_log" + (" WHERE candidate_id = ?" if cid else "") + " ORDER BY id"
    return store.query(sql, (cid,) if cid else ())


def test_accept_reject_skip_write_projection_and_log_together(store):
    add_candidates(store, 3)
    review_log.record_decision(store, "c000000", "ann", "accept")
    review_log.record_decision(store, "c000001", "ann", "reject", reason="not_grounded", note="n/a")
    review_log.record_decision(store, "c000002", "bob", "skip")
    assert cand(store, "c000000")["status"] == "accepted"
    c1 = cand(store, "c000001")
    assert (c1["status"], c1["reject_reason"], c1["reject_note"], c1["reviewer"]) == (
        "rejected", "not_grounded", "n/a", "ann")
    assert cand(store, "c000002")["reviewer"] == "bob"
    rows = log(store)
    assert [r["action"] for r in rows] == ["accept", "reject", "skip"]
    assert json.loads(rows[1]["before"])["status"] == "pending"
    assert json.loads(rows[1]["after"])["status"] == "rejected"
    assert rows[1]["reason"] == "not_grounded" and rows[1]["annotator"] == "ann"


def test_bad_decisions_raise_and_write_nothing(store):
    add_candidates(store, 1)
    with pytest.raises(ReviewError):
        review_log.record_decision(store, "c000000", "ann", "reject", reason="bad")
    with pytest.raises(ReviewError, match="needs a note"):
        review_log.record_decision(store, "c000000", "ann", "reject", reason="other")
    with pytest.raises(ReviewError):
        review_log.record_decision(store, "nope", "ann", "accept")
    with pytest.raises(ReviewError):
        review_log.record_decision(store, "c000000", "ann", "edit", edits={"type": "nonsense"})
    assert log(store) == [] and cand(store, "c000000")["status"] == "pending"


def test_edit_keeps_generated_original(store):
    add_candidates(store, 1)
    review_log.record_decision(store, "c000000", "ann", "edit",
                       edits={"question": "Better question?", "type": "reasoning"})
    c = cand(store, "c000000")
    assert c["question"] == "Question 0?" and c["edit_question"] == "Better question?"
    assert c["type"] == "single_hop" and c["edit_type"] == "reasoning"
    assert c["status"] == "pending"
    # Editing back to the original clears the edit instead of storing a copy.
    review_log.record_decision(store, "c000000", "ann", "edit", edits={"question": "Question 0?"})
    assert cand(store, "c000000")["edit_question"] is None
    assert [r["action"] for r in log(store)] == ["edit", "edit"]


def test_tags_and_no_op_writes_no_log(store):
    add_candidates(store, 1)
    review_log.record_decision(store, "c000000", "ann", "tag", tag="needs expert")
    assert review_log.record_decision(store, "c000000", "ann", "tag", tag="needs-expert") is None
    assert review_queue.get_candidate(store, "c000000")["tags"] == ["needs-expert"]
    review_log.record_decision(store, "c000000", "ann", "untag", tag="needs-expert")
    assert review_queue.get_candidate(store, "c000000")["tags"] == []
    assert len(log(store)) == 2
    with pytest.raises(ReviewError):
        review_log.normalize_tag("x" * 41)


def test_undo_per_annotator_one_by_one(store):
    add_candidates(store, 3)
    review_log.record_decision(store, "c000000", "ann", "accept")
    review_log.record_decision(store, "c000001", "bob", "accept")
    review_log.record_decision(store, "c000002", "ann", "reject", reason="trivial")
    review_log.record_decision(store, "c000002", "ann", "tag", tag="x")
    assert review_log.undo_last(store, "ann").candidate_ids == ["c000002"]  # the tag
    assert review_queue.get_candidate(store, "c000002")["tags"] == []
    assert cand(store, "c000002")["status"] == "rejected"
    review_log.undo_last(store, "ann")  # the reject
    c2 = cand(store, "c000002")
    assert (c2["status"], c2["reject_reason"], c2["reviewer"]) == ("pending", None, None)
    review_log.undo_last(store, "ann")  # the accept of c0
    assert cand(store, "c000000")["status"] == "pending"
    assert review_log.undo_last(store, "ann") is None
    assert cand(store, "c000001")["status"] == "accepted"  # bob's decision untouched
    undos = [r for r in log(store) if r["action"] == "undo"]
    assert len(undos) == 3 and all(r["undoes"] for r in undos)


def test_undo_withdraws_only_my_vote_and_never_overwrites_a_later_edit(store):
    add_candidates(store, 1)
    review_log.record_decision(store, "c000000", "ann", "accept")
    review_log.record_decision(store, "c000000", "bob", "reject", reason="wrong_answer")
    assert (cand(store, "c000000")["status"], cand(store, "c000000")["conflict"]) == (
        "pending", 1)  # they disagree: adjudication, not "last writer wins"
    result = review_log.undo_last(store, "ann")
    assert result.restored == 1 and result.conflicts == 0
    c = cand(store, "c000000")
    assert (c["status"], c["reviewer"], c["conflict"]) == ("rejected", "bob", 0)
    review_log.record_decision(store, "c000000", "ann", "edit", edits={"answer": "Mine"})
    review_log.record_decision(store, "c000000", "bob", "edit", edits={"answer": "Bob's"})
    result = review_log.undo_last(store, "ann")
    assert result.conflicts == 1 and result.restored == 0
    assert cand(store, "c000000")["edit_answer"] == "Bob's"
    assert review_log.undo_last(store, "ann") is None  # the conflicting row counts as handled


def test_bulk_over_filter_and_undo_as_one_step(store):
    add_candidates(store, 12)
    f = CandidateFilter(type="reasoning")
    batch, n = review_log.bulk_decide(store, f, "ann", "accept", chunk=2)
    assert n == review_queue.count_candidates(store, replace(f, status="accepted")) == 3
    assert {r["batch_id"] for r in log(store)} == {batch}
    review_log.bulk_decide(store, CandidateFilter(), "ann", "tag", tag="batch1", overwrite=True)
    assert review_queue.count_candidates(store, CandidateFilter(tag="batch1")) == 12
    assert review_log.undo_last(store, "ann").restored == 12
    assert review_queue.count_candidates(store, CandidateFilter(tag="batch1")) == 0
    assert review_log.undo_last(store, "ann").restored == 3
    assert review_queue.count_candidates(store, CandidateFilter(status="accepted")) == 0


def test_items_built_on_a_rejected_part_are_listed_and_settled_by_one_bulk_reject(store):
    """A harder item names its parts (part_ids); rejecting a part puts every item built on it
    under `parts="rejected"`, and the item's detail shows each part's status. An accepted or
    pending part, a part id no longer stored, or a broken part_ids value lists nothing."""
    chunks = add_documents(store)
    add_candidates(store, 3, chunk_ids=chunks)                      # c0, c1, c2: single-hop parts
    add_candidates(store, 1, start=3, chunk_ids=chunks, type="comparative",
                   part_ids=json.dumps(["c000000", "c000001"]))
    add_candidates(store, 1, start=4, chunk_ids=chunks, type="reasoning",
                   part_ids=json.dumps(["c000002", "gone"]))
    add_candidates(store, 1, start=5, chunk_ids=chunks, type="reasoning", part_ids="not json")
    built_on_rejected = CandidateFilter(parts="rejected")
    assert review_queue.count_candidates(store, built_on_rejected) == 0
    review_log.record_decision(store, "c000000", "ann", "accept")
    review_log.record_decision(store, "c000002", "ann", "skip")
    assert review_queue.count_candidates(store, built_on_rejected) == 0
    review_log.record_decision(store, "c000001", "ann", "reject", reason="not_grounded")
    assert [r["id"] for r in review_queue.page_candidates(store, built_on_rejected, 0, 10)] == [
        "c000003"]
    assert "built on a rejected part" in built_on_rejected.describe()
    detail = review_queue.get_candidate(store, "c000003")
    assert [(p["id"], p["status"]) for p in detail["parts"]] == [
        ("c000000", "accepted"), ("c000001", "rejected")]
    assert detail["parts"][1]["question"] == "Question 1?" and not detail["parts"][1]["edited"]
    assert [(p["id"], p["status"]) for p in review_queue.get_candidate(store, "c000004")[
        "parts"]] == [("c000002", "skipped"), ("gone", None)]
    assert review_queue.get_candidate(store, "c000000")["parts"] == []
    review_log.record_decision(store, "c000000", "ann", "edit", edits={"question": "Better?"})
    edited = review_queue.get_candidate(store, "c000003")["parts"][0]
    assert (edited["question"], edited["edited"]) == ("Better?", True)
    _, n = review_log.bulk_decide(store, built_on_rejected, "ann", "reject",
                                  reason="not_grounded")
    assert n == 1 and cand(store, "c000003")["status"] == "rejected"
    assert cand(store, "c000004")["status"] == "pending"


def test_default_filter_is_queue_pending_first_passed_no_duplicates(store):
    chunks = add_documents(store)
    add_candidates(store, 6, chunk_ids=chunks)
    add_candidates(store, 1, start=6, chunk_ids=chunks, verdict="failed")
    add_candidates(store, 1, start=7, chunk_ids=chunks, duplicate_of="c000000")
    review_log.record_decision(store, "c000001", "ann", "accept")
    f = CandidateFilter()
    ids = [r["id"] for r in review_queue.page_candidates(store, f, 0, 50)]
    assert ids == ["c000000", "c000002", "c000003", "c000004", "c000005", "c000001"]
    assert review_queue.count_candidates(store, f) == 6
    assert review_queue.count_candidates(store, replace(f, verdict=None, duplicates="include")) == 8
    assert [r["id"] for r in review_queue.page_candidates(store, replace(f, duplicates="only",
                                                                verdict=None), 0, 5)] == [
        "c000007"]
    assert review_queue.position_of(store, f, "c000001") == 5
    assert review_queue.position_of(store, f, "c000006") is None
    stats = review_queue.review_stats(store, replace(f, status="pending"))
    assert (stats["total"], stats["reviewed"], stats["accepted"]) == (6, 1, 1)
    assert stats["by_type"]["reasoning"] == {"total": 1, "reviewed": 1, "accepted": 1,
                                             "rejected": 0}


@pytest.mark.parametrize("sort", list(review_queue.SORTS))
def test_keyset_pages_match_offset_pages_for_every_sort(store, sort):
    add_candidates(store, 250)
    for i in range(0, 250, 7):
        review_log.record_decision(store, f"c{i:06d}", "ann", "accept")
    f = CandidateFilter(sort=sort)
    full = [r["id"] for r in review_queue.page_candidates(store, f, 0, 1000)]
    assert len(full) == 250
    walked, after = [], None
    while True:
        page = review_queue.page_candidates(store, f, len(walked), 40, after=after)
        if not page:
            break
        walked += [r["id"] for r in page]
        after = page[-1]["sort_key"]
    assert walked == full
    assert review_queue.position_of(store, f, full[123]) == 123


def test_claim_next_skips_decided_and_kept_wraps_and_brings_skips_back_last(store):
    add_candidates(store, 5)
    f = CandidateFilter(sort="oldest")
    rows = review_queue.page_candidates(store, f, 0, 5)
    review_log.record_decision(store, "c000001", "ann", "accept")
    review_log.record_decision(store, "c000003", "ann", "skip")
    claim = lambda after, keep=(), count=1: [cid for cid, _ in review_leases.claim_next(
        store, f, "ann", "s1", after_key=after, keep=keep, count=count)]
    assert claim(rows[2]["sort_key"]) == ["c000004"]
    assert claim(rows[2]["sort_key"], keep=["c000004"]) == ["c000000"]  # wraps
    assert claim(None, keep=["c000000", "c000002", "c000004"]) == ["c000003"]  # my skip, last
    assert claim(None, keep=["c000000", "c000002", "c000003", "c000004"]) == []


def test_search_is_literal_text_not_sql_or_like_syntax(store):
    chunks = add_documents(store)
    add_candidates(store, 3, chunk_ids=chunks)
    add_candidates(store, 1, start=3, chunk_ids=chunks, question="100% [bold]sure[/]? '; DROP")
    f = CandidateFilter(text="100%")
    assert [r["id"] for r in review_queue.page_candidates(store, f, 0, 10)] == ["c000003"]
    assert review_queue.count_candidates(store, CandidateFilter(text="%")) == 1
    assert review_queue.count_candidates(store, CandidateFilter(text="_")) == 0
    assert review_queue.count_candidates(store, CandidateFilter(text="'; DROP")) == 1
    assert review_queue.count_candidates(store, CandidateFilter(text="c000001")) == 1


def _ids(store, f):
    return [r["id"] for r in review_queue.page_candidates(store, f, 0, 1000)]


def test_search_through_the_trigram_index_matches_the_plain_substring_scan(store, monkeypatch):
    chunks = add_documents(store)
    add_candidates(store, 30, chunk_ids=chunks)
    add_candidates(store, 4, start=30, chunk_ids=chunks, question='Say "NEAR(a b)" AND x* ^y')
    review_log.record_decision(store, "c000007", "ann", "edit",
                       edits={"question": "Rewritten wording", "answer": "Forty-Two"})
    review_log.record_decision(store, "c000007", "ann", "accept")  # edit_* rewritten unchanged
    texts = ["Question 1", "question 1", "ANSWER 2", "rewritten", "forty-two", "Question 7?",
             '"NEAR(a b)"', "AND x*", "^y", 'y"', "c000012", "Question 3?", "zzz", "Qu", "%"]
    via_index = {t: _ids(store, CandidateFilter(text=t)) for t in texts}
    counts = {t: review_queue.count_candidates(store, CandidateFilter(text=t)) for t in texts}
    monkeypatch.setattr(review_queue, "_search_rowids", lambda *args: None)  # LIKE scan only
    assert via_index == {t: _ids(store, CandidateFilter(text=t)) for t in texts}
    assert counts == {t: review_queue.count_candidates(store, CandidateFilter(text=t)) for t in texts}
    assert via_index["rewritten"] == via_index["forty-two"] == ["c000007"]
    assert via_index["Question 7?"] == ["c000007"]  # the generated original stays searchable
    assert len(via_index["Question 1"]) == 11 and via_index["zzz"] == []
    assert via_index["c000012"] == ["c000012"]
    assert len(via_index['"NEAR(a b)"']) == 4


def test_search_index_follows_edits_and_stays_consistent(store):
    add_candidates(store, 5)
    assert review_queue._search_rowids(store, "Question 3") is not None  # the index is used
    review_log.record_decision(store, "c000003", "ann", "edit", edits={"question": "Brand new text"})
    assert _ids(store, CandidateFilter(text="brand new")) == ["c000003"]
    review_log.record_decision(store, "c000003", "ann", "edit", edits={"question": "Question 3?"})
    assert _ids(store, CandidateFilter(text="brand new")) == []
    review_log.undo_last(store, "ann")
    assert _ids(store, CandidateFilter(text="brand new")) == ["c000003"]
    store.conn.execute("INSERT INTO candidates_fts (candidates_fts, rank) "
                       "VALUES ('integrity-check', 1)")  # raises if index and rows differ


def test_broad_search_falls_back_to_the_scan(store, monkeypatch):
    add_candidates(store, 12)
    monkeypatch.setattr(review_queue, "SEARCH_ROWIDS", 5)
    assert review_queue._search_rowids(store, "Question") is None  # pages: 12 > 5, LIKE walk
    assert review_queue._search_rowids(store, "Question 1") is not None  # 3 matches
    assert review_queue._search_rowids(store, "Question", review_queue.COUNT_ROWIDS) is not None  # counts
    f = CandidateFilter(text="question")
    assert len(_ids(store, f)) == review_queue.count_candidates(store, f) == 12
    assert review_queue.review_stats(store, f)["total"] == 12
    assert review_queue.position_of(store, f, "c000011") == 11


def test_get_candidate_gives_hops_in_order_with_titles_and_evidence(store):
    chunks = add_documents(store, n_docs=2, chunks_per_doc=2)
    add_candidates(store, 1, chunk_ids=chunks, type="multi_hop",
                   hops=[["doc1.md#0"], ["doc0.md#1", "missing#9"]],
                   evidence=[{"chunk_id": "doc1.md#0", "quote": "forty-two", "start": None,
                              "end": None}])
    store.conn.execute("UPDATE candidates SET chunk_ids = ?",
                       (json.dumps(["doc1.md#0", "doc0.md#1", "missing#9"]),))
    c = review_queue.get_candidate(store, "c000000")
    assert [[ch["id"] for ch in hop] for hop in c["sources"]] == [
        ["doc1.md#0"], ["doc0.md#1", "missing#9"]]
    first = c["sources"][0][0]
    assert first["document_title"] == "Document 1"
    assert first["heading_path"] == ["Part 1", "Sec 0"]
    assert first["evidence"][0]["quote"] == "forty-two"
    assert c["sources"][1][1]["missing"] is True


def test_two_writers_in_threads_never_lock(tmp_path):
    path = tmp_path / "g.db"
    with Store(path) as s:
        add_candidates(s, 200)
    errors: list[BaseException] = []

    def work(name: str, ids: list[str]) -> None:
        try:
            with Store(path) as s:
                for cid in ids:
                    review_log.record_decision(s, cid, name, "accept")
                    review_log.record_decision(s, cid, name, "tag", tag=name)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n, [f"c{i:06d}" for i in range(k, 200, 2)]))
               for k, n in enumerate(("ann", "bob"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with Store(path) as s:
        assert review_queue.count_candidates(s, CandidateFilter(status="accepted")) == 200
        assert len(log(s)) == 400


def _add_run(store):
    with store.write() as db:
        db["runs"].insert({"id": "run1", "created_at": "2025-01-01T00:00:00+00:00"})
        db["run_items"].insert_all([
            {"run_id": "run1", "query_id": f"q{i}", "question": f"Q{i}", "reference": "R",
             "answer": "A", "contexts": json.dumps(["ctx a", "ctx b"]),
             "judge": json.dumps({"faithfulness": 5, "correctness": 1})} for i in range(3)])


def test_calibration_queue_hides_judge_and_drops_fully_scored(store):
    _add_run(store)
    queue = calibration.calibration_queue(store, "ann", "run1")
    assert [q["query_id"] for q in queue] == ["q0", "q1", "q2"]
    assert all("judge" not in q for q in queue) and queue[0]["contexts"] == ["ctx a", "ctx b"]
    calibration.record_calibration(store, run_id="run1", query_id="q0", metric="faithfulness", score=4,
                          annotator="ann")
    assert calibration.calibration_queue(store, "ann")[0]["scores"] == {"faithfulness": 4}
    calibration.record_calibration(store, run_id="run1", query_id="q0", metric="correctness", score=2,
                          annotator="ann")
    assert [q["query_id"] for q in calibration.calibration_queue(store, "ann")] == ["q1", "q2"]
    assert len(calibration.calibration_queue(store, "bob")) == 3
    with pytest.raises(ReviewError):
        calibration.record_calibration(store, run_id="run1", query_id="q1", metric="correctness",
                              score=6, annotator="ann")
    with pytest.raises(ReviewError):
        calibration.record_calibration(store, run_id="run1", query_id="q1", metric="judge", score=3,
                              annotator="ann")


@pytest.mark.parametrize("answer, edit_answer, marks, edit_type, ready", [
    ("Yes, within 30 days.", "", ["doc0.md#0"], None, True),  # a blank edit is no edit
    ("", "  ", ["doc0.md#0"], None, False),
    ("\n", None, ["doc0.md#0"], None, False),  # blank, not only spaces
    ("Yes.", None, None, None, False),  # chunks never marked
    ("Yes.", None, [], None, False),
    ("Yes.", None, [], "unanswerable", True),
])
def test_one_accept_rule_for_the_screen_the_store_and_bulk(store, answer, edit_answer, marks,
                                                           edit_type, ready):
    from review_tui.screens.review import not_ready

    add_candidates(store, 2)
    store.conn.execute(
        "UPDATE candidates SET type = 'production', answer = ?, edit_answer = ?,"
        " edit_chunk_ids = ?, edit_type = ? WHERE id = 'c000001'",
        (answer, edit_answer, None if marks is None else json.dumps(marks), edit_type))
    screen_says = not_ready(review_queue.get_candidate(store, "c000001")) is None
    preview = review_log.bulk_preview(store, CandidateFilter(verdict=None), "accept")
    _, bulk_accepted = review_log.bulk_decide(store, CandidateFilter(verdict=None), "ann",
                                              "accept")
    review_log.undo_last(store, "ann")
    try:
        review_log.record_decision(store, "c000001", "ann", "accept")
        store_says = True
    except ReviewError:
        store_says = False
    assert (screen_says, store_says, bulk_accepted == 2, preview["applies"] == 2) == (
        ready, ready, ready, ready)
