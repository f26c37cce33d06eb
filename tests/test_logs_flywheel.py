"""From a production log file to reviewed golden items that `golden score` uses: import,
evaluate, promote, review (reference written or accepted, chunks marked), export with
provenance, score. And privacy: planted personal data never reaches the database file, its WAL,
a report or an export."""

from __future__ import annotations

import json

import pytest

from builder.errors import ReviewError
from builder.store import Store
from builder.store.review_log import record_decision
from review_tui.app import ReviewApp
from review_tui.screens.kb_search import KBSearchScreen
from review_tui.screens.review import ReviewScreen
from review_tui.widgets.chunk_search import ChunkSearch
from tests.support.logs import PLANTED, log_line, patch_judge, write_lines

KB = [
    {"id": "returns#1", "text": "Jackets can be returned within 30 days of purchase.",
     "source": "returns.md"},
    {"id": "returns#2", "text": "Worn items are refunded as store credit only.",
     "source": "returns.md"},
    {"id": "tents#1", "text": "Tents carry a two-year warranty against defects.",
     "source": "tents.md"},
    {"id": "hours#1", "text": "The store opens at 9 and closes at 17 on weekdays.",
     "source": "contact.md"},
]

LOGS = [
    # a thumbs-down with personal data everywhere: promoted, reviewed, exported
    log_line("req-1", f"Can I return a worn jacket? Write to {PLANTED['email']} or call "
             f"{PLANTED['phone']}", "Worn jackets are refunded in cash within 90 days.",
             at="2025-03-02T09:00:00Z", ids=["returns#1", "returns#2"],
             session_id=f"user {PLANTED['email']}",
             feedback={"thumbs": "down", "reason": f"they charged {PLANTED['card']} twice"}),
    # a good answer the user liked: its answer is proposed as the reference
    log_line("req-2", "What warranty do tents have?", "Tents carry a two-year warranty.",
             at="2025-03-02T10:00:00Z", ids=["tents#1"], feedback={"thumbs": "up"}),
    # a refusal with nothing useful retrieved: a knowledge-base gap
    log_line("req-3", "Do you sell kayaks?", "I cannot find that in the sources.",
             at="2025-03-03T10:00:00Z", ids=["hours#1"], feedback={"handed_off": True}),
    # the same question as req-2, asked again later: the newer thumbs-up is promoted first,
    # req-2 is linked to it, not added twice
    log_line("req-4", "What warranty do tents have ?", "Tents carry a two-year warranty.",
             at="2025-03-04T10:00:00Z", ids=["tents#1"], feedback={"thumbs": "up"}),
]


@pytest.fixture
def world(tmp_path, golden_cli, monkeypatch):
    """A KB and the log above imported, evaluated (scripted judge) and promoted. A connection
    stays open throughout, so the WAL file is not checkpointed away before it is read."""
    kb = write_lines(tmp_path / "kb.jsonl", KB)
    assert golden_cli("ingest", str(kb))[0] == 0
    keeper = Store("golden.db")
    logs = write_lines(tmp_path / "logs.jsonl", LOGS)
    code, out, err = golden_cli("logs", "import", str(logs))
    assert code == 0, err
    assert "scrubbed before storage: 1 e-mail address" in out or "e-mail addresses" in out
    patch_judge(monkeypatch)
    code, out, err = golden_cli("logs", "evaluate", "--rate", "1", "--out", "logs.html",
                                "--out", "logs.json", "--out", "logs.md")
    assert code == 0, err
    code, out, err = golden_cli("logs", "promote")
    assert code == 0, err
    yield {"promote": out, "keeper": keeper}
    keeper.close()


def candidates() -> dict[str, dict]:
    with Store("golden.db") as store:
        rows = store.query("SELECT * FROM candidates WHERE type = 'production'")
    return {json.loads(r["provenance"])["record_id"]: r for r in rows}


