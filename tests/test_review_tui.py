"""The review UI driven headless with Pilot: every decision lands in the DB, nothing is lost,
untrusted text stays text."""

from __future__ import annotations

import json

import pytest

from builder.store import Store
from builder.store import review_log, review_queue
from builder.store.review_overlap import Overlap
from review_tui.app import ReviewApp
from review_tui.screens.calibrate import CalibrationScreen
from review_tui.screens.edit import EditScreen
from review_tui.screens.modals import BulkConfirmScreen, FilterScreen, RejectScreen
from review_tui.screens.kb_search import KBSearchScreen
from review_tui.screens.review import ReviewScreen
from review_tui.widgets.chunk_search import ChunkSearch
from tests.support.rows import add_candidates, add_documents

SIZE = (160, 50)
EVIL = "[bold]x[/] [@click=app.quit]boom[/] [link=https://e.vil]l[/] \x1b]0;pwned\x07\x1b[31m"


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "golden.db"
    with Store(path) as s:
        add_candidates(s, 30)
    return str(path)


def row(db, cid):
    with Store(db) as s:
        return s.query("SELECT * FROM candidates WHERE id = ?", (cid,))[0]


def log_rows(db):
    with Store(db) as s:
        return s.query("SELECT * FROM review_log ORDER BY id")


async def settle(app, pilot):
    await app.screen.settle() if isinstance(app.screen, ReviewScreen) else None
    await pilot.pause()


async def filter_by(app, pilot, field: str, value: str) -> None:
    """Open the filter dialog (f), set one field, apply it (ctrl+s)."""
    await pilot.press("f")
    assert isinstance(app.screen, FilterScreen)
    app.screen.query_one(f"#f-{field}").value = value
    await pilot.press("ctrl+s")
    await settle(app, pilot)


def screen_text(app) -> str:
    """What is on screen, as plain text lines (from the SVG screenshot)."""
    return "\n".join(screen_text_lines(app))


async def test_accept_opens_next_and_is_written_at_once(db):
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(app, pilot)  # the first item opens once its lease is taken
        assert screen.current_id == "c000000"
        await pilot.press("a")
        assert screen.current_id == "c000001"  # next pending opened by itself
        await settle(app, pilot)
        assert row(db, "c000000")["status"] == "accepted"
        assert row(db, "c000000")["reviewer"] == "ann"
        assert screen.stats["accepted"] == 1 and screen.stats["reviewed"] == 1
        assert screen.list.row(screen.list.cursor)["id"] == "c000001"
    assert [r["action"] for r in log_rows(db)] == ["accept"]


async def test_reject_with_reason_and_other_needs_note(db):
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)  # the first item opens once its lease is taken
        await pilot.press("r")
        assert isinstance(app.screen, RejectScreen)
        await pilot.press("2")
        await settle(app, pilot)
        assert row(db, "c000000")["reject_reason"] == "not_grounded"
        await pilot.press("r", "6")
        assert isinstance(app.screen, RejectScreen)  # 'other' without a note stays open
        await pilot.press(*"too long", "enter")
        await settle(app, pilot)
        r = row(db, "c000001")
        assert (r["status"], r["reject_reason"], r["reject_note"]) == (
            "rejected", "other", "too long")


async def test_edit_keeps_original_and_ctrl_keys_work_in_text_area(db):
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)  # the first item opens once its lease is taken
        await pilot.press("e")
        assert isinstance(app.screen, EditScreen)
        app.screen.query_one("#edit-question").text = "What is the answer, exactly?"
        await pilot.press("n")  # typed into the TextArea, not "next"
        await pilot.press("ctrl+o")  # save + accept, from inside the TextArea
        await settle(app, pilot)
        r = row(db, "c000000")
        assert r["question"] == "Question 0?"
        assert r["edit_question"] == "nWhat is the answer, exactly?"
        assert r["status"] == "accepted"
        assert app.screen.current_id == "c000001"
        await pilot.press("e")
        await pilot.press("ctrl+n")  # nothing changed: no edit row, just move on
        await settle(app, pilot)
        assert app.screen.current_id == "c000002"
    assert [r["action"] for r in log_rows(db)] == ["edit", "accept"]


