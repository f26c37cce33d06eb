"""Review as a team, below the UI: leases, overlap, settling votes, adjudication, bulk
protection, agreement figures, and moving the log between databases."""

from __future__ import annotations

import json

import pytest

from builder.review.agreement import agreement, cohen_kappa, krippendorff_alpha, throughput
from builder.store import Store
from builder.store import review_leases, review_log, review_queue
from builder.store.review_overlap import Overlap, overlap_slot
from builder.store.review_queue import CandidateFilter
from tests.support.rows import accepted_candidate, add_candidates, export_store, insert_rows


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "g.db")
    add_candidates(s, 40)
    yield s
    s.close()


def cand(store, cid):
    return store.query("SELECT * FROM candidates WHERE id = ?", (cid,))[0]


def claim(store, who, session, count=1, keep=(), f=None):
    return [cid for cid, _ in review_leases.claim_next(store, f or CandidateFilter(), who,
                                                       session, count=count, keep=keep)]


# ------------------------------------------------------------------ agreement arithmetic

def test_cohen_kappa_on_a_hand_computed_table():
    # 50 items: both yes 20, A yes B no 5, A no B yes 10, both no 15.
    # p_o = 35/50 = 0.7; p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    assert cohen_kappa([("y", "y")] * 5) is None  # no variation: undefined, not NaN
    assert cohen_kappa([]) is None


