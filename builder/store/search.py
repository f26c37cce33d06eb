"""Lexical search over chunks with SQLite FTS5 (BM25): `search_chunks` for the baseline
retriever and for generation (related chunks, difficulty), `kb_search` for the reviewer's
knowledge-base search.

User and LLM text is never passed to FTS5 as query syntax: it is split into word tokens and each
is quoted, so `AND`, `NEAR(...)`, `*` or quotes in the text are searched as plain words.
"""

from __future__ import annotations

import re

from builder.store.db import Store

_WORD = re.compile(r"\w+", re.UNICODE)


def fts_query(text: str, *, mode: str = "OR", max_terms: int = 64) -> str:
    """Turn free text into a safe FTS5 MATCH expression of quoted terms joined by OR/AND."""
    terms = []
    seen = set()
    for word in _WORD.findall(text):
        w = word.lower()
        if w in seen:
            continue
        seen.add(w)
        terms.append('"' + w.replace('"', '""') + '"')
        if len(terms) >= max_terms:
            break
    return f" {mode} ".join(terms)


def search_chunks(
    store: Store, text: str, k: int = 10, *, exclude_ids: list[str] | None = None,
    document_id: str | None = None,
) -> list[dict]:
    """Top-k chunks for `text` by BM25 (best first). Each row: id, document_id, text, title,
    heading_path, score (higher is better). Empty list when the text has no searchable words."""
    query = fts_query(text)
    if not query:
        return []
    where = ["chunks_fts MATCH ?"]
    params: list = [query]
    if exclude_ids:
        where.append(f"c.id NOT IN ({','.join('?' * len(exclude_ids))})")
        params.extend(exclude_ids)
    if document_id is not None:
        where.append("c.document_id = ?")
        params.append(document_id)
    params.append(k)
    sql = f"""
        SELECT c.id, c.document_id, c.text, c.title, c.heading_path,
               -bm25(chunks_fts) AS score
        FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid
        WHERE {' AND '.join(where)}
        ORDER BY bm25(chunks_fts), c.id
        LIMIT ?
    """
    return store.query(sql, params)


MARK_OPEN, MARK_CLOSE = "\ue000", "\ue001"  # private-use characters: never markup


def kb_search(store: Store, text: str, k: int = 20, offset: int = 0) -> list[dict]:
    """Chunks matching any word of `text`, best first (BM25), for a person to read: id,
    document_id, document_title, title, heading_path (JSON text), text, score, and `spans`:
    the (start, end) offsets of the matched words in `text` (FTS5's own porter-stemmed
    matches, through `highlight()` with private-use markers; a chunk that itself contains a
    marker character falls back to a plain case-insensitive word match). Pages of `k` from
    `offset`. The words are quoted terms, never FTS5 syntax."""
    query = fts_query(text)
    if not query:
        return []
    rows = store.query(
        "SELECT c.id, c.document_id, COALESCE(d.title, d.id) AS document_title, c.title,"
        " c.heading_path, c.text, -bm25(chunks_fts) AS score,"
        " highlight(chunks_fts, 0, ?, ?) AS marked"
        " FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid"
        " LEFT JOIN documents d ON d.id = c.document_id"
        " WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts), c.id LIMIT ? OFFSET ?",
        [MARK_OPEN, MARK_CLOSE, query, k, offset])
    words = {w.lower() for w in _WORD.findall(text)}
    for row in rows:
        row["spans"] = _marked_spans(row["text"], row.pop("marked") or "", words)
    return rows


def _marked_spans(text: str, marked: str, words: set[str]) -> list[tuple[int, int]]:
    if MARK_OPEN not in text and MARK_CLOSE not in text:
        spans, pos, start = [], 0, None
        for ch in marked:
            if ch == MARK_OPEN:
                start = pos
            elif ch == MARK_CLOSE:
                if start is not None:
                    spans.append((start, pos))
                start = None
            else:
                pos += 1
        if pos == len(text):
            return spans
    return [(m.start(), m.end()) for m in _WORD.finditer(text) if m.group().lower() in words]
