"""The ingest faults of the new-user audit (issue 14), each a one-line error or a correct
result: numbering follows the issue (6, tables and fences, is in test_ingest_chunker.py)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from builder.ingest.blocks import markdown_blocks
from builder.ingest.chunker import chunk_blocks
from builder.ingest.tokens import count_tokens, encoding
from builder.store import Store
from builder.store.documents import list_chunks, list_documents
from tests.test_ingest_cli import snapshot


def test_1_a_file_keeps_its_id_whichever_folder_is_named(golden_cli, tmp_path):
    kb = tmp_path / "kb"
    (kb / "sub").mkdir(parents=True)
    (kb / "sub" / "page.html").write_text("<h1>Gift</h1><p>Cards never expire.</p>")
    (kb / "sub" / "faq.jsonl").write_text(
        json.dumps({"id": "f1", "text": "No source here."}) + "\n"
        + json.dumps({"id": "f2", "text": "Named source.", "source": "faq/named"}) + "\n")
    (kb / "top.md").write_text("# Top\n\nText.\n")
    db = tmp_path / "g.db"
    assert golden_cli("--db", str(db), "ingest", str(kb))[0] == 0
    before = snapshot(db)
    ids = [d["id"] for d in before[0]]
    assert ids == ["faq/named", "sub/faq.jsonl", "sub/page.html", "top.md"]
    for again in (kb / "sub", kb / "sub" / "page.html", kb / "sub" / "faq.jsonl", kb):
        code, out, err = golden_cli("--db", str(db), "ingest", str(again))
        assert code == 0, err
        assert " 0 added" in out and " 0 replaced" in out and "0 removed" in out, (again, out)
        assert snapshot(db) == before
    # a file changed and re-ingested through its own folder replaces itself, under its id
    (kb / "sub" / "page.html").write_text("<h1>Gift</h1><p>Cards expire after 5 years.</p>")
    code, out, _ = golden_cli("--db", str(db), "ingest", str(kb / "sub"))
    assert "documents: 0 added, 2 unchanged, 1 replaced, 0 removed" in out
    with Store(db) as store:
        assert [d["id"] for d in list_documents(store)] == ids


def test_2_a_nul_in_jsonl_text_is_stored_whole(golden_cli, tmp_path):
    kb = tmp_path / "kb.jsonl"
    text = "before\u0000after the nul, with searchable words"
    kb.write_text(json.dumps({"id": "n1", "text": text, "title": "t\u0000x"}) + "\n"
                  + json.dumps({"id": "n2", "text": "plain"}) + "\n")
    db = tmp_path / "g.db"
    assert golden_cli("--db", str(db), "ingest", str(kb))[0] == 0
    with Store(db) as store:
        chunks = {c["id"]: c for c in list_chunks(store)}
        assert chunks["n1"]["text"] == text and chunks["n1"]["title"] == "t\u0000x"
        assert chunks["n2"]["text"] == "plain"
        assert store.query("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'searchable'")
    code, out, _ = golden_cli("--db", str(db), "ingest", str(kb))
    assert "1 unchanged" in out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_3_a_fifo_is_skipped_and_counted_never_opened(golden_cli, tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "doc.md").write_text("# Doc\n\nText.\n")
    fifo = kb / "stream.md"
    os.mkfifo(fifo)
    opened = threading.Event()

    def unblock() -> None:
        # If ingest opened the FIFO for reading it would wait forever: after 20 s open the
        # other end, so a regression fails this test instead of hanging the suite.
        if not opened.wait(20):
            with open(fifo, "w"):
                pass

    guard = threading.Thread(target=unblock, daemon=True)
    guard.start()
    try:
        code, out, err = golden_cli("--db", str(tmp_path / "g.db"), "ingest", str(kb))
    finally:
        opened.set()
    assert code == 0, err
    assert "files: 1 read, skipped 1 not a regular file" in out
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "ingest", str(fifo))
    assert code == 2
    assert err == f"golden: error: {fifo}: not a regular file or a folder (a FIFO, socket or " \
                  f"device?)\n"


def test_4_a_lone_surrogate_in_jsonl_is_one_line_with_file_and_line(golden_cli, tmp_path):
    db = tmp_path / "g.db"
    assert golden_cli("--db", str(db), "ingest", str(_md(tmp_path)))[0] == 0
    before = snapshot(db)
    kb = tmp_path / "kb.jsonl"
    kb.write_text('{"id": "ok", "text": "fine \\ud83d\\ude00 pair"}\n'
                  '{"id": "bad", "text": "broken \\ud800 escape"}\n')
    code, _, err = golden_cli("--db", str(db), "ingest", str(kb))
    assert code == 2
    assert err == (f'golden: error: {kb}:2: field "text": lone surrogate (a \\ud800-\\udfff '
                   f'escape without its pair is not Unicode text)\n')
    assert snapshot(db) == before
    kb.write_text('{"id": "x", "text": "t", "metadata": {"note": ["a", "b\\udc00"]}}\n')
    code, _, err = golden_cli("--db", str(db), "ingest", str(kb))
    assert code == 2 and ':1: field "metadata.note.1": lone surrogate' in err


def _md(tmp_path: Path) -> Path:
    kb = tmp_path / "md"
    kb.mkdir(exist_ok=True)
    (kb / "a.md").write_text("# A\n\nSome text.\n")
    return kb


def test_5_a_long_line_without_sentence_breaks_is_chunked_in_linear_work(monkeypatch):
    """Every chunk is valid, and the characters the tokenizer is asked to encode grow in
    proportion to the line (the cuts are counted incrementally, pieces encoded once or twice),
    so 4 MB costs twice what 2 MB does. (Times are in bench/bench_long_line.py.)"""
    enc = encoding()
    encoded = [0]
    real = enc.encode_ordinary

    class Counting:
        def __getattr__(self, name):
            return getattr(enc, name)

        def encode_ordinary(self, text):
            encoded[0] += len(text)
            return real(text)

    from builder.ingest import chunker
    monkeypatch.setattr(chunker, "encoding", lambda: Counting())
    work = {}
    for size in (250_000, 500_000):
        text = "".join("abcdefghijklmnopqrstuvwxyz0123456789+/"[(k * 7) % 38]
                       for k in range(size))
        encoded[0] = 0
        result = chunk_blocks(text, markdown_blocks(text), chunk_tokens=400, overlap=50)
        work[size] = encoded[0] / size
        assert "".join(c.text for c in result.chunks) == text
        for c in result.chunks[:50]:
            assert text[c.char_start:c.char_end] == c.text
            assert c.n_tokens == count_tokens(c.text) <= 400
    assert work[500_000] <= work[250_000] * 1.1
    assert work[500_000] < 8


def test_7_a_folder_with_nothing_to_ingest_is_an_error(golden_cli, tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "data.csv").write_text("a,b\n")
    (kb / ".hidden.md").write_text("# x\n")
    db = tmp_path / "g.db"
    code, _, err = golden_cli("--db", str(db), "ingest", str(kb))
    assert code == 2
    assert err.startswith(f"golden: error: {kb}: no files to ingest in this folder (skipped "
                          f"1 hidden, 1 unsupported type); golden reads .docx, ")
    code, _, err = golden_cli("--db", str(db), "ingest", str(kb), "--exclude", "*.md")
    assert code == 2
    # a folder whose ingested files were all deleted is not an error: they are removed
    (kb / "doc.md").write_text("# Doc\n\nText.\n")
    assert golden_cli("--db", str(db), "ingest", str(kb))[0] == 0
    (kb / "doc.md").unlink()
    code, out, err = golden_cli("--db", str(db), "ingest", str(kb))
    assert code == 0, err
    assert "documents: 0 added, 0 unchanged, 0 replaced, 1 removed" in out


def test_7_a_changed_jsonl_record_is_reported_as_updated(golden_cli, tmp_path):
    kb = tmp_path / "kb.jsonl"
    records = [{"id": f"r{k}", "text": f"Record {k} text."} for k in range(3)]
    kb.write_text("".join(json.dumps(r) + "\n" for r in records))
    db = tmp_path / "g.db"
    assert golden_cli("--db", str(db), "ingest", str(kb))[0] == 0
    records[1]["text"] = "Record 1 now says something else."
    kb.write_text("".join(json.dumps(r) + "\n" for r in records[:2]))  # r2 dropped
    code, out, _ = golden_cli("--db", str(db), "ingest", str(kb))
    assert code == 0
    assert "chunks: 0 added, 1 updated, 1 kept, 1 removed" in out
    with Store(db) as store:
        assert [c["text"] for c in list_chunks(store)] == ["Record 0 text.",
                                                           "Record 1 now says something else."]
