"""A tiny knowledge base and candidates written straight into the store, for the export tests.

The generator and the review UI fill these tables in real use; the export only reads them, so
its tests build exactly the rows they need here.
"""

from __future__ import annotations

import json
from pathlib import Path

from builder.store import Store

NOW = "2025-01-01T00:00:00.000000+00:00"

CHUNKS = {
    "doc-a#0": ("docs/a.md", "Paris is the capital of France."),
    "doc-a#1": ("docs/a.md", "The Seine flows through Paris."),
    "doc-b#0": ("docs/b.md", "Berlin is the capital of Germany."),
    "doc-b#1": ("docs/b.md", "The Spree flows through Berlin."),
}


def make_store(path: Path) -> Store:
    """A migrated store holding two documents of two chunks each."""
    store = Store(path)
    with store.write() as db:
        for doc_id, title in (("docs/a.md", "France"), ("docs/b.md", "Germany")):
            db["documents"].insert({
                "id": doc_id, "path": doc_id, "title": title, "format": "markdown",
                "content_hash": "h-" + doc_id, "n_chars": 60, "n_tokens": 12, "language": "en",
                "ingested_at": NOW, "updated_at": NOW,
            })
        for seq, (chunk_id, (doc_id, text)) in enumerate(CHUNKS.items()):
            db["chunks"].insert({
                "id": chunk_id, "document_id": doc_id, "seq": seq, "text": text,
                "n_tokens": 8, "language": "en",
            })
    return store


def candidate_row(cid: str, **over) -> dict:
    row = {
        "id": cid, "type": "single_hop", "question": f"Question {cid}?",
        "answer": f"Answer {cid}.", "language": "en", "difficulty": "easy",
        "chunk_ids": json.dumps(["doc-a#0"]),
        "evidence": json.dumps([{"chunk_id": "doc-a#0", "quote": "Paris is the capital",
                                 "start": 0, "end": 20}]),
        "seed_fact_id": None, "document_id": "docs/a.md", "generator_model": "gen-model",
        "verdict": "passed", "status": "accepted", "reviewer": "ann",
        "reviewed_at": NOW, "created_at": NOW, "updated_at": NOW,
    }
    for key, value in over.items():
        row[key] = json.dumps(value) if key in ("chunk_ids", "evidence") else value
    return row


def add_candidates(store: Store, rows: list[dict]) -> None:
    with store.write() as db:
        db["candidates"].insert_all(rows)


def add_tags(store: Store, pairs: list[tuple[str, str]]) -> None:
    with store.write() as db:
        db["candidate_tags"].insert_all([{"candidate_id": c, "tag": t} for c, t in pairs])


def test_factory_builds_a_store(tmp_path):
    store = make_store(tmp_path / "g.db")
    add_candidates(store, [candidate_row("c1")])
    assert store.query("SELECT count(*) AS n FROM candidates")[0]["n"] == 1
    assert store.query("SELECT count(*) AS n FROM chunks")[0]["n"] == 4
