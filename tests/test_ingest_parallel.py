"""Chunking in worker processes (large ingests) writes exactly what the serial path writes."""

from __future__ import annotations

import json
import multiprocessing
import threading
from pathlib import Path

import pytest

from builder.errors import InputError
from builder.ingest import pipeline
from builder.ingest.pipeline import ingest_paths
from builder.store import Store

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="parallel chunking needs the fork start method")


def _corpus(root: Path) -> None:
    for d in range(12):
        sub = root / f"part{d % 3}"
        sub.mkdir(parents=True, exist_ok=True)
        sections = []
        for s in range(6):
            sections.append(f"## Section {s} of doc {d}\n\n"
                            + " ".join(f"Sentence {k} about topic {d}-{s} goes here."
                                       for k in range(40 + 7 * d))
                            + "\n\n```python\n" + "\n".join(f"x{k} = f({k}, {d})"
                                                          for k in range(30)) + "\n```\n\n"
                            + "| a | b |\n|---|---|\n" + "\n".join(f"| {k} | {d} |"
                                                                   for k in range(20)))
        (sub / f"doc{d}.md").write_text(f"# Document {d}\n\n" + "\n\n".join(sections) + "\n",
                                        encoding="utf-8")
    (root / "notes.txt").write_text("Plain text.\n\nSecond paragraph, 北京 and 東京.\n",
                                    encoding="utf-8")
    (root / "page.html").write_text("<html><body><h1>Gift</h1><p>Cards never expire.</p>"
                                    "</body></html>", encoding="utf-8")
    (root / "faq.jsonl").write_text(
        json.dumps({"id": "faq-1", "text": "Do gift cards expire? No.", "source": "faq"})
        + "\n" + json.dumps({"id": 2, "text": "Plain record."}) + "\n", encoding="utf-8")


def _tables(db: Path) -> tuple:
    with Store(db) as store:
        docs = store.query("SELECT id, path, title, format, content_hash, n_chars, n_tokens, "
                           "language, metadata FROM documents ORDER BY id")
        chunks = store.query("SELECT * FROM chunks ORDER BY document_id, seq")
        rowids = store.query("SELECT id FROM chunks ORDER BY rowid")  # order of the writes
        fts = store.query("SELECT COUNT(*) AS n FROM chunks_fts WHERE chunks_fts MATCH 'topic'")
    return docs, chunks, rowids, fts


@pytest.fixture(params=["as the suite left it", "beside another thread"])
def other_thread(request):
    """Whether another thread runs in this process during the ingest. Workers are used either
    way (forked, or started by the forkserver), so the outcome never depends on threads left
    behind by earlier tests: that made this test fail once in a full run on a loaded machine,
    when a stray thread silently sent the ingest down the serial path."""
    if request.param == "as the suite left it":
        yield
        return
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join()


def test_parallel_ingest_writes_the_same_tables_as_serial(tmp_path, monkeypatch, other_thread):
    kb = tmp_path / "kb"
    _corpus(kb)
    monkeypatch.setattr(pipeline, "_BATCH_CHARS", 20_000)  # many small batches, a few ahead
    monkeypatch.setattr(pipeline, "_worker_count", lambda: 2)  # even on a 1-core machine
    built_here: dict[str, list[str]] = {"serial": [], "parallel": []}
    original = pipeline._build
    reports = {}
    for mode, threshold in (("serial", None), ("parallel", 1)):
        # Records the documents chunked in THIS process (a worker's list is its own copy).
        monkeypatch.setattr(pipeline, "_build",
                            lambda doc, *a: built_here[mode].append(doc.id) or original(doc, *a))
        with Store(tmp_path / f"{mode}.db") as store:
            reports[mode] = ingest_paths(store, [str(kb)], chunk_tokens=120, overlap=20,
                                         parallel_min_chars=threshold)
    assert len(built_here["serial"]) == 16 and built_here["parallel"] == []
    assert reports["serial"] == reports["parallel"]
    assert reports["parallel"].documents_added == 16
    assert _tables(tmp_path / "serial.db") == _tables(tmp_path / "parallel.db")

    # Re-ingest after edits: changed documents go through the workers again, same result.
    for d in (1, 5):
        path = kb / f"part{d % 3}" / f"doc{d}.md"
        path.write_text(path.read_text(encoding="utf-8").replace("Section 2", "Part two"),
                        encoding="utf-8")
    (kb / "part0" / "doc0.md").unlink()
    for mode, threshold in (("serial", None), ("parallel", 1)):
        with Store(tmp_path / f"{mode}.db") as store:
            reports[mode] = ingest_paths(store, [str(kb)], chunk_tokens=120, overlap=20,
                                         parallel_min_chars=threshold)
    assert reports["serial"] == reports["parallel"]
    assert reports["parallel"].documents_replaced == 2
    assert reports["parallel"].documents_removed == 1
    assert _tables(tmp_path / "serial.db") == _tables(tmp_path / "parallel.db")


def test_parallel_ingest_still_validates_before_writing(tmp_path, monkeypatch):
    kb = tmp_path / "kb"
    _corpus(kb)
    monkeypatch.setattr(pipeline, "_worker_count", lambda: 2)
    (kb / "zz.jsonl").write_text('{"id": "x", "text": ""}\n', encoding="utf-8")
    db = tmp_path / "g.db"
    with Store(db) as store:
        with pytest.raises(InputError, match="zz.jsonl"):
            ingest_paths(store, [str(kb)], parallel_min_chars=1)
        assert store.query("SELECT COUNT(*) AS n FROM documents") == [{"n": 0}]


def test_small_ingest_stays_in_one_process(tmp_path, monkeypatch):
    kb = tmp_path / "kb"
    _corpus(kb)

    def no_pool(*a, **k):
        raise AssertionError("no worker process for a small ingest")

    monkeypatch.setattr(pipeline, "ProcessPoolExecutor", no_pool)
    with Store(tmp_path / "g.db") as store:
        assert ingest_paths(store, [str(kb)]).documents_added == 16
