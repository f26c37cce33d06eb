"""`ingest_paths`: bring the store in line with the files under the given paths.

All or nothing for bad input: every file is read, decoded and (JSONL) validated, and every
conflict checked, BEFORE the first write. The first problem raises `InputError` (one line naming
the file and line; the CLI exits 2) and the database is left exactly as it was. Only then are
documents written, each in its own transaction (`save_document` / `delete_document`), so other
processes (a review UI) never wait long for the lock, and an interrupted run leaves whole
documents: running it again finishes the job.

Two ingests started together: the conflict checks are made again inside the write
transactions (BEGIN IMMEDIATE, which serialises writers): all of them in the first one, and
each document's own in the transaction that writes it. So a document is never silently
replaced by one from another folder with the same name: of two ingests of such folders, the
one that writes second is refused as if it had started after the other (exit 2, nothing
written when the folders hold the same names; when each also has files of its own and both got
past the first transaction, the later one stops at its first conflict with whole documents
written before it).

Idempotent and incremental:
- unchanged document (same content hash, same chunking settings, same file): skipped without
  being parsed or chunked, so re-ingesting an unchanged corpus costs a read and a hash per file;
- changed document: re-chunked; chunks whose id is unchanged keep their rows (and facts);
- document whose file is gone from a folder given on the command line: removed with its chunks
  (documents ingested from elsewhere are never touched). Files skipped by --include/--exclude
  but still on disk are kept. A JSONL file that no longer has a `source` removes that document.

Document ids: a file's document id is its path relative to the folder given on the command
line, the first time it is ingested; after that the file keeps the id it has in the database,
however it is named (ingesting `kb/` then `kb/sub/` does not duplicate `kb/sub/page.html` as
`page.html`). The same holds for the records without a `source` of a JSONL file.

Chunk ids: a file's chunks get `<document id>#<first 12 hex of sha256(chunk text)>` (with `-2`,
`-3`... for repeated identical text in one document), stable across runs; JSONL records keep
their own `id` verbatim. A chunk id used by two documents is an input error.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from builder.errors import InputError
from builder.ingest.blocks import markdown_blocks, text_blocks
from builder.ingest.chunker import chunk_blocks
from builder.ingest.discover import Discovery, discover
from builder.ingest.document_text import pages_of
from builder.ingest.extract import extract
from builder.ingest.loaders import FORMATS, LoadedDocument, load_file
from builder.ingest.tokens import encoding
from builder.store import Store
from builder.text.language import detect_language
from builder.store.documents import (
    chunk_owners, delete_document, document_index, document_path, save_document,
)

CHUNKER_VERSION = 3  # 2: code fences and tables are never split; 3: Markdown front matter dropped
# Chunk in worker processes (while this one writes) once the documents to (re)chunk hold at
# least this many characters; smaller ingests stay in one process (starting workers costs more).
PARALLEL_MIN_CHARS = 4_000_000
_BATCH_CHARS = 1_000_000  # characters of documents per task sent to a worker
_IN_FLIGHT = 3  # tasks per worker queued ahead of the writer (bounds memory)


@dataclass
class IngestReport:
    """What one `golden ingest` changed."""

    files: int = 0
    documents_added: int = 0
    documents_unchanged: int = 0
    documents_replaced: int = 0
    documents_removed: int = 0
    chunks_added: int = 0
    chunks_updated: int = 0
    chunks_kept: int = 0
    chunks_removed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """Human summary, one fact per line."""
        out = [
            f"files: {self.files} read"
            + (", skipped " + ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()))
               if self.skipped else ""),
            f"documents: {self.documents_added} added, {self.documents_unchanged} unchanged, "
            f"{self.documents_replaced} replaced, {self.documents_removed} removed",
            f"chunks: {self.chunks_added} added, {self.chunks_updated} updated, "
            f"{self.chunks_kept} kept, "
            f"{self.chunks_removed} removed",
        ]
        return out


def chunking_signature(chunk_tokens: int, overlap: int) -> str:
    return f"v{CHUNKER_VERSION}/{chunk_tokens}/{overlap}"


def ingest_paths(
    store: Store, paths: list[str], *, include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (), chunk_tokens: int = 400, overlap: int = 50,
    warn: Callable[[str], None] | None = None,
    parallel_min_chars: int | None = PARALLEL_MIN_CHARS,
) -> IngestReport:
    """Ingest files and folders into `store` (see the module docstring for the guarantees).

    `warn` receives one line per warning (e.g. invalid UTF-8 replaced); warnings are also
    listed in the report. Raises InputError for bad input, with nothing written.

    `parallel_min_chars`: chunk in worker processes when the documents to (re)chunk hold at
    least this many characters (None: never). The result is identical either way."""
    if chunk_tokens < 16:
        raise InputError(f"--chunk-tokens must be at least 16 (got {chunk_tokens})")
    if not 0 <= overlap <= chunk_tokens // 2:
        raise InputError(f"--overlap must be between 0 and half of --chunk-tokens "
                         f"({chunk_tokens // 2}), got {overlap}")
    report = IngestReport()

    def on_warning(message: str) -> None:
        report.warnings.append(message)
        if warn is not None:
            warn(message)

    found = discover(paths, include, exclude)
    report.skipped = found.skipped
    for message in found.warnings:
        on_warning(message)
    report.files = len(found.files)
    signature = chunking_signature(chunk_tokens, overlap)
    known = document_index(store)
    file_ids = _file_ids(known)
    _check_folders_hold_files(found, known)

    # 1. Read and check everything; decide what changes. Nothing is written yet.
    seen: dict[str, LoadedDocument] = {}
    todo: list[LoadedDocument] = []
    jsonl_files: set[Path] = set()
    for src in found.files:
        for doc in load_file(src.path, src.doc_id, src.display, src.format, on_warning):
            if doc.whole_file:
                doc.id = file_ids.get(str(doc.path), doc.id)
            other = seen.get(doc.id)
            if other is not None:
                raise InputError(f"document id {doc.id!r} also comes from {other.display}; "
                                 f"ingest their common parent folder instead", path=doc.display)
            seen[doc.id] = doc
            old = known.get(doc.id)
            _check_not_taken(doc, old["path"] if old is not None else None)
            expected = signature if doc.format != "jsonl" else "jsonl"
            if (old is not None and old["content_hash"] == doc.content_hash
                    and old["path"] == str(doc.path)
                    and (old["metadata"] or {}).get("chunking") == expected):
                report.documents_unchanged += 1
                continue
            if not extract(doc, on_warning):
                report.skipped["no text"] = report.skipped.get("no text", 0) + 1
                continue
            todo.append(doc)
        if src.format == "jsonl":
            jsonl_files.add(src.path)

    removals = sorted(
        doc_id for doc_id, row in known.items()
        if doc_id not in seen and (
            Path(row["path"]) in jsonl_files
            or (any(_is_under(row["path"], root) for root in found.roots)
                and not Path(row["path"]).exists()))
    )
    rewritten = {d.id for d in todo} | set(removals)
    _check_custom_ids(store, todo, rewritten)

    # 2. Write: removals first (they may free ids), then one transaction per document. The
    # checks above read the database as it was; another ingest started at the same time may
    # have written since. So they are made again inside the write transactions (BEGIN
    # IMMEDIATE): all of them with the removals, and each document's own with its write.
    with store.write():
        _check_still_free(store, todo, rewritten)
        for doc_id in removals:
            report.chunks_removed += delete_document(store, doc_id)
            report.documents_removed += 1
    # Not on a writer thread: measured on a busy 2-core machine, a writer thread cost more
    # wall time than it saved (GIL hand-offs, the chunker is Python). Large ingests chunk in
    # worker processes instead, while this process writes (see `_built`).
    with contextlib.closing(_built(todo, chunk_tokens, overlap, signature,
                                   parallel_min_chars)) as built:
        for doc, (row, chunks) in zip(todo, built):
            with store.write():
                _check_not_taken(doc, document_path(store, doc.id))
                changes = save_document(store, row, chunks, claim_ids=doc.format == "jsonl")
            report.chunks_added += changes.added
            report.chunks_updated += changes.updated
            report.chunks_kept += changes.kept
            report.chunks_removed += changes.removed
            if doc.id in known:
                report.documents_replaced += 1
            else:
                report.documents_added += 1
    return report


def _built(todo: list[LoadedDocument], chunk_tokens: int, overlap: int, signature: str,
           parallel_min_chars: int | None) -> Iterator[tuple[dict, list[dict]]]:
    """`_build` of every document of `todo`, in order: in this process for small ingests,
    otherwise in worker processes, a few batches ahead of the caller (who writes).

    Whether workers are used depends only on the size of the work and the platform, never on
    what else runs in this process: with no other thread running they are forked and inherit
    the documents and the loaded encoding (only indices go out); with another thread running,
    which could hold a lock across a fork, they are started by the forkserver (a clean
    single-threaded process) and each batch's documents are sent to them."""
    workers = _worker_count()
    sizes = [len(d.text) or sum(len(r.text) for r in d.records) for d in todo]
    methods = multiprocessing.get_all_start_methods()
    inherit = "fork" in methods and threading.active_count() == 1
    if (parallel_min_chars is None or sum(sizes) < parallel_min_chars or workers < 1
            or not (inherit or "forkserver" in methods)):
        for doc in todo:
            yield _build(doc, chunk_tokens, overlap, signature)
        return
    batches: list[range] = []
    first = size = 0
    for k, doc_size in enumerate(sizes):
        size += doc_size
        if size >= _BATCH_CHARS or k == len(todo) - 1:
            batches.append(range(first, k + 1))
            first, size = k + 1, 0
    global _FORK_STATE
    # Only built rows come back. Workers never touch the parent's SQLite connection.
    if inherit:
        _FORK_STATE = (todo, chunk_tokens, overlap, signature)
        encoding()  # load the BPE once, before forking, so no worker has to
    pending: deque[Future] = deque()
    executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(
        "fork" if inherit else "forkserver"))

    def submit(batch: range) -> Future:
        if inherit:
            return executor.submit(_build_batch, batch.start, batch.stop)
        return executor.submit(_build_docs, todo[batch.start:batch.stop], chunk_tokens,
                               overlap, signature)

    try:
        queued = iter(batches)
        for batch in queued:
            pending.append(submit(batch))
            if len(pending) >= _IN_FLIGHT * workers:
                break
        while pending:
            results = pending.popleft().result()
            nxt = next(queued, None)
            if nxt is not None:
                pending.append(submit(nxt))
            yield from results
    finally:
        _FORK_STATE = None
        for future in pending:
            future.cancel()
        executor.shutdown(wait=True, cancel_futures=True)


