"""Documents and chunks: every SQL statement that reads or writes them (and `golden stats`).

Write guarantees:
- `save_document` replaces one document and its chunks in ONE transaction: either the new
  version is fully there or the old one is untouched. Chunks whose id survives keep their row
  (and so their facts); only vanished chunks are deleted, which cascades to their facts.
- `delete_document` removes a document and its chunks in one transaction.
The FTS index (`chunks_fts`) follows through the triggers created in migration m001.

Read helpers return plain dicts with JSON columns decoded: `heading_path` a list of strings,
`metadata` a dict (or None).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from builder.store.db import Store
from builder.store.jsoncols import decode, to_json
from builder.store.timeutil import utcnow

_BATCH = 500
_CHUNK_COLUMNS = ("id", "document_id", "seq", "text", "title", "heading_path", "char_start",
                  "char_end", "n_tokens", "language", "metadata")

_INSERT_FROM_JSON = (
    f"INSERT INTO chunks ({', '.join(_CHUNK_COLUMNS)}) SELECT "
    + ", ".join(f"json_extract(value, '$[{k}]')" for k in range(len(_CHUNK_COLUMNS)))
    + " FROM json_each(?)"
)
_INSERT_ROW = (f"INSERT INTO chunks ({', '.join(_CHUNK_COLUMNS)}) "
               f"VALUES ({', '.join('?' * len(_CHUNK_COLUMNS))})")


@dataclass
class ChunkChanges:
    added: int = 0
    updated: int = 0  # same id, new content (a JSONL record whose text or metadata changed)
    kept: int = 0  # same id, same content
    removed: int = 0


_JSON = ("heading_path", "metadata")


def _dumps(value: Any) -> str | None:
    return to_json(value, sort_keys=True)  # compared with the stored value on re-ingest


def _decode(row: dict) -> dict:
    return decode(row, _JSON)


def _batches(items: list, size: int = _BATCH) -> Iterable[list]:
    for k in range(0, len(items), size):
        yield items[k:k + size]


# -- ingest ---------------------------------------------------------------------------------

def document_index(store: Store) -> dict[str, dict]:
    """id -> {path, content_hash, metadata} for every document: what re-ingest compares."""
    rows = store.query("SELECT id, path, content_hash, metadata FROM documents")
    return {r["id"]: _decode(r) for r in rows}


def document_path(store: Store, document_id: str) -> str | None:
    """The file a stored document was ingested from (None: no such document). Called inside
    the write transaction of a re-check, so it sees what the other writers committed."""
    row = store.conn.execute("SELECT path FROM documents WHERE id = ?", (document_id,)).fetchone()
    return row[0] if row is not None else None


def chunk_owners(store: Store, ids: Iterable[str]) -> dict[str, str]:
    """chunk id -> document id, for those of `ids` that exist."""
    owners: dict[str, str] = {}
    for batch in _batches(list(ids)):
        sql = f"SELECT id, document_id FROM chunks WHERE id IN ({','.join('?' * len(batch))})"
        owners.update(store.conn.execute(sql, batch).fetchall())
    return owners


def save_document(store: Store, document: dict, chunks: list[dict], *,
                  claim_ids: bool = False) -> ChunkChanges:
    """Insert or replace `document` (a documents row as a dict, `metadata` as a dict) and make
    its chunks exactly `chunks` (dicts with the chunks columns except document_id; JSON columns
    as Python values). `claim_ids`: first delete chunks of OTHER documents that hold one of
    these ids (the caller has checked those documents are being rewritten in the same run).
    One transaction; returns how many chunks were added, kept and removed."""
    doc_id = document["id"]
    now = utcnow()
    rows = [
        (c["id"], doc_id, c["seq"], c["text"], c.get("title"), _dumps(c.get("heading_path")),
         c.get("char_start"), c.get("char_end"), c["n_tokens"], c.get("language"),
         _dumps(c.get("metadata")))
        for c in chunks
    ]
    changes = ChunkChanges()
    with store.write():
        conn = store.conn
        conn.execute(
            """
            INSERT INTO documents (id, path, title, format, content_hash, n_chars, n_tokens,
                                   language, metadata, ingested_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET
                path = excluded.path, title = excluded.title, format = excluded.format,
                content_hash = excluded.content_hash, n_chars = excluded.n_chars,
                n_tokens = excluded.n_tokens, language = excluded.language,
                metadata = excluded.metadata, updated_at = excluded.updated_at
            """,
            (doc_id, document["path"], document.get("title"), document["format"],
             document["content_hash"], document["n_chars"], document["n_tokens"],
             document.get("language"), _dumps(document.get("metadata")), now, now),
        )
        existing = {
            row[0]: row
            for row in conn.execute(
                f"SELECT {', '.join(_CHUNK_COLUMNS)} FROM chunks WHERE document_id = ?",
                (doc_id,))
        }
        new_ids = [r[0] for r in rows]
        wanted = set(new_ids)
        gone = [cid for cid in existing if cid not in wanted]
        for batch in _batches(gone):
            conn.execute(f"DELETE FROM chunks WHERE id IN ({','.join('?' * len(batch))})", batch)
        if claim_ids:
            for batch in _batches(new_ids):
                conn.execute(
                    f"DELETE FROM chunks WHERE document_id != ? AND id IN "
                    f"({','.join('?' * len(batch))})", [doc_id, *batch])
        inserts = [r for r in rows if r[0] not in existing]
        updates = [r[2:] + (r[0],) for r in rows if r[0] in existing and existing[r[0]] != r]
        # One statement for all rows: SQLite inserts them (and runs the FTS triggers) in C
        # with the GIL released once, instead of once per row as executemany does. But
        # json_extract cuts a string at a NUL character, so rows holding one are bound as
        # parameters instead, which keeps every character.
        plain, with_nul = [], []
        for r in inserts:
            (with_nul if any(isinstance(v, str) and "\x00" in v for v in r) else plain).append(r)
        if plain:
            conn.execute(_INSERT_FROM_JSON, (json.dumps(plain, ensure_ascii=False),))
        conn.executemany(_INSERT_ROW, with_nul)
        conn.executemany(
            "UPDATE chunks SET " + ", ".join(f"{c} = ?" for c in _CHUNK_COLUMNS[2:])
            + " WHERE id = ?", updates)
        changes.added, changes.removed, changes.updated = len(inserts), len(gone), len(updates)
        changes.kept = len(rows) - len(inserts) - len(updates)
    return changes


def delete_document(store: Store, document_id: str) -> int:
    """Remove a document and its chunks (their facts cascade); returns the chunks removed."""
    with store.write():
        removed = store.conn.execute("DELETE FROM chunks WHERE document_id = ?",
                                     (document_id,)).rowcount
        store.conn.execute("DELETE FROM documents WHERE id = ?", (document_id,))
    return removed


# -- reads for the rest of golden -----------------------------------------------------------

def list_documents(store: Store) -> list[dict]:
    """All documents, sorted by id."""
    return [_decode(r) for r in store.query("SELECT * FROM documents ORDER BY id")]


def chunks_by_id(store: Store, chunk_ids: Iterable[str]) -> dict[str, dict]:
    """id -> chunk (JSON columns decoded; `language` falls back to the document's) for the ids
    that exist. The one lookup of chunks by id: generation, verification, export and scoring
    all use it."""
    found: dict[str, dict] = {}
    for batch in _batches(sorted(set(chunk_ids))):
        sql = f"""SELECT c.id, c.document_id, c.seq, c.text, c.title, c.heading_path,
                         c.char_start, c.char_end, c.n_tokens,
                         COALESCE(c.language, d.language) AS language, c.metadata
                  FROM chunks c JOIN documents d ON d.id = c.document_id
                  WHERE c.id IN ({','.join('?' * len(batch))})"""
        for row in store.query(sql, batch):
            found[row["id"]] = _decode(row)
    return found


def get_chunks(store: Store, chunk_ids: list[str]) -> list[dict]:
    """The chunks with these ids, in the order given (ids that do not exist are left out)."""
    found = chunks_by_id(store, chunk_ids)
    return [found[i] for i in dict.fromkeys(chunk_ids) if i in found]


def list_chunks(store: Store, document_id: str | None = None, *, doc_glob: str | None = None,
                limit: int | None = None, offset: int = 0) -> list[dict]:
    """Chunks in document order (document id, seq, id): every chunks column, `language` falling
    back to the document's, and the document's `document_path`; JSON columns decoded.

    Optionally only those of one document (`document_id`), or of the documents whose id or
    path matches `doc_glob` (SQLite GLOB, e.g. `returns*`: `golden generate --docs`); paged
    with `limit`/`offset`. The one listing of chunks: ingest, generation and the tests use it."""
    where, params = [], []
    if document_id is not None:
        where.append("c.document_id = ?")
        params.append(document_id)
    if doc_glob:
        where.append("(d.id GLOB ? OR d.path GLOB ?)")
        params += [doc_glob, doc_glob]
    sql = f"""SELECT c.id, c.document_id, c.seq, c.text, c.title, c.heading_path, c.char_start,
                     c.char_end, c.n_tokens, COALESCE(c.language, d.language) AS language,
                     c.metadata, d.path AS document_path
              FROM chunks c JOIN documents d ON d.id = c.document_id
              {'WHERE ' + ' AND '.join(where) if where else ''}
              ORDER BY c.document_id, c.seq, c.id LIMIT ? OFFSET ?"""
    rows = store.query(sql, [*params, -1 if limit is None else limit, offset])
    return [_decode(r) for r in rows]


def count_chunks(store: Store) -> int:
    return store.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]


# -- golden stats ---------------------------------------------------------------------------

def document_summaries(store: Store) -> list[dict]:
    """Per document, sorted by id: id, title, format, language, n_tokens (of the document
    text), chunks (count) and chunk_tokens (sum over chunks, overlaps counted twice)."""
    return store.query(
        """
        SELECT d.id, d.title, d.format, d.language, d.n_tokens,
               COUNT(c.id) AS chunks, COALESCE(SUM(c.n_tokens), 0) AS chunk_tokens
        FROM documents d LEFT JOIN chunks c ON c.document_id = d.id
        GROUP BY d.id ORDER BY d.id
        """
    )

