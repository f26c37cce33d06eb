"""The review UI driven headless with Pilot: every decision lands in the DB, nothing is lost,
untrusted text stays text."""

from __future__ import annotations

import json

import pytest

from builder.store import Store
from builder.store import review_log, review_queue
from review_tui.app import ReviewApp
from review_tui.screens.calibrate import CalibrationScreen
from review_tui.screens.edit import EditScreen
from review_tui.screens.modals import BulkConfirmScreen, FilterScreen, RejectScreen
from review_tui.screens.review import ReviewScreen
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


def screen_text(app) -> str:
    """What is on screen, as plain text (from the SVG screenshot)."""
    import html
    import re

    svg = app.export_screenshot()
    return html.unescape(" ".join(re.findall(r">([^<>]*)</text>", svg))).replace("\xa0", " ")


async def test_accept_opens_next_and_is_written_at_once(db):
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
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
        screen = app.screen
        await pilot.press("f")
        assert isinstance(app.screen, FilterScreen)
        app.screen.query_one("#f-type").value = "temporal"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
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


async def test_decisions_survive_restart(db):
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "a", "s")
        # no settle: quitting must still write everything already decided
    assert [row(db, f"c00000{i}")["status"] for i in range(3)] == [
        "accepted", "accepted", "skipped"]
    app = ReviewApp(db, "ann")
    async with app.run_test(size=SIZE) as pilot:
        assert app.screen.current_id == "c000003"
        await pilot.press("u")
        await settle(app, pilot)
        assert row(db, "c000002")["status"] == "pending"


async def test_two_annotators_at_once_and_new_rows_appear(db):
    one, two = ReviewApp(db, "ann"), ReviewApp(db, "bob")
    async with one.run_test(size=SIZE) as p1, two.run_test(size=SIZE) as p2:
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


class TestSnapshots:
    def test_review_screen_with_untrusted_text(self, evil_db, snap_compare):
        async def settled(pilot):
            await settle(pilot.app, pilot)

        assert snap_compare(ReviewApp(evil_db, "ann"), terminal_size=SIZE, run_before=settled)


KILL_SCRIPT = """
import asyncio, os, signal, sys
from review_tui.app import ReviewApp

async def main():
    app = ReviewApp(sys.argv[1], "ann")
    async with app.run_test(size=(120, 40)) as pilot:
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