_FORK_STATE: tuple | None = None


def _build_batch(start: int, stop: int) -> list[tuple[dict, list[dict]]]:
    """In a forked worker: `_build` of todo[start:stop] (todo as inherited from the parent)."""
    todo, chunk_tokens, overlap, signature = _FORK_STATE
    return _build_docs(todo[start:stop], chunk_tokens, overlap, signature)


def _build_docs(docs: list[LoadedDocument], chunk_tokens: int, overlap: int,
                signature: str) -> list[tuple[dict, list[dict]]]:
    return [_build(doc, chunk_tokens, overlap, signature) for doc in docs]


def _worker_count() -> int:
    """Chunking workers (0: chunk here). Chunking costs ~2.5x what writing does, so two
    workers plus this (writing) process share 2 cores better than one worker; beyond 2 cores,
    one is left to the writer, up to 4 workers."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return 0 if cores < 2 else max(2, min(4, cores - 1))


def _check_folders_hold_files(found: Discovery, known: dict[str, dict]) -> None:
    """A folder given on the command line with nothing to ingest in it is an input error (a
    wrong path, or files of a type golden does not read), unless documents were ingested from
    it before: then its files were deleted, and their documents are removed."""
    for root in found.roots:
        if any(_is_under(str(f.path), root) for f in found.files):
            continue
        if any(_is_under(row["path"], root) for row in known.values()):
            continue
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(found.skipped.items()))
        raise InputError(f"no files to ingest in this folder{f' (skipped {why})' if why else ''};"
                         f" golden reads {', '.join(sorted(FORMATS))}", path=str(root))


def _file_ids(known: dict[str, dict]) -> dict[str, str]:
    """Absolute path -> id of the stored document that is that whole file (any file but a
    JSONL one, and a JSONL file's records without a `source`)."""
    ids = {}
    for doc_id, row in known.items():
        meta = row["metadata"] or {}
        if meta.get("chunking") != "jsonl" or meta.get("unsourced"):
            ids[row["path"]] = doc_id
    return ids


def _is_under(path: str, root: Path) -> bool:
    return path.startswith(str(root).rstrip("/") + "/")


def _check_not_taken(doc: LoadedDocument, stored_path: str | None) -> None:
    """A document id already ingested from another file that still exists is an input error
    (two folders with the same file names, ingested into one database)."""
    if stored_path is not None and stored_path != str(doc.path) and Path(stored_path).exists():
        raise InputError(f"document id {doc.id!r} is already ingested from {stored_path}",
                         path=doc.display)


def _check_still_free(store: Store, todo: list[LoadedDocument], rewritten: set[str]) -> None:
    """The checks of the reading phase, against the database as it is now (called inside the
    first write transaction): another ingest may have written the same ids meanwhile."""
    now = document_index(store)
    for doc in todo:
        row = now.get(doc.id)
        _check_not_taken(doc, row["path"] if row is not None else None)
    _check_custom_ids(store, todo, rewritten)


def _check_custom_ids(store: Store, todo: list[LoadedDocument], rewritten: set[str]) -> None:
    """A JSONL id may not name a chunk of another document, in this run or already stored
    (unless that document is being rewritten or removed in this run)."""
    owner_in_run: dict[str, LoadedDocument] = {}
    for doc in todo:
        for rec in doc.records:
            other = owner_in_run.get(rec.id)
            if other is not None and other.id != doc.id:
                raise InputError(f"duplicate chunk id {rec.id!r}: also used by document "
                                 f"{other.id!r} ({other.display})", path=doc.display,
                                 line=rec.line)
            owner_in_run[rec.id] = doc
    for chunk_id, owner in chunk_owners(store, owner_in_run).items():
        doc = owner_in_run[chunk_id]
        if owner != doc.id and owner not in rewritten:
            line = next(r.line for r in doc.records if r.id == chunk_id)
            raise InputError(f"duplicate chunk id {chunk_id!r}: already used by document "
                             f"{owner!r}", path=doc.display, line=line)


def _title(doc: LoadedDocument, blocks) -> str:
    if doc.title:
        return doc.title
    headings = [b for b in blocks if b.kind == "heading"]
    h1 = next((b.heading for b in headings if b.level == 1), None)
    return h1 or (headings[0].heading if headings else Path(doc.id).stem)


def _build(doc: LoadedDocument, chunk_tokens: int, overlap: int,
           signature: str) -> tuple[dict, list[dict]]:
    """The documents row and chunk rows of one document (chunking happens here)."""
    if doc.format == "jsonl":
        return _build_jsonl(doc)
    if doc.blocks is not None:
        blocks = doc.blocks
    elif doc.format == "markdown":
        blocks = markdown_blocks(doc.text)
    else:
        blocks = text_blocks(doc.text)
    title = _title(doc, blocks)
    chunking = chunk_blocks(doc.text, blocks, chunk_tokens=chunk_tokens, overlap=overlap)
    doc_language = detect_language(doc.text)
    ids: set[str] = set()
    chunks = []
    for seq, piece in enumerate(chunking.chunks):
        base = f"{doc.id}#{hashlib.sha256(piece.text.encode('utf-8')).hexdigest()[:12]}"
        chunk_id, n = base, 1
        while chunk_id in ids:
            n += 1
            chunk_id = f"{base}-{n}"
        ids.add(chunk_id)
        chunks.append({
            "id": chunk_id, "seq": seq, "text": piece.text, "title": title,
            "heading_path": piece.heading_path, "char_start": piece.char_start,
            "char_end": piece.char_end, "n_tokens": piece.n_tokens,
            "language": detect_language(piece.text, default=doc_language),
            "metadata": {"pages": pages_of(doc.pages, piece.char_start, piece.char_end)}
            if doc.pages else None,
        })
    row = {
        "id": doc.id, "path": str(doc.path), "title": title, "format": doc.format,
        "content_hash": doc.content_hash, "n_chars": len(doc.text),
        "n_tokens": chunking.n_tokens, "language": doc_language,
        "metadata": {"chunking": signature} | ({"pages": len(doc.pages)} if doc.pages else {}),
    }
    return row, chunks


def _build_jsonl(doc: LoadedDocument) -> tuple[dict, list[dict]]:
    encode = encoding().encode_ordinary
    chunks = []
    total_tokens = total_chars = 0
    for seq, rec in enumerate(doc.records):
        n = len(encode(rec.text))
        total_tokens += n
        total_chars += len(rec.text)
        chunks.append({
            "id": rec.id, "seq": seq, "text": rec.text, "title": rec.title or doc.title,
            "heading_path": [], "char_start": None, "char_end": None, "n_tokens": n,
            "language": detect_language(rec.text), "metadata": rec.metadata or None,
        })
    row = {
        "id": doc.id, "path": str(doc.path), "title": doc.title, "format": "jsonl",
        "content_hash": doc.content_hash, "n_chars": total_chars, "n_tokens": total_tokens,
        "language": detect_language(" ".join(r.text for r in doc.records[:50])),
        "metadata": {"chunking": "jsonl", "source_file": doc.display}
        | ({"unsourced": True} if doc.whole_file else {}),
    }
    return row, chunks