def test_promotion_links_near_duplicates_and_keeps_provenance(world):
    assert "added 3 production candidates" in world["promote"]
    assert "1 records linked to existing items as near-duplicates" in world["promote"]
    made = candidates()
    assert set(made) == {"req-1", "req-3", "req-4"}
    bad, good, gap = made["req-1"], made["req-4"], made["req-3"]
    assert bad["answer"] == "" and good["answer"] == "Tents carry a two-year warranty."
    prov = json.loads(bad["provenance"])
    assert prov["at"] == "2025-03-02T09:00:00.000000+00:00"
    assert prov["cause"] == "generation" and {"unfaithful", "thumbs_down"} <= set(prov["signals"])
    assert prov["useful_chunk_ids"] == ["returns#2"]  # the only chunk sharing a word
    assert json.loads(gap["provenance"])["cause"] == "knowledge base"
    with Store("golden.db") as store:
        links = store.query("SELECT record_id, candidate_id FROM production_links"
                            " ORDER BY record_id")
    assert [(x["record_id"], x["candidate_id"]) for x in links] == [
        ("req-1", bad["id"]), ("req-2", good["id"]), ("req-3", gap["id"]),
        ("req-4", good["id"])]
    assert json.loads(good["provenance"])["at"].startswith("2025-03-04")


def test_promoting_again_adds_nothing(world, golden_cli):
    code, out, _ = golden_cli("logs", "promote")
    assert code == 0 and "added 0 production candidates" in out
    assert "4 picked records were promoted before" in out


def test_a_production_item_is_exported_only_after_review(world, golden_cli, tmp_path):
    bad = candidates()["req-1"]["id"]
    with Store("golden.db") as store:
        with pytest.raises(ReviewError, match="needs a reference answer"):
            record_decision(store, bad, "ann", "accept")
        record_decision(store, bad, "ann", "edit",
                        edits={"answer": "Worn jackets are refunded as store credit only."})
        with pytest.raises(ReviewError, match="relevant chunks marked"):
            record_decision(store, bad, "ann", "accept")
        with pytest.raises(ReviewError, match="no chunk 'nope#1'"):
            record_decision(store, bad, "ann", "edit", edits={"chunk_ids": ["nope#1"]})
        record_decision(store, bad, "ann", "edit", edits={"chunk_ids": ["returns#2",
                                                                        "returns#1"]})
        assert record_decision(store, bad, "ann", "accept") is not None
    out = tmp_path / "golden.jsonl"
    code, stdout, err = golden_cli("export", "--out", str(out), "--status", "accepted,pending")
    assert code == 0, err
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert [i["id"] for i in items] == [bad]  # pending production items never leave
    item = items[0]
    assert item["type"] == "production" and item["edited"] == ["answer", "chunks"]
    assert item["relevant_chunk_ids"] == ["returns#2", "returns#1"]
    assert item["expected_answer"] == "Worn jackets are refunded as store credit only."
    prov = item["provenance"]
    assert prov["record_id"] == "req-1" and prov["at"].startswith("2025-03-02")
    assert prov["cause"] == "generation" and "thumbs_down" in prov["signals"]
    assert prov["linked_records"] == []
    # the item is a golden item like any other: `golden score` uses it
    run = write_lines(tmp_path / "run.jsonl", [{"query_id": bad,
                                                "retrieved_ids": ["returns#2", "tents#1"]}])
    code, stdout, err = golden_cli("score", "--golden", str(out), "--run", str(run),
                                   "--no-judge", "--out", str(tmp_path / "s.json"))
    assert code == 0, err
    report = json.loads((tmp_path / "s.json").read_text())
    assert report["per_query"][bad]["metrics"]["recall@10"] == 0.5
    assert list(report["breakdowns"]["type"]) == ["production"]


def test_a_thumbs_up_answer_is_accepted_as_the_reference_with_its_links(world, golden_cli,
                                                                         tmp_path):
    good = candidates()["req-4"]["id"]
    with Store("golden.db") as store:
        record_decision(store, good, "ann", "edit", edits={"chunk_ids": ["tents#1"]})
        record_decision(store, good, "ann", "accept")
    out = tmp_path / "golden.jsonl"
    assert golden_cli("export", "--out", str(out), "--format", "deepeval")[0] == 0
    item = json.loads(out.read_text())
    assert item["expected_output"] == "Tents carry a two-year warranty."
    meta = item["additional_metadata"]
    assert meta["type"] == "production" and meta["chunk_ids"] == ["tents#1"]
    assert [r["record_id"] for r in meta["provenance"]["linked_records"]] == ["req-2"]


