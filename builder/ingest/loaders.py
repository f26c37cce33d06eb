"""Read knowledge-base files into documents: one loader per format, all checks up front.

Formats by extension: `.md`/`.markdown` (markdown), `.txt` (text), `.html`/`.htm` (html,
visible text only, see `html_text`), `.jsonl` (pre-chunked records), and the parsed formats
`.pdf`, `.docx` (read as bytes here), `.rst`/`.rest` and `.mdx` (see `extract`). Every check
that can fail on user input happens here or in `extract`, before anything is written, and
raises `InputError` naming the file (and line, for JSONL):

- unreadable file, binary file (a NUL byte: this also catches UTF-16), empty file (nothing but
  whitespace, or an HTML page without visible text);
- invalid UTF-8 is NOT an error: the text is decoded with U+FFFD replacement characters and a
  warning names the file, the line of the first bad byte and how many were replaced, because
  losing a whole document to one stray Latin-1 byte is worse than one odd character. A UTF-8
  byte-order mark is dropped; line endings are kept as they are, so offsets index the file's
  own text;
- JSONL: a line that is not a JSON object, a string holding a lone surrogate (a `\\ud800`
  escape without its pair: not Unicode, so it could not be stored or printed; refused by
  `builder.text.jsonl.parse_json`, as in every JSONL golden reads), an `id` that is
  not a non-empty string or integer,
  a `text` that is not a non-empty string, a `metadata` that is not an object, or an `id`
  repeated within the file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from builder.errors import InputError
from builder.ingest.blocks import Block
from builder.text.input_files import read_input_bytes
from builder.text.jsonl import parse_json

FORMATS = {
    ".md": "markdown", ".markdown": "markdown", ".txt": "text", ".html": "html",
    ".htm": "html", ".jsonl": "jsonl", ".pdf": "pdf", ".docx": "docx", ".rst": "rst",
    ".rest": "rst", ".mdx": "mdx",
}
BINARY_FORMATS = {"pdf", "docx"}  # hashed as bytes, parsed by `extract`


class JsonlRecord(BaseModel):
    """One pre-chunked record; its `id` becomes the chunk id verbatim. Unknown fields are
    kept in the chunk's metadata."""

    model_config = ConfigDict(extra="allow", strict=True)

    id: str | int
    text: str
    source: str | None = None
    title: str | None = None
    metadata: dict[str, Any] | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, value: object) -> str:
        # before the str|int union, so a wrong type reads "must be a string or an integer"
        # rather than pydantic's per-member "id.str: ..." (bool is an int subclass: refused)
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise ValueError("must be a string or an integer")
        value = str(value)
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value


@dataclass
class Record:
    id: str
    text: str
    title: str | None
    metadata: dict[str, Any]
    line: int


@dataclass
class LoadedDocument:
    """A document ready to chunk: `text` for files, `records` for JSONL groups."""

    id: str
    path: Path  # the file it came from (absolute)
    display: str  # the path as the user would write it, for messages
    format: str
    content_hash: str
    text: str = ""
    records: list[Record] = field(default_factory=list)
    title: str | None = None
    blocks: list[Block] | None = None  # set once a parsed format was parsed (`extract`)
    raw: bytes | None = None  # the file's bytes, for binary formats until parsed
    pages: list[int] | None = None  # PDF: offset in `text` where each page starts
    whole_file: bool = True  # False for a JSONL group named by its records' `source`


def read_bytes(path: Path, display: str) -> bytes:
    """The file's bytes; InputError naming it as the user wrote it (`input_files`)."""
    return read_input_bytes(path, display)


def read_text(path: Path, display: str, warn: Callable[[str], None]) -> str:
    """The file's text (see the module docstring for the decoding policy)."""
    data = read_bytes(path, display)
    nul = data.find(b"\x00")
    if nul != -1:
        raise InputError(f"binary file (NUL byte at offset {nul}); save it as UTF-8 text",
                         path=display)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        text = data.decode("utf-8", errors="replace")
        bad = text.count("\ufffd") - data.decode("utf-8", errors="ignore").count("\ufffd")
        warn(f"{display}:{line}: invalid UTF-8; {bad} bad byte sequence(s) replaced with U+FFFD")
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise InputError("file is empty", path=display)
    return text


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_file(path: Path, doc_id: str, display: str, fmt: str,
              warn: Callable[[str], None]) -> list[LoadedDocument]:
    """The document(s) in one file: one per file, or one per source for JSONL.

    Parsed formats (HTML, PDF, DOCX, RST, MDX) are read and hashed here but parsed only when
    the document has to be (re)chunked, so unchanged files cost a read and a hash."""
    if fmt in BINARY_FORMATS:
        data = read_bytes(path, display)
        if not data.strip():
            raise InputError("file is empty", path=display)
        return [LoadedDocument(doc_id, path, display, fmt, hashlib.sha256(data).hexdigest(),
                               raw=data)]
    text = read_text(path, display, warn)
    if fmt == "jsonl":
        return _jsonl_documents(text, path, doc_id, display)
    return [LoadedDocument(doc_id, path, display, fmt, text_hash(text), text=text)]


def _jsonl_documents(text: str, path: Path, doc_id: str, display: str) -> list[LoadedDocument]:
    groups: dict[str, list[Record]] = {}
    first_line: dict[str, int] = {}
    unsourced = False  # some records have no `source`: they form the file's own document
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        raw = parse_json(line, display, number, label="not valid JSON")
        if not isinstance(raw, dict):
            raise InputError("expected a JSON object with \"id\" and \"text\"", path=display,
                             line=number)
        try:
            rec = JsonlRecord.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "record"
            kind = "missing" if err["type"] == "missing" else err["msg"].removeprefix(
                "Value error, ").lower()
            raise InputError(f"field \"{where}\": {kind}", path=display, line=number) from None
        if rec.id in first_line:
            raise InputError(f"duplicate chunk id {rec.id!r} (first on line "
                             f"{first_line[rec.id]})", path=display, line=number)
        first_line[rec.id] = number
        metadata = dict(rec.metadata or {})
        metadata.update(rec.model_extra or {})
        groups.setdefault(rec.source or doc_id, []).append(
            Record(rec.id, rec.text, rec.title, metadata, number))
        if rec.source is None:
            unsourced = True
    if not groups:
        raise InputError("file is empty (no records)", path=display)
    docs = []
    for source, records in groups.items():
        canonical = json.dumps(
            [[r.id, r.text, r.title, r.metadata] for r in records], ensure_ascii=False,
            sort_keys=True)
        title = next((r.title for r in records if r.title), None) or source
        docs.append(LoadedDocument(source, path, display, "jsonl", text_hash(canonical),
                                   records=records, title=title,
                                   whole_file=unsourced and source == doc_id))
    return docs
