"""The one row factory: documents, chunks and candidates rows shaped as ingest and the
generator write them (see migrations m001/m002), inserted straight into a store.

The review and export tests (and bench/bench_review_tui.py) need rows the generator and the
review UI would have written, without running them; everything they build goes through
`document_row`, `chunk_row` and `candidate_row`. JSON columns are given as Python values and
stored as JSON text. Each helper below only chooses values.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from builder.store import Store
from builder.vocabulary import DIFFICULTIES, TYPES

NOW = "2025-01-01T00:00:00.000000+00:00"
_T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
_JSON = ("heading_path", "metadata", "chunk_ids", "hops", "evidence", "verification",
         "difficulty_signals", "fact_ids", "prompts", "rejection_reasons")


def _as_stored(row: dict) -> dict:
    return {k: json.dumps(v, ensure_ascii=False) if k in _JSON and v is not None else v
            for k, v in row.items()}


def document_row(doc_id: str, **over) -> dict:
    """One documents row; `over` replaces any column."""
    row = {"id": doc_id, "path": doc_id, "title": doc_id, "format": "markdown",
           "content_hash": "h-" + doc_id, "n_chars": 100, "n_tokens": 20, "language": "en",
           "ingested_at": NOW, "updated_at": NOW}
    return _as_stored({**row, **over})


def chunk_row(chunk_id: str, document_id: str, text: str, seq: int = 0, **over) -> dict:
    """One chunks row of `document_id`; `over` replaces any column."""
    row = {"id": chunk_id, "document_id": document_id, "seq": seq, "text": text,
           "n_tokens": max(1, len(text) // 4), "language": "en"}
    return _as_stored({**row, **over})


def candidate_row(cid: str, chunk_ids: list[str], **over) -> dict:
    """One candidates row citing `chunk_ids` (one hop each), verified and pending review, with
    the columns the generator always writes; `over` replaces any column (review state too)."""
    row = {"id": cid, "type": "single_hop", "question": f"Question {cid}?",
           "answer": f"Answer {cid}.", "language": "en", "difficulty": "easy",
           "chunk_ids": chunk_ids, "hops": [[c] for c in chunk_ids],
           "document_id": chunk_ids[0].split("#")[0] if chunk_ids else None,
           "verdict": "passed", "status": "pending", "created_at": NOW, "updated_at": NOW}
    return _as_stored({**row, **over})


def insert_rows(store: Store, table: str, rows: list[dict], batch: int = 5000) -> None:
    """Insert `rows` into `table`, `batch` rows per transaction (documents and chunks replace a
    row with the same id; candidates must be new)."""
    for lo in range(0, len(rows), batch):
        with store.write() as db:
            db[table].insert_all(rows[lo:lo + batch], replace=table in ("documents", "chunks"))


# ---------------------------------------------------------------- review tests: numbered rows

REVIEW_TYPES = TYPES[:5]  # single_hop .. temporal: every kind with chunks and evidence
REVIEW_DIFFS = DIFFICULTIES


def add_documents(store: Store, n_docs: int = 3, chunks_per_doc: int = 3) -> list[str]:
    """Documents `doc<i>.md` with chunks `doc<i>.md#<j>`; returns the chunk ids in order."""
    docs, chunks = [], []
    for i in range(n_docs):
        doc_id = f"doc{i}.md"
        docs.append(document_row(doc_id, title=f"Document {i}", content_hash=f"h{i}",
                                 language=None))
        chunks += [chunk_row(f"{doc_id}#{j}", doc_id,
                             f"Chunk {j} of document {i}. The answer to item {i}-{j} is forty-two.",
                             j, title=f"Document {i}", heading_path=[f"Part {i}", f"Sec {j}"],
                             n_tokens=15, language=None)
                   for j in range(chunks_per_doc)]
    insert_rows(store, "documents", docs)
    insert_rows(store, "chunks", chunks)
    return [c["id"] for c in chunks]


def numbered_candidate(i: int, chunk_ids: list[str], **over) -> dict:
    """Candidate `c<i:06d>`: `i` drives its chunk, type, difficulty and created_at (strictly
    increasing)."""
    chunk = chunk_ids[i % len(chunk_ids)]
    created = (_T0 + timedelta(seconds=i)).isoformat(timespec="microseconds")
    row = dict(type=REVIEW_TYPES[i % len(REVIEW_TYPES)], question=f"Question {i}?",
               answer=f"Answer {i}", difficulty=REVIEW_DIFFS[i % len(REVIEW_DIFFS)],
               evidence=[{"chunk_id": chunk, "quote": "forty-two", "start": None, "end": None}],
               verification=[{"check": "grounded", "passed": True, "reason": "quoted",
                              "source": "llm", "model": "m"}],
               created_at=created, updated_at=created)
    return candidate_row(f"c{i:06d}", [chunk], **{**row, **over})


def add_candidates(store: Store, n: int, start: int = 0, chunk_ids: list[str] | None = None,
                   batch: int = 5000, **over) -> list[str]:
    """Insert `n` numbered candidates c<start>..; returns their ids."""
    chunk_ids = chunk_ids or add_documents(store)
    rows = [numbered_candidate(i, chunk_ids, **over) for i in range(start, start + n)]
    insert_rows(store, "candidates", rows, batch)
    return [r["id"] for r in rows]


# ---------------------------------------------------------------- export tests: a tiny KB

EXPORT_CHUNKS = {
    "doc-a#0": ("docs/a.md", "Paris is the capital of France."),
    "doc-a#1": ("docs/a.md", "The Seine flows through Paris."),
    "doc-b#0": ("docs/b.md", "Berlin is the capital of Germany."),
    "doc-b#1": ("docs/b.md", "The Spree flows through Berlin."),
}


def export_store(path) -> Store:
    """A migrated store holding two documents (France, Germany) of two chunks each."""
    store = Store(path)
    insert_rows(store, "documents", [
        document_row(doc_id, title=title, n_chars=60, n_tokens=12)
        for doc_id, title in (("docs/a.md", "France"), ("docs/b.md", "Germany"))])
    insert_rows(store, "chunks", [
        chunk_row(chunk_id, doc_id, text, seq, n_tokens=8)
        for seq, (chunk_id, (doc_id, text)) in enumerate(EXPORT_CHUNKS.items())])
    return store


def accepted_candidate(cid: str, **over) -> dict:
    """A candidate a reviewer accepted, citing "Paris is the capital" in doc-a#0."""
    row = dict(chunk_ids=["doc-a#0"],
               evidence=[{"chunk_id": "doc-a#0", "quote": "Paris is the capital", "start": 0,
                          "end": 20}],
               document_id="docs/a.md", generator_model="gen-model", status="accepted",
               reviewer="ann", reviewed_at=NOW)
    row.update(over)
    return candidate_row(cid, **row)


def add_tags(store: Store, pairs: list[tuple[str, str]]) -> None:
    insert_rows(store, "candidate_tags", [{"candidate_id": c, "tag": t} for c, t in pairs])