async def test_tag_and_undo_one_by_one(db):
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)  # the first item opens once its lease is taken
        await pilot.press("t", *"needs-expert", "enter")
        await settle(app, pilot)
        assert app.screen.current["tags"] == ["needs-expert"]
        await pilot.press("a", "s")
        await settle(app, pilot)
        assert row(db, "c000001")["status"] == "skipped"
        await pilot.press("u")
        await settle(app, pilot)
        assert row(db, "c000001")["status"] == "pending"
        assert app.screen.current_id == "c000001"  # the undone candidate is shown again
        await pilot.press("u")
        await settle(app, pilot)
        assert row(db, "c000000")["status"] == "pending"
        await pilot.press("u")
        await settle(app, pilot)
        assert app.screen.current["tags"] == []
    assert [r["action"] for r in log_rows(db)].count("undo") == 3


async def test_filter_search_and_sort(db):
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)  # the first item opens once its lease is taken
        screen = app.screen
        await filter_by(app, pilot, "type", "temporal")
        assert screen.filter.type == "temporal" and screen.list.count == 6
        assert screen.current["type"] == "temporal"
        await pilot.press("x")  # back to the queue
        await pilot.press("slash", *"Question 17", "enter")
        await settle(app, pilot)
        assert screen.list.count == 1 and screen.current_id == "c000017"
        assert "search='Question 17'" in screen_text(app)
        await pilot.press("escape", "x", "o", "o")  # sort: queue -> oldest -> newest
        await settle(app, pilot)
        assert screen.filter.sort == "newest" and screen.current_id == "c000029"


async def test_a_part_rejected_shows_on_its_harder_item_and_the_filter_lists_it(tmp_path):
    """Reject a part with `r`: the comparative built on it says so in its detail pane ("Built
    from", each part's status), and the filter's "parts" field lists it alone."""
    path = tmp_path / "golden.db"
    with Store(path) as s:
        chunks = add_documents(s)
        add_candidates(s, 3, chunk_ids=chunks, type="single_hop")
        add_candidates(s, 1, start=3, chunk_ids=chunks, type="comparative",
                       question="Question 0? Question 1? Which of the two values is higher?",
                       part_ids=json.dumps(["c000000", "c000001"]))
    app = ReviewApp(str(path), "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert screen.current_id == "c000000"
        await pilot.press("r", "1")  # reject the first part
        await settle(app, pilot)
        assert row(str(path), "c000000")["status"] == "rejected"
        await filter_by(app, pilot, "parts", "rejected")
        assert screen.filter.parts == "rejected" and screen.list.count == 1
        assert screen.current_id == "c000003"
        text = screen_text(app)
        assert "built on a rejected part" in text  # the header names the filter
        assert "Built from  a part was rejected: this item repeats it" in text
        assert "✗ rejected Question 0?" in text and "pending    Question 1?" in text


def test_a_part_edited_is_marked_on_the_harder_item_that_holds_its_old_words():
    from review_tui.widgets.detail import render_parts
    text = render_parts({"parts": [
        {"id": "a", "question": "Better " + EVIL + "?", "status": "accepted", "edited": True},
        {"id": "b", "question": "Question 1?", "status": None, "edited": False}]}).plain
    assert "a part was edited: this item still holds its old words" in text
    assert "✓ accepted Better [bold]x[/]" in text and "(edited)" in text  # text stays literal
    assert "gone       Question 1?" in text and "\x1b" not in text
    assert render_parts({"parts": []}).plain == ""


async def test_bulk_accept_behind_confirmation_and_undo_as_one(db):
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        app.screen.apply_filter(review_queue.CandidateFilter(type="reasoning"))
        await pilot.press("A")
        assert isinstance(app.screen, BulkConfirmScreen)
        await pilot.press("n")  # declined: nothing written
        await settle(app, pilot)
        assert log_rows(db) == []
        await pilot.press("A", "y")
        await settle(app, pilot)
        with Store(db) as s:
            assert review_queue.count_candidates(s, review_queue.CandidateFilter(status="accepted")) == 6
        await pilot.press("u")
        await settle(app, pilot)
        with Store(db) as s:
            assert review_queue.count_candidates(s, review_queue.CandidateFilter(status="accepted")) == 0


async def test_bulk_accept_states_how_many_items_it_accepts(db):
    with Store(db) as s:  # a production item without a reference is left out of an accept
        s.conn.execute("UPDATE candidates SET type = 'production', answer = ''"
                       " WHERE id = 'c000007'")
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("A")
        assert isinstance(app.screen, BulkConfirmScreen)
        text = screen_text(app)
        assert "Accept 29 items?" in text and "Yes, 29 (y)" in text
        assert "1 item from production left out" in text
        await pilot.press("y")
        await settle(app, pilot)
    assert len(log_rows(db)) == 29


def test_bulk_confirmation_counts_with_thousands_separators():
    from review_tui.screens.modals import items

    assert "Accept {n}?".format(n=items(100_000)) == "Accept 100,000 items?"
    assert items(1) == "1 item"


async def test_decisions_survive_restart(db):
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)  # the first item opens once its lease is taken
        await pilot.press("a", "a", "s")
        # no settle: quitting must still write everything already decided
    assert [row(db, f"c00000{i}")["status"] for i in range(3)] == [
        "accepted", "accepted", "skipped"]
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.screen.current_id == "c000003"
        await pilot.press("u")
        await settle(app, pilot)
        assert row(db, "c000002")["status"] == "pending"