def test_krippendorff_alpha_on_the_published_example():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 observers, 12
    # units, missing values; nominal alpha = 0.743.
    n = None
    rows = [[1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
            [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n]]
    units = [[v for v in col if v is not None] for col in zip(*rows)]
    assert krippendorff_alpha(units) == pytest.approx(0.743, abs=5e-4)
    # Two raters, 4 items: A = accept accept reject reject, B = accept reject reject reject.
    # Coincidences o_aa = 2, o_rr = 4, o_ar = o_ra = 1; n = 8, n_a = 3, n_r = 5;
    # alpha = 1 - 7 * 2 / (3 * 5 * 2) = 1 - 14 / 30 = 0.5333
    assert krippendorff_alpha([["a", "a"], ["a", "r"], ["r", "r"], ["r", "r"]]) == \
        pytest.approx(1 - 14 / 30)


def test_agreement_per_pair_overall_and_on_reasons():
    votes = [("c1", "ann", "accept", None), ("c1", "bob", "accept", None),
             ("c2", "ann", "reject", "trivial"), ("c2", "bob", "reject", "trivial"),
             ("c3", "ann", "reject", "wrong_answer"), ("c3", "bob", "reject", "trivial"),
             ("c4", "ann", "accept", None), ("c4", "bob", "reject", "ambiguous"),
             ("c5", "ann", "accept", None), ("c5", "cid", "accept", None),
             ("c6", "ann", "accept", None)]  # decided by one: not pairable
    result = agreement(votes)
    assert result["items"] == 5 and result["annotators"] == ["ann", "bob", "cid"]
    ann_bob = result["pairs"][0]
    assert (ann_bob["a"], ann_bob["b"], ann_bob["n"], ann_bob["agree"]) == ("ann", "bob", 4, 3)
    # ann: a r r a, bob: a r r r -> p_o = .75, p_e = .5 * .25 + .5 * .75 = .5, kappa = .5
    assert ann_bob["kappa"] == pytest.approx(0.5)
    assert result["pairs"][1]["b"] == "cid" and result["pairs"][1]["kappa"] is None
    assert result["reasons"]["n"] == 2 and result["reasons"]["agree"] == 1
    assert result["overall"]["values"] == 10
    assert result["overall"]["alpha"] == pytest.approx(krippendorff_alpha(
        [["accept", "accept"], ["reject", "reject"], ["reject", "reject"],
         ["accept", "reject"], ["accept", "accept"]]))


def test_throughput_counts_active_time_only():
    times = ["2025-01-01T10:00:00+00:00", "2025-01-01T10:00:10+00:00",
             "2025-01-01T10:00:50+00:00", "2025-01-01T11:00:00+00:00",  # a break
             "2025-01-01T11:00:20+00:00"]
    t = throughput(times)
    assert t["decisions"] == 5 and t["active_seconds"] == 70
    assert t["per_hour"] == pytest.approx(3 / 70 * 3600)
    assert t["median_seconds"] == 20
    assert throughput(times[:2])["per_hour"] is None  # 10 s of work: no rate yet


# ------------------------------------------------------------------ leases

def test_two_sessions_never_get_the_same_item_and_leases_end(store):
    first = claim(store, "ann", "s-ann", count=3)
    second = claim(store, "bob", "s-bob", count=3)
    assert len(first) == len(second) == 3 and not set(first) & set(second)
    review_log.record_decision(store, first[0], "ann", "accept")  # releases it
    assert review_leases.held_by_others(store, first[0], "s-bob") == []
    assert review_leases.release_session(store, "s-bob") == 3
    assert claim(store, "cid", "s-cid") == [second[0]]  # free again, in queue order
    store.conn.execute("UPDATE review_leases SET expires_at = 0 WHERE session = 's-ann'")
    assert claim(store, "dan", "s-dan", keep=[])[0] == first[1]  # an expired lease is free


def test_keep_renews_and_releases_the_rest(store):
    got = claim(store, "ann", "s1", count=3)
    store.conn.execute("UPDATE review_leases SET expires_at = 1")
    review_leases.renew(store, "s1", got[:1])  # the heartbeat extends, releases nothing
    rows = store.query("SELECT candidate_id FROM review_leases WHERE session = 's1'"
                       " AND expires_at > 1")
    assert [r["candidate_id"] for r in rows] == got[:1]
    claim(store, "ann", "s1", keep=got[:1], count=0)  # a claim drops what it does not keep
    rows = store.query("SELECT candidate_id FROM review_leases WHERE session = 's1'")
    assert [r["candidate_id"] for r in rows] == got[:1]
    assert review_leases.take(store, got[1], "bob", "s2")
    assert not review_leases.take(store, got[1], "ann", "s1")


def test_a_restarted_session_takes_back_its_annotators_leases_at_once(store):
    crashed = claim(store, "ann", "s-old", count=3)  # then killed: its leases stay 2 minutes
    bobs = claim(store, "bob", "s-bob", count=2)
    assert claim(store, "ann", "s-new", count=3) == crashed  # hers again, at once
    assert claim(store, "cid", "s-cid", count=1)[0] not in crashed + bobs
    assert not set(claim(store, "ann", "s-new", count=5, keep=crashed)) & set(bobs)
    assert review_leases.take(store, bobs[0], "ann", "s-new") is False
    assert review_leases.take(store, crashed[0], "ann", "s-newer") is True


def test_skipped_items_come_back_to_others_and_last_to_the_skipper(store):
    review_log.record_decision(store, "c000000", "ann", "skip")
    review_log.record_decision(store, "c000001", "bob", "skip")
    assert cand(store, "c000000")["status"] == "skipped"
    stats = review_queue.review_stats(store, CandidateFilter())
    assert stats["reviewed"] == 0 and stats["skipped"] == 2  # skipped is not reviewed
    # ann: every pending item, then bob's skip, then her own skip last
    order = claim(store, "ann", "s1", count=40)
    assert len(order) == 40 and order[-2:] == ["c000001", "c000000"]
    review_leases.release_session(store, "s1")
    assert claim(store, "bob", "s2", count=40)[-2:] == ["c000000", "c000001"]
    review_log.record_decision(store, "c000000", "bob", "accept")
    assert cand(store, "c000000")["status"] == "accepted"


# ------------------------------------------------------------------ overlap and settling

def test_overlap_items_need_k_decisions_and_disagreement_goes_to_adjudication(store):
    review_log.set_overlap(store, Overlap(2, 0.5))
    overlap_ids = [f"c{i:06d}" for i in range(40) if overlap_slot(f"c{i:06d}") < 0.5]
    single = next(f"c{i:06d}" for i in range(40) if overlap_slot(f"c{i:06d}") >= 0.5)
    a, b = overlap_ids[:2]
    review_log.record_decision(store, a, "ann", "accept")
    assert (cand(store, a)["status"], cand(store, a)["votes"]) == ("pending", 1)
    stats = review_queue.review_stats(store, CandidateFilter())
    assert stats["reviewed"] == 0 and stats["waiting"] == 1
    # the overlap item is offered to bob (it needs him) but not again to ann
    assert a in claim(store, "bob", "s-bob", count=40)
    assert a not in claim(store, "ann", "s-ann", count=40)
    review_log.record_decision(store, a, "bob", "accept")
    assert (cand(store, a)["status"], cand(store, a)["reviewer"]) == ("accepted", "bob")
    review_log.record_decision(store, single, "ann", "accept")
    assert cand(store, single)["status"] == "accepted"  # outside the share: one decision
    # disagreement: adjudication queue, then a final decision settles it, all votes kept
    review_log.record_decision(store, b, "ann", "accept")
    review_log.record_decision(store, b, "bob", "reject", reason="wrong_answer", note="$5")
    assert (cand(store, b)["status"], cand(store, b)["conflict"]) == ("pending", 1)
    conflicts = CandidateFilter(conflict=True)
    assert [r["id"] for r in review_queue.page_candidates(store, conflicts, 0, 10)] == [b]
    assert claim(store, "ann", "s-ann2", f=conflicts, count=5) == [b]
    assert claim(store, "cid", "s-cid", f=conflicts, count=5) == []  # one adjudicator each
    review_log.record_decision(store, b, "cid", "reject", reason="wrong_answer", final=True)
    c = cand(store, b)
    assert (c["status"], c["conflict"], c["adjudicated_by"]) == ("rejected", 0, "cid")
    votes = review_log.candidate_votes(store, b)
    assert [(v["annotator"], v["decision"], v["final"]) for v in votes] == [
        ("ann", "accept", 0), ("bob", "reject", 0), ("cid", "reject", 1)]
    assert review_queue.review_stats(store, CandidateFilter())["conflicts"] == 0
    review_log.undo_last(store, "cid")  # the final decision undone: back to adjudication
    assert (cand(store, b)["status"], cand(store, b)["conflict"]) == ("pending", 1)


def test_turning_overlap_off_settles_waiting_items(store):
    review_log.set_overlap(store, Overlap(2, 1.0))
    review_log.record_decision(store, "c000001", "ann", "reject", reason="trivial")
    assert cand(store, "c000001")["status"] == "pending"
    assert review_log.set_overlap(store, Overlap(1, 0.0)) == 1
    assert (cand(store, "c000001")["status"], cand(store, "c000001")["reject_reason"]) == (
        "rejected", "trivial")


def test_a_second_annotator_never_overwrites_a_decision_silently(store):
    review_log.record_decision(store, "c000000", "ann", "accept")
    review_log.record_decision(store, "c000000", "bob", "accept")  # agrees: recorded
    assert cand(store, "c000000")["status"] == "accepted"
    review_log.record_decision(store, "c000000", "bob", "reject", reason="trivial")
    assert (cand(store, "c000000")["status"], cand(store, "c000000")["conflict"]) == (
        "pending", 1)
    assert [r["action"] for r in store.query("SELECT action FROM review_log ORDER BY id")] == [
        "accept", "accept", "reject"]


# ------------------------------------------------------------------ bulk

def test_bulk_leaves_decided_items_alone_unless_told_and_names_whose(store):
    f = CandidateFilter(type="reasoning")  # c1, c6, c11, ... (8 items)
    review_log.record_decision(store, "c000001", "ann", "accept")
    review_log.record_decision(store, "c000006", "bob", "reject", reason="trivial")
    review_log.record_decision(store, "c000011", "bob", "skip")  # skipped is not decided
    preview = review_log.bulk_preview(store, f, "reject")
    assert preview == {"matching": 8, "open": 6, "decided": 2, "by": {"ann": 1, "bob": 1},
                       "not_ready": 0, "applies": 6, "applies_overwrite": 8}
    _, changed = review_log.bulk_decide(store, f, "lead", "reject", reason="ambiguous")
    assert changed == 6
    assert cand(store, "c000001")["status"] == "accepted"  # untouched
    assert cand(store, "c000006")["reject_reason"] == "trivial"
    _, changed = review_log.bulk_decide(store, f, "lead", "accept", overwrite=True)
    assert changed == 8
    c6 = cand(store, "c000006")
    assert (c6["status"], c6["adjudicated_by"]) == ("accepted", "lead")
    review_log.undo_last(store, "lead")
    assert cand(store, "c000006")["status"] == "rejected"


# ------------------------------------------------------------------ export-log / import-log

def _decide_on(path, who, steps):
    with Store(path) as s:
        for cid, action, kwargs in steps:
            review_log.record_decision(s, cid, who, action, **kwargs)


def test_import_log_merges_idempotently_and_sends_conflicts_to_adjudication(tmp_path,
                                                                              golden_cli):
    here, there = tmp_path / "here.db", tmp_path / "there.db"
    for path in (here, there):
        with Store(path) as s:
            add_candidates(s, 10)
    _decide_on(here, "ann", [("c000000", "accept", {}), ("c000001", "accept", {})])
    _decide_on(there, "bob", [("c000001", "reject", {"reason": "trivial"}),
                              ("c000002", "accept", {}),
                              ("c000003", "edit", {"edits": {"answer": "Better"}}),
                              ("c000004", "tag", {"tag": "needs-expert"})])
    with Store(there) as s:
        review_log.undo_last(s, "bob")  # the tag, undone there
    log = tmp_path / "bob.jsonl"
    code, out, err = golden_cli("--db", str(there), "review", "export-log", str(log))
    assert code == 0 and "5 review log rows" in out + err
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert rows[2]["edits"] == {"answer": "Better"} and rows[4]["undoes"] == rows[3]["uid"]
    code, out, _ = golden_cli("--db", str(here), "review", "import-log", str(log))
    assert code == 0 and "imported 5 new" in out and "1 new conflicts" in out
    with Store(here) as s:
        assert cand(s, "c000001")["conflict"] == 1  # ann accepted, bob rejected
        assert cand(s, "c000002")["status"] == "accepted"
        assert cand(s, "c000003")["edit_answer"] == "Better"
        assert review_queue.get_candidate(s, "c000004")["tags"] == []
        uids = {r["uid"] for r in s.query("SELECT uid FROM review_log")}
        assert {r["uid"] for r in rows} <= uids
        before = s.query("SELECT * FROM review_log ORDER BY id")
    code, out, _ = golden_cli("--db", str(here), "review", "import-log", str(log))
    assert code == 0 and "imported 0 new review log rows (5 already here)" in out
    with Store(here) as s:
        assert s.query("SELECT * FROM review_log ORDER BY id") == before  # append-only
    # and back: there learns ann's decisions; its own rows are not duplicated
    back = tmp_path / "here.jsonl"
    golden_cli("--db", str(here), "review", "export-log", str(back))
    code, out, _ = golden_cli("--db", str(there), "review", "import-log", str(back))
    assert "imported 2 new review log rows (5 already here)" in out
    with Store(there) as s:
        assert cand(s, "c000001")["conflict"] == 1


def test_import_log_refuses_bad_rows_and_unknown_candidates(tmp_path, golden_cli):
    db = tmp_path / "g.db"
    with Store(db) as s:
        add_candidates(s, 2)
    good = {"uid": "a" * 32, "candidate_id": "c000000", "annotator": "bob",
            "at": "2025-01-01T00:00:00+00:00", "action": "accept"}
    cases = [
        ({**good, "action": "approve"}, "action"),
        ({**good, "action": "reject"}, "reason must be one of"),
        ({**good, "candidate_id": "c999999"}, "not in this database"),
        ({**good, "action": "undo", "undoes": "b" * 32}, "neither in this database"),
    ]
    for record, message in cases:
        path = tmp_path / "bad.jsonl"
        path.write_text(json.dumps(good | {"uid": "c" * 32}) + "\n" + json.dumps(record) + "\n")
        code, _, err = golden_cli("--db", str(db), "review", "import-log", str(path))
        assert code == 2 and f"{path}:2:" in err and message in err, err
        assert "Traceback" not in err
    with Store(db) as s:
        assert s.query("SELECT count(*) AS n FROM review_log")[0]["n"] == 0  # nothing written


def test_review_stats_reports_agreement_and_throughput(tmp_path, golden_cli):
    db = tmp_path / "g.db"
    with Store(db) as s:
        add_candidates(s, 6)
        review_log.set_overlap(s, Overlap(2, 1.0))
    _decide_on(db, "ann", [(f"c00000{i}", "accept", {}) for i in range(4)])
    _decide_on(db, "bob", [("c000000", "accept", {}), ("c000001", "accept", {}),
                           ("c000002", "reject", {"reason": "trivial"}),
                           ("c000003", "reject", {"reason": "other", "note": "x"})])
    code, out, _ = golden_cli("--db", str(db), "review-stats", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["agreement"]["items"] == 4
    assert summary["agreement"]["pairs"][0]["agree"] == 2
    assert summary["adjudication"]["open"] == 2
    assert summary["annotators"]["bob"]["reject"] == 2
    code, out, _ = golden_cli("--db", str(db), "review-stats")
    assert code == 0 and "Krippendorff's alpha" in out and "2 waiting" in out


def test_export_of_rejected_items_keeps_reason_and_note(tmp_path, golden_cli):
    store = export_store(tmp_path / "g.db")
    insert_rows(store, "candidates", [
        accepted_candidate("c-rej", status="rejected", reject_reason="wrong_answer",
                           reject_note="the capital moved"),
        accepted_candidate("c-ok")])
    store.close()
    out = tmp_path / "rejected.jsonl"
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "export", "--out", str(out),
                              "--status", "rejected,accepted")
    assert code == 0, err
    records = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert (records["c-rej"]["reject_reason"], records["c-rej"]["reject_note"]) == (
        "wrong_answer", "the capital moved")
    assert records["c-ok"]["reject_reason"] is None


def test_review_calibrate_without_a_scored_run_is_one_line(tmp_path, golden_cli):
    db = tmp_path / "g.db"
    with Store(db) as s:
        add_candidates(s, 1)
    code, _, err = golden_cli("--db", str(db), "review", "--calibrate")
    assert code == 2 and err.strip() == ("golden: error: no scored run in the database: run "
                                         "`golden score` first")
    code, _, err = golden_cli("--db", str(db), "review", "--calibrate", "--run", "nope")
    assert code == 2 and err.strip() == "golden: error: no scored run 'nope'"
    code, _, calibrate_err = golden_cli("--db", str(db), "calibrate", "--run", "nope")
    assert calibrate_err == err


def test_overlap_from_golden_toml_and_bad_values(tmp_path):
    from builder.config import load_config
    from builder.errors import InputError
    from builder.review.settings import overlap_setting

    (tmp_path / "golden.toml").write_text("[review]\noverlap = 3\noverlap_share = 0.25\n")
    assert overlap_setting(None, None) == Overlap(3, 0.25)
    assert overlap_setting(2, None) == Overlap(2, 0.25)  # the command line wins
    (tmp_path / "golden.toml").write_text("[review]\noverlap = 0\n")
    with pytest.raises(InputError, match="golden.toml:2: review.overlap"):
        overlap_setting(None, None, load_config())


def test_the_writer_keeps_a_failing_write_in_order_and_lists_what_it_could_not_save(tmp_path):
    from builder.errors import JobError, ReviewError
    from review_tui.writer import DecisionWriter

    db = tmp_path / "g.db"
    Store(db).close()
    attempts, done, retries = [], [], []

    def flaky(store, name):
        attempts.append(name)
        if len(attempts) < 3:
            raise JobError("the database stayed locked by another process")
        done.append(name)

    def refused(store):
        raise ReviewError("unknown reject reason 'x'")

    writer = DecisionWriter(str(db), on_retry=lambda label, exc, n: retries.append((label, n)))
    first = writer.submit(flaky, "one", label="accept of c1")
    second = writer.submit(lambda store: done.append("two"), label="accept of c2")
    bad = writer.submit(refused, label="reject of c3")
    assert second.result(timeout=20) is None and first.result(timeout=1) is None
    assert done == ["one", "two"]  # kept in order behind the retried write
    assert retries == [("accept of c1", 1), ("accept of c1", 2)]
    with pytest.raises(ReviewError):
        bad.result(timeout=5)  # refused for its content: not retried
    stuck = writer.submit(lambda store: (_ for _ in ()).throw(JobError("disk full")),
                          label="accept of c4")
    writer.close(timeout=0.5)
    assert stuck.done() and writer.unsaved() == ["accept of c4: disk full"]