def test_a_knowledge_base_gap_becomes_an_unanswerable_item(world):
    gap = candidates()["req-3"]["id"]
    with Store("golden.db") as store:
        record_decision(store, gap, "ann", "edit",
                        edits={"answer": "We do not sell kayaks.", "chunk_ids": []})
        with pytest.raises(ReviewError, match="no relevant chunk is marked"):
            record_decision(store, gap, "ann", "accept")
        record_decision(store, gap, "ann", "edit", edits={"type": "unanswerable"})
        assert record_decision(store, gap, "ann", "accept") is not None


def test_planted_personal_data_never_reaches_the_db_the_wal_a_report_or_an_export(
        world, golden_cli, tmp_path):
    bad = candidates()["req-1"]["id"]
    with Store("golden.db") as store:
        record_decision(store, bad, "ann", "edit", edits={"answer": "Store credit only.",
                                                          "chunk_ids": ["returns#2"]})
        record_decision(store, bad, "ann", "accept")
        # the scrubbed text is there (so this test looks where the data would be)
        row = store.query("SELECT query, session_id, feedback_reason FROM log_records"
                          " WHERE id = 'req-1'")[0]
        calls = store.query("SELECT count(*) AS n FROM llm_calls")[0]["n"]
    assert row["query"] == "Can I return a worn jacket? Write to [EMAIL] or call [PHONE]"
    assert row["session_id"].startswith("user [EMAIL]~")
    assert row["feedback_reason"] == "they charged [CARD] twice"
    for fmt in ("native", "ragas", "deepeval", "seed"):
        assert golden_cli("export", "--out", str(tmp_path / f"{fmt}.jsonl"),
                          "--format", fmt)[0] == 0
    wal = tmp_path / "golden.db-wal"
    assert wal.exists() and wal.stat().st_size > 0
    files = [tmp_path / "golden.db", wal, *tmp_path.glob("*.jsonl"), *tmp_path.glob("logs.*"),
             *tmp_path.glob("*.manifest.json")]
    planted = [v.encode() for v in PLANTED.values()]
    planted += [PLANTED["card"].replace(" ", "").encode(), b"jane.roe"]
    for path in files:
        if path.name == "logs.jsonl":  # the input itself
            continue
        data = path.read_bytes()
        for raw in planted:
            assert raw not in data, f"{raw!r} found in {path.name}"
    assert calls == 0  # the scripted judge makes no client call; the real one: test_logs_evaluate
    export = (tmp_path / "native.jsonl").read_text()
    assert "[EMAIL]" in export and "[PHONE]" in export


async def test_review_ui_marks_chunks_and_writes_the_reference_before_accepting(world):
    bad = candidates()["req-1"]["id"]
    with Store("golden.db") as store:  # only the production items in this queue
        store.conn.execute("UPDATE candidates SET verdict = 'failed' WHERE type <> 'production'")
    app = ReviewApp("golden.db", "ann")
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        await screen.settle()
        await pilot.pause()
        while screen.current_id != bad:
            await pilot.press("n")
            await screen.settle()
        detail = str(screen.query_one("#detail-body").render())
        assert "From production" in detail and "none marked yet" in detail
        await pilot.press("a")  # not ready: nothing is sent
        await screen.settle()
        assert screen.current_id == bad
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, KBSearchScreen)
        search = app.screen.query_one(ChunkSearch)
        assert search.marked == ["returns#2"]  # the chunk the judge found useful, suggested
        await pilot.press("ctrl+u", *"jackets returned within days", "enter")
        await pilot.pause()
        assert search.rows[0]["id"] == "returns#1"
        await pilot.press("space", "escape")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        await screen.settle()
        await pilot.press("e")
        await pilot.pause()
        area = app.screen.query_one("#edit-answer")
        area.text = "Worn jackets are refunded as store credit only."
        await pilot.press("ctrl+s")
        await screen.settle()
        await pilot.press("a")
        await screen.settle()
    row = candidates()["req-1"]
    assert row["status"] == "accepted" and row["reviewer"] == "ann"
    assert json.loads(row["edit_chunk_ids"]) == ["returns#2", "returns#1"]
    assert row["edit_answer"] == "Worn jackets are refunded as store credit only."