async def test_two_annotators_at_once_and_new_rows_appear(db):
    one, two = ReviewApp(db, "ann"), ReviewApp(db, "bob")
    async with one.run_test(size=SIZE) as p1, two.run_test(size=SIZE) as p2:
        await settle(one, p1)
        await settle(two, p2)
        for _ in range(5):
            await p1.press("a")
            await p2.press("s")
        await settle(one, p1)
        await settle(two, p2)
        with Store(db) as s:  # the generator keeps writing meanwhile
            add_candidates(s, 5, start=100)
        two.screen.poll()
        await two.screen._refresh_worker.wait()
        await p2.pause()
        assert two.screen.list.count == 35
        assert two.screen.stats["total"] == 35
    rows = log_rows(db)
    assert len(rows) == 10 and {r["annotator"] for r in rows} == {"ann", "bob"}


async def test_keymap_remaps_by_binding_id(db):
    app = ReviewApp(db, "ann", keymap={"review.accept": "y"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)  # the first item opens once its lease is taken
        await pilot.press("a")
        await settle(app, pilot)
        assert log_rows(db) == []
        await pilot.press("y")
        await settle(app, pilot)
        assert row(db, "c000000")["status"] == "accepted"


@pytest.fixture
def evil_db(tmp_path):
    path = tmp_path / "evil.db"
    with Store(path) as s:
        chunks = add_documents(s, 1, 1)
        s.conn.execute("UPDATE chunks SET text = ?, heading_path = ?",
                       (f"Body {EVIL} forty-two", json.dumps([EVIL])))
        s.conn.execute("UPDATE documents SET title = ?", (EVIL,))
        add_candidates(s, 1, chunk_ids=chunks, question=f"Q {EVIL}?", answer=f"A {EVIL}",
                       verification=[{"check": EVIL, "passed": False, "reason": EVIL}])
        review_log.record_decision(s, "c000000", "gen", "tag", tag="[red]t[/]")
    return str(path)


async def test_markup_and_escape_sequences_are_shown_literally(evil_db):
    app = ReviewApp(evil_db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "[@click=app.quit]boom[/]" in text
        assert "[bold]x[/]" in text and "[red]t[/]" in text
        assert "␛]0;pwned␇␛[31m" in text
        assert "\x1b" not in app.export_screenshot()
        for _ in range(3):  # clicking the "link" text runs nothing
            await pilot.click("#detail", offset=(10, 8))
        await pilot.press("e")
        await pilot.press("ctrl+s")  # opening and saving the editor is not an edit
        await settle(app, pilot)
        assert app.is_running
        assert row(evil_db, "c000000")["edit_question"] is None


async def test_calibration_scores_are_written_and_judge_never_shown(tmp_path):
    path = tmp_path / "cal.db"
    with Store(path) as s, s.write() as dbw:
        dbw["runs"].insert({"id": "run1", "created_at": "2025-01-01T00:00:00+00:00"})
        dbw["run_items"].insert_all([
            {"run_id": "run1", "query_id": f"q{i}", "question": f"Question {i} {EVIL}",
             "reference": "Ref", "answer": "Ans", "contexts": json.dumps(["ctx"]),
             "judge": json.dumps({"faithfulness": 5, "reason": "JUDGE-SECRET"})}
            for i in range(2)])
    app = ReviewApp(str(path), "ann", calibrate=True, run_id="run1")
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, CalibrationScreen)
        assert "JUDGE-SECRET" not in screen_text(app)
        assert "[@click=app.quit]boom[/]" in screen_text(app)
        await pilot.press("4", "2", "5")
        await app.writer.drain()
        assert app.screen.item["query_id"] == "q1"
    with Store(path) as s:
        rows = s.query("SELECT query_id, metric, score, annotator, source FROM calibration"
                       " ORDER BY id")
    assert rows == [
        {"query_id": "q0", "metric": "faithfulness", "score": 4, "annotator": "ann",
         "source": "tui"},
        {"query_id": "q0", "metric": "correctness", "score": 2, "annotator": "ann",
         "source": "tui"},
        {"query_id": "q1", "metric": "faithfulness", "score": 5, "annotator": "ann",
         "source": "tui"},
    ]


async def test_help_shows_guidelines_and_remapped_keys(db):
    app = ReviewApp(db, "ann", keymap={"review.reject": "x"})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        text = screen_text(app)
        assert "Annotation guidelines" in text and "review.reject" in text
        await pilot.press("escape")
        assert isinstance(app.screen, ReviewScreen)


async def test_two_apps_never_show_the_same_first_item(db):
    one, two = ReviewApp(db, "ann"), ReviewApp(db, "bob")
    async with one.run_test(size=SIZE) as p1, two.run_test(size=SIZE) as p2:
        await settle(one, p1)
        await settle(two, p2)
        first = {one.screen.current_id, two.screen.current_id}
        assert len(first) == 2 and None not in first
        seen = {"ann": [one.screen.current_id], "bob": [two.screen.current_id]}
        for _ in range(6):
            await p1.press("a")
            await p2.press("a")
            await settle(one, p1)
            await settle(two, p2)
            seen["ann"].append(one.screen.current_id)
            seen["bob"].append(two.screen.current_id)
        assert not set(seen["ann"]) & set(seen["bob"])
        assert "◷" in screen_text(one)  # bob's items are marked as held in ann's list
    with Store(db) as s:
        assert s.query("SELECT count(*) AS n FROM review_leases")[0]["n"] == 0  # released
        decided = s.query("SELECT candidate_id, count(*) AS n FROM review_votes"
                          " GROUP BY candidate_id HAVING n > 1")
    assert decided == [] and len(log_rows(db)) == 12


async def test_fast_decisions_keep_every_lined_up_item_leased(db, monkeypatch):
    import time

    from builder.store import review_leases

    slow = review_leases.claim_next
    monkeypatch.setattr(review_leases, "claim_next",
                        lambda *a, **k: (time.sleep(0.05), slow(*a, **k))[1])
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for _ in range(8):
            await pilot.press("a")  # faster than the writer: claims would overlap
        await settle(app, pilot)
        screen = app.screen
        lined_up = {screen.current_id, *(cid for cid, _ in screen.offers)}
        with Store(db) as s:
            leased = {r["candidate_id"] for r in s.query(
                "SELECT candidate_id FROM review_leases WHERE session = ?", (app.session,))}
        assert len(lined_up) == 3 and lined_up <= leased


async def test_overlap_item_waits_for_the_second_annotator(db):
    one = ReviewApp(db, "ann", overlap=Overlap(2, 1.0))
    async with one.run_test(size=SIZE) as p1:
        await settle(one, p1)
        first = one.screen.current_id
        await p1.press("a")
        await settle(one, p1)
        assert row(db, first)["status"] == "pending" and one.screen.stats["waiting"] == 1
        assert "⧗1" in screen_text(one)
    two = ReviewApp(db, "bob")  # the overlap setting is the database's
    async with two.run_test(size=SIZE) as p2:
        await settle(two, p2)
        assert two.screen.current_id == first
        await p2.press("a")
        await settle(two, p2)
        assert row(db, first)["status"] == "accepted" and two.screen.stats["reviewed"] == 1


async def test_adjudication_shows_every_decision_and_records_the_final_one(db):
    with Store(db) as s:
        review_log.record_decision(s, "c000003", "ann", "accept", note="fine by me")
        review_log.record_decision(s, "c000003", "bob", "reject", reason="wrong_answer",
                                   note="it is [red]$5[/]")
    app = ReviewApp(db, "lead")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "⚖1 (c)" in screen_text(app)
        await pilot.press("c")
        await settle(app, pilot)
        screen = app.screen
        assert screen.filter.conflict and screen.current_id == "c000003"
        text = screen_text(app)
        assert "ADJUDICATION" in text and "fine by me" in text
        assert "it is [red]$5[/]" in text and "(wrong_answer)" in text
        await pilot.press("r", "1")
        await settle(app, pilot)
        assert screen.list.count == 0
        assert any("No item left" in n.message for n in app._notifications)
    r = row(db, "c000003")
    assert (r["status"], r["adjudicated_by"], r["conflict"]) == ("rejected", "lead", 0)
    assert [(x["annotator"], x["action"], x["final"]) for x in log_rows(db)] == [
        ("ann", "accept", 0), ("bob", "reject", 0), ("lead", "reject", 1)]


async def test_bulk_names_decided_items_and_overwrites_only_when_asked(db):
    with Store(db) as s:
        review_log.record_decision(s, "c000001", "bob", "accept")
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        app.screen.apply_filter(review_queue.CandidateFilter(type="reasoning"))
        await settle(app, pilot)
        await pilot.press("R", "1")
        assert isinstance(app.screen, BulkConfirmScreen)
        text = screen_text(app)
        assert "Reject 5 items as wrong_answer?" in text
        assert "y applies to the 5 not decided yet" in text
        assert "1 already decided (by bob 1)" in text and "(6 in all)" in text
        await pilot.press("y")
        await settle(app, pilot)
        assert row(db, "c000001")["status"] == "accepted"
        assert row(db, "c000006")["status"] == "rejected"
        await pilot.press("A", "o")
        await settle(app, pilot)
    r = row(db, "c000001")
    assert (r["status"], r["adjudicated_by"]) == ("accepted", "ann")
    assert row(db, "c000006")["status"] == "accepted"


async def test_a_write_that_meets_a_locked_database_is_kept_and_retried(db, monkeypatch):
    import sqlite3

    import builder.store.db as store_db

    monkeypatch.setattr(store_db, "BUSY_TIMEOUT_MS", 200)
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        locker = sqlite3.connect(db, isolation_level=None)
        locker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        await pilot.press("a")
        for _ in range(50):
            await pilot.pause(0.05)
            if any("Not saved yet" in (n.title or "") for n in app._notifications):
                break
        messages = [n.message for n in app._notifications]
        assert any("accept of c000000 “Question 0?”" in m and "retrying" in m
                   for m in messages), messages
        assert row(db, "c000000")["status"] == "pending"
        assert app.screen.list.overlay["c000000"] == "accepted"  # still shown as decided
        locker.execute("ROLLBACK")
        locker.close()
        await settle(app, pilot)
        assert row(db, "c000000")["status"] == "accepted"
    assert app.unsaved() == []


async def test_kb_search_highlights_matches_and_shows_text_as_data(evil_db):
    app = ReviewApp(evil_db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("K")
        await pilot.pause()
        assert isinstance(app.screen, KBSearchScreen)
        await pilot.press("ctrl+u", *"forty boom", "enter")
        await pilot.pause()
        search = app.screen.query_one(ChunkSearch)
        assert [r["id"] for r in search.rows] == ["doc0.md#0"]
        text, spans = search.rows[0]["text"], search.rows[0]["spans"]
        assert sorted(text[a:b].lower() for a, b in spans) == ["boom", "forty"]
        shown = screen_text(app)
        assert "[@click=app.quit]boom[/]" in shown and "␛]0;pwned" in shown
        await pilot.press("space")  # mark it relevant (for a screen that needs marks)
        assert search.marked == ["doc0.md#0"]
        await pilot.press("escape")
        assert isinstance(app.screen, ReviewScreen)


TYPICAL_CHECKS = [{"check": name, "passed": True, "reason": reason, "source": source}
                  for name, reason, source in (
                      ("evidence_in_chunk", "quoted", "code"), ("numbers_grounded", "", "code"),
                      ("answer_kind", "how many -> an amount", "code"), ("standalone", "", "code"),
                      ("names_subject", "", "code"), ("not_tautology", "", "code"),
                      ("round_trip", "the reader answered 'forty-two'", "llm"))]


def typical(db, long_answer: bool = False) -> None:
    """Questions sharing a long beginning, a sentence of answer, seven checks."""
    with Store(db) as s:
        for i, end in enumerate(("carry over into the next calendar year?",
                                 "request without four weeks of notice?")):
            s.conn.execute(
                "UPDATE candidates SET question = ?, answer = ?, verification = ? WHERE id = ?",
                ("How many days of unused annual leave may an employee " + end,
                 "\n".join(f"Step {n} of a long answer." for n in range(10_000))
                 if long_answer and i == 0 else "Forty-two days, if the manager approves.",
                 json.dumps(TYPICAL_CHECKS), f"c{i:06d}"))


async def test_at_80x24_answer_evidence_and_verification_fit(db):
    typical(db)
    app = ReviewApp(db, "ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        lines = screen_text_lines(app)
        text = "\n".join(lines)
        assert len(lines) == 24
        assert lines[0].strip().startswith("golden review · ann · reviewed 0/30")
        assert lines[1].strip().startswith("filter: (30 shown) verdict=passed")
        for key in ("? Help", "a Accept", "n Next", "p Prev", "/ Search", "f Filter"):
            assert key in lines[-1].replace("a Accept", " a Accept"), (key, lines[-1])
        assert "Forty-two days, if the manager approves." in text  # the answer
        assert "Evidence" in text and "forty-two" in text  # the quote, in its chunk
        assert "Verification ✓ 7 of 7 passed" in text
        assert "round_trip: the reader answered 'forty-two'" in text
        # neighbours sharing their first 50 characters show where they differ
        assert "…carry over" in lines[2] and "…request" in lines[3]
        detail = app.screen.query_one("#detail")
        assert detail.max_scroll_y >= 0 and detail.scroll_y == 0
        await pilot.press("v")  # the whole sources, one key away
        await pilot.pause()
        sources = app.screen.query_one("#detail-sources")
        assert detail.region.y <= sources.region.y < detail.region.bottom - 2
        await pilot.press("f")
        await pilot.pause()
        dialog = app.screen.query_one(".dialog")
        assert dialog.region.height <= 24 and dialog.max_scroll_y > 0  # it scrolls
        dialog.scroll_end(animate=False)
        await pilot.pause()
        assert "Cancel" in screen_text(app)


async def test_a_10000_line_answer_is_clipped_and_w_shows_all_of_it(db):
    from review_tui.screens.full_text import FullTextScreen

    typical(db, long_answer=True)
    app = ReviewApp(db, "ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        body = str(app.screen.query_one("#detail-body").render())
        assert "Step 14 of a long answer." in body and "Step 15 of" not in body
        assert "… 9,985 more lines (w shows all)" in body
        assert "Verification ✓ 7 of 7 passed" in body  # still right below the answer
        await pilot.press("w")
        assert isinstance(app.screen, FullTextScreen)
        area = app.screen.query_one("#full-text-area")
        assert "Step 9999 of a long answer." in area.text
        await pilot.press("escape")
        assert isinstance(app.screen, ReviewScreen)


def screen_text_lines(app) -> list[str]:
    """The screen as lines of plain text (from the SVG screenshot)."""
    import html
    import re

    svg = app.export_screenshot()
    rows: dict[str, list[str]] = {}
    for attrs, y, text in re.findall(r'<text ([^>]*)y="([\d.]+)"[^>]*>([^<]*)</text>', svg):
        if "title" not in attrs:  # the window title above the terminal
            rows.setdefault(y, []).append(html.unescape(text).replace("\xa0", " "))
    return ["".join(parts).rstrip("\n")
            for _, parts in sorted(rows.items(), key=lambda kv: float(kv[0]))]


class TestSnapshots:
    def test_review_screen_with_untrusted_text(self, evil_db, snap_compare):
        async def settled(pilot):
            await settle(pilot.app, pilot)

        assert snap_compare(ReviewApp(evil_db, "ann"), terminal_size=SIZE, run_before=settled)

    @pytest.mark.parametrize("size", [(80, 24), (160, 50)])
    def test_review_screen(self, db, snap_compare, size):
        with Store(db) as s:
            review_log.set_overlap(s, Overlap(2, 0.5))
            for i, who in ((5, "bob"), (6, "cid")):
                review_log.record_decision(s, f"c{i:06d}", who, "accept")
            review_log.record_decision(s, "c000006", "bob", "reject", reason="trivial")
            for name in ("single_hop", "reasoning", "multi_hop", "comparative", "temporal",
                         "unanswerable", "ambiguous"):  # all seven types in the header
                s.conn.execute("UPDATE candidates SET type = ? WHERE id = (SELECT id FROM"
                               " candidates WHERE type <> ? ORDER BY id DESC LIMIT 1)",
                               (name, name))

        async def settled(pilot):
            await settle(pilot.app, pilot)

        assert snap_compare(ReviewApp(db, "ann"), terminal_size=size, run_before=settled)

    def test_typical_item_at_80x24(self, db, snap_compare):
        typical(db)

        async def settled(pilot):
            await settle(pilot.app, pilot)

        assert snap_compare(ReviewApp(db, "ann"), terminal_size=(80, 24), run_before=settled)

    def test_filter_dialog_at_80x24(self, db, snap_compare):
        async def opened(pilot):
            await settle(pilot.app, pilot)
            await pilot.press("f")
            await pilot.pause()

        assert snap_compare(ReviewApp(db, "ann"), terminal_size=(80, 24), run_before=opened)


KILL_SCRIPT = """
import asyncio, os, signal, sys
from review_tui.app import ReviewApp

async def main():
    app = ReviewApp(sys.argv[1], "ann")
    async with app.run_test(size=(120, 40)) as pilot:
        await app.screen.settle()  # the first item opens once its lease is taken
        await pilot.press("a", "r", "1", "s")
        await app.writer.drain()
        os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


def test_kill_9_after_deciding_loses_nothing(db, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "kill.py"
    script.write_text(KILL_SCRIPT)
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, str(script), db], cwd=root, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(root)})
    assert proc.returncode == -9
    assert [row(db, f"c00000{i}")["status"] for i in range(4)] == [
        "accepted", "rejected", "skipped", "pending"]
    assert [r["action"] for r in log_rows(db)] == ["accept", "reject", "skip"]


async def test_a_restart_after_kill_9_takes_its_leased_items_back_at_once(db, tmp_path):
    test_kill_9_after_deciding_loses_nothing(db, tmp_path)
    with Store(db) as s:  # the killed session's leases are still live (2 minutes)
        assert s.query("SELECT count(*) AS n FROM review_leases")[0]["n"] == 3
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.screen.current_id == "c000003"


@pytest.mark.parametrize("keys", ["n a", "n n p a", "n a n a", "n n a a"])
async def test_accept_after_moving_never_shows_the_decided_item_again(db, keys):
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        decided = []
        for key in keys.split():
            if key == "a":
                decided.append(screen.current_id)
            await pilot.press(key)
            if key == "a":  # the next item opens at once: never the one just decided
                assert screen.current_id not in decided
        await settle(app, pilot)
        assert screen.current_id not in decided
        assert screen.list.row(screen.list.cursor)["id"] == screen.current_id
        assert screen.list.cursor < 10  # not thrown to the end of the list
    assert [(r["candidate_id"], r["action"]) for r in log_rows(db)] == [
        (cid, "accept") for cid in decided]


def send_keys_at_once(app, keys: str) -> None:
    """Post every key event before the app handles the first: keys typed faster than it
    draws, or `tmux send-keys aaaa` (Pilot.press waits for idle after each key)."""
    from textual import events

    for key in keys:
        event = events.Key(key, key)
        event.set_sender(app)
        app._driver.send_message(event)


async def until(pilot, condition, seconds: float = 30.0) -> None:
    """Pause until `condition()` holds (a bounded wait, not a timing assertion)."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)


async def test_decision_keys_typed_ahead_are_queued_never_dropped(db):
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        send_keys_at_once(app, "a" * 30)
        await until(pilot, lambda: len(log_rows(db)) >= 30)
        await settle(app, pilot)
        assert not any("Not applied" in (n.title or "") for n in app._notifications)
    rows = log_rows(db)
    assert [(r["candidate_id"], r["action"]) for r in rows] == [
        (f"c{i:06d}", "accept") for i in range(30)]


async def test_keys_beyond_the_last_item_are_reported_not_dropped_silently(db):
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        send_keys_at_once(app, "a" * 33)  # 30 items: 3 keys too many
        await until(pilot, lambda: any("Not applied" in (n.title or "")
                                       for n in app._notifications))
        await settle(app, pilot)
        messages = [n.message for n in app._notifications if n.title == "Not applied"]
        assert messages and messages[0].startswith("3 key(s)")
    assert [r["action"] for r in log_rows(db)] == ["accept"] * 30


STARTUP_SCRIPT = """
import asyncio, sys
from review_tui.app import ReviewApp

MODULES = ("sqlite_utils", "numpy", "pydantic", "markdown_it", "review_tui.screens.help",
           "review_tui.screens.modals", "builder.store.review_log", "hashlib")

async def main():
    app = ReviewApp(sys.argv[1], "ann")
    async with app.run_test(size=(80, 24)) as pilot:
        # read when the app is ready (its first screen shown), not after settle: the screen's
        # poll (every 2 s) may refresh on a loaded machine, and what a refresh imports later
        # is allowed
        loaded = [m for m in MODULES if m in sys.modules]
        await app.screen.settle()
        assert app.screen.current_id == "c000000"
    print(" ".join(loaded))

asyncio.run(main())
"""


def test_the_first_frame_needs_neither_sqlite_utils_nor_pydantic_nor_dialogs(db, tmp_path):
    """What the first frame does not need is not imported before it (issue 32: the first
    frame was 3-4x a bare Textual app's, sqlite-utils, the help's Markdown and the dialogs
    among the causes; the decision log and hashlib are needed by the first decision and
    overlap only); opening an up-to-date database reads its schema version only."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from builder.store.db import SCHEMA
    from builder.store.migrations import known_migrations

    assert list(SCHEMA) == known_migrations()  # add a new migration's name to SCHEMA too
    script = tmp_path / "startup.py"
    script.write_text(STARTUP_SCRIPT)
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, str(script), db], cwd=root, timeout=120,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == []


async def test_the_first_item_is_open_when_the_screen_mounts(db):
    """The first claim is made at once on mount (no round trip through the writer thread,
    which waited behind the first frames): the first frame already shows the item, leased,
    even while the writer thread is busy."""
    import threading

    app = ReviewApp(db, "ann")
    busy = threading.Event()
    app.writer.submit(lambda store: busy.wait(10))  # the writer stuck on something else
    try:
        async with app.run_test(size=SIZE):
            screen = app.screen
            assert screen.current_id == "c000000"
            assert [cid for cid, _ in screen.offers] == ["c000001", "c000002"]
            with Store(db) as s:
                leased = s.query("SELECT candidate_id, annotator FROM review_leases"
                                 " ORDER BY candidate_id")
            assert leased == [{"candidate_id": f"c00000{i}", "annotator": "ann"}
                              for i in range(3)]
            busy.set()
    finally:
        busy.set()


async def test_the_first_frame_shown_holds_the_first_item(db, monkeypatch):
    """Every frame the app renders reaches the terminal, and the first one already shows the
    first item with its answer. (The screen pushed from the app's on_mount was laid out and
    rendered inside Textual's start-up batch, a frame thrown away; the first frame shown
    then held the list without the item, which came a layout and a footer build later.)"""
    import re

    from rich.console import Console
    from textual.app import App

    frames: list[tuple[int, str]] = []
    display = App._display
    console = Console(width=80, color_system=None, force_terminal=True)

    def recording(self, screen, renderable):
        if renderable is not None and hasattr(renderable, "render_segments"):
            text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "\n", renderable.render_segments(console))
            frames.append((self._batch_count, text))
        return display(self, screen, renderable)

    monkeypatch.setattr(App, "_display", recording)
    app = ReviewApp(db, "ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
    assert frames
    assert [batch for batch, _ in frames if batch] == []  # none rendered only to be dropped
    first = frames[0][1]
    assert "Question 0?" in first and "Answer 0" in first


def test_the_writer_opens_its_database_with_the_first_job_and_reports_a_failure(tmp_path):
    """The writer thread opens its connection when the first job comes (after the first
    frame), not when the app starts; a file it cannot open fails that job with the reason
    (before, the thread died at start and every job waited for ever)."""
    import sqlite3

    from builder.errors import InputError
    from review_tui.writer import DecisionWriter

    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE someone_elses (x)")
    writer = DecisionWriter(str(path))
    try:
        future = writer.submit(lambda store: "written")
        with pytest.raises(InputError, match="not a golden database"):
            future.result(timeout=10)
    finally:
        writer.close(timeout=5)


async def test_the_gc_is_on_again_once_the_first_frame_is_shown(db):
    """`golden review` starts with the cyclic GC off (review_tui/commands.py); the app turns
    it on again once its first frame is on screen, not when it quits."""
    import gc

    gc.disable()
    try:
        app = ReviewApp(db, "ann")
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert app.screen.current_id == "c000000"
            assert gc.isenabled()
    finally:
        gc.enable()


async def test_a_locked_database_at_start_leaves_the_first_claim_to_the_writer(db):
    """Another process holding the write lock: the UI does not wait on it (0.1 s at most)
    before its first frame; the writer claims once the lock is released."""
    other = Store(db)
    other.conn.execute("BEGIN IMMEDIATE")
    app = ReviewApp(db, "ann")
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert screen.current_id is None and screen._claims == 1  # waiting for the writer
            other.conn.execute("ROLLBACK")
            await settle(app, pilot)
            assert screen.current_id == "c000000"
    finally:
        other.close()


async def test_a_refresh_counted_while_the_app_closes_touches_no_widget(db):
    """The refresh counts in a thread; when the app closes meanwhile (its widgets being taken
    down), the count coming back must not look for the progress line (seen as NoMatches on a
    loaded machine, the first-frame test quitting right after its first refresh)."""
    import asyncio
    import threading

    app = ReviewApp(db, "ann")
    release = threading.Event()
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(app, pilot)
        real = screen._reader.refresh

        def slow(*args):
            release.wait(10)
            return real(*args)

        screen._reader.refresh = slow
        screen.schedule_refresh()
        await asyncio.sleep(0.05)  # the worker waits in its thread
        await screen.query_one("#progress").remove()  # what closing the app does to it
        release.set()
        await screen._refresh_worker.wait()
        assert screen._refresh_worker.error is None
