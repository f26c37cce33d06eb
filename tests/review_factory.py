"""Builds review fixtures straight into a store: documents, chunks and candidates rows shaped
as the generator writes them (see m002). Shared by the review tests and bench/bench_review_tui.py.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from builder.store import Store

TYPES = ("single_hop", "reasoning", "multi_hop", "comparative", "temporal")
DIFFS = ("easy", "medium", "hard")
_T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def add_documents(store: Store, n_docs: int = 3, chunks_per_doc: int = 3) -> list[str]:
    """Documents `doc<i>.md` with chunks `doc<i>#<j>`; returns the chunk ids in order."""
    now = _T0.isoformat()
    docs, chunks = [], []
    for i in range(n_docs):
        doc_id = f"doc{i}.md"
        docs.append({"id": doc_id, "path": doc_id, "title": f"Document {i}", "format": "markdown",
                     "content_hash": f"h{i}", "n_chars": 100, "n_tokens": 20,
                     "ingested_at": now, "updated_at": now})
        for j in range(chunks_per_doc):
            chunks.append({
                "id": f"{doc_id}#{j}", "document_id": doc_id, "seq": j,
                "text": f"Chunk {j} of document {i}. The answer to item {i}-{j} is forty-two.",
                "title": f"Document {i}", "heading_path": json.dumps([f"Part {i}", f"Sec {j}"]),
                "n_tokens": 15,
            })
    with store.write() as db:
        db["documents"].insert_all(docs, pk="id", replace=True)
        db["chunks"].insert_all(chunks, pk="id", replace=True)
    return [c["id"] for c in chunks]


def candidate_row(i: int, chunk_ids: list[str], **overrides) -> dict:
    """One candidates row; `i` drives id, type, difficulty and created_at (strictly increasing)."""
    chunk = chunk_ids[i % len(chunk_ids)]
    created = (_T0 + timedelta(seconds=i)).isoformat(timespec="microseconds")
    row = {
        "id": f"c{i:06d}", "type": TYPES[i % len(TYPES)], "question": f"Question {i}?",
        "answer": f"Answer {i}", "language": "en", "difficulty": DIFFS[i % len(DIFFS)],
        "chunk_ids": json.dumps([chunk]), "hops": json.dumps([[chunk]]),
        "evidence": json.dumps([{"chunk_id": chunk, "quote": "forty-two", "start": None,
                                 "end": None}]),
        "document_id": chunk.split("#")[0],
        "verification": json.dumps([{"check": "grounded", "passed": True, "reason": "quoted",
                                     "source": "llm", "model": "m"}]),
        "verdict": "passed", "status": "pending", "created_at": created, "updated_at": created,
    }
    row.update(overrides)
    return row


def add_candidates(store: Store, n: int, start: int = 0, chunk_ids: list[str] | None = None,
                   batch: int = 5000, **overrides) -> list[str]:
    """Insert `n` candidates c<start>..; returns their ids."""
    chunk_ids = chunk_ids or add_documents(store)
    ids = []
    for lo in range(start, start + n, batch):
        rows = [candidate_row(i, chunk_ids, **overrides)
                for i in range(lo, min(lo + batch, start + n))]
        with store.write() as db:
            db["candidates"].insert_all(rows, pk="id")
        ids.extend(r["id"] for r in rows)
    return ids
