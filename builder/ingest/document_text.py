"""The text golden keeps of a parsed document (PDF, DOCX, reStructuredText), built as Markdown.

Loaders of formats that are not plain text walk their parsed document and call `heading`,
`paragraph`, `items`, `table` and `code` in reading order. The result is one Markdown text
(headings as `#` lines, lists as `- ` / `1. ` lines, tables as GFM pipe tables with a header
row, code as fences) plus its blocks, so:

- the chunker follows the document's structure (the blocks are given, not re-parsed), and the
  chunk text still shows it to a reviewer, an LLM and golden's own Markdown readers;
- this text IS the document: chunk offsets index it (`text[start:end] == chunk`);
- `pages` (PDF only) holds where each page starts in it, so every chunk knows its pages.

A paragraph line that Markdown would read as a heading, fence or table row gets a leading
backslash, so re-reading the chunk text never invents structure the document did not have.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from builder.errors import InputError
from builder.ingest.blocks import Block

_MARKDOWN_LOOKALIKE = re.compile(r"^( {0,3})(#|```|~~~|\|)", re.MULTILINE)
_SPACES = re.compile(r"[ \t\r\n\f\v\u00a0]+")


class NoText(Exception):
    """The file is a document with no text in it (a scan without OCR, pictures only): the
    caller warns, naming the file, and skips it. The message says what was found."""


@dataclass
class Extracted:
    """A parsed document: its text (see the module docstring), blocks, title and pages."""

    text: str
    blocks: list[Block]
    title: str | None = None
    pages: list[int] | None = None  # offset where page k+1 starts, for every page
    warnings: list[str] = field(default_factory=list)


def pages_of(pages: list[int], start: int, end: int) -> list[int]:
    """1-based numbers of the pages that text[start:end] touches."""
    first = max(1, bisect.bisect_right(pages, start))
    last = max(first, bisect.bisect_right(pages, max(start, end - 1)))
    return list(range(first, last + 1))


def pages_label(pages: list[int]) -> str:
    """How a reader cites pages: "p. 12", "pp. 12-13" ("" for none)."""
    if not pages:
        return ""
    return f"p. {pages[0]}" if len(pages) == 1 else f"pp. {pages[0]}-{pages[-1]}"


def collapse_spaces(text: str) -> str:
    """Whitespace runs (newlines included) as one space, trimmed."""
    return _SPACES.sub(" ", text).strip()


def needs_extra(module: str, what: str, display: str) -> InputError:
    """The error for a file whose format needs an optional library that is not installed."""
    return InputError(f"reading {what} files needs golden's 'documents' extra ({module} is not "
                      f"installed): pip install 'golden[documents]'", path=display)


class DocumentText:
    """Collects blocks in reading order into one Markdown text (see the module docstring)."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self.blocks: list[Block] = []
        self.pages: list[int] = []
        self._block_part = 0  # index in _parts where the last block's text starts

    def _add(self, kind: str, text: str, level: int = 0, heading: str = "") -> None:
        text = text.strip()
        if not text:
            return
        if self._parts:
            self._parts.append("\n\n")
            self._length += 2
        start = self._length
        self._block_part = len(self._parts)
        self._parts.append(text)
        self._length += len(text)
        self.blocks.append(Block(kind, start, self._length, level, heading))

    def start_page(self) -> None:
        """What comes next belongs to a new page (PDF)."""
        self.pages.append(self._length + (2 if self._parts else 0))

    def heading(self, text: str, level: int) -> None:
        text = collapse_spaces(text)
        if text:
            level = min(max(level, 1), 6)
            self._add("heading", "#" * level + " " + text, level, text)

    def paragraph(self, text: str) -> None:
        """A paragraph; its inner line breaks are kept (PDF rows, RST line blocks)."""
        lines = [collapse_spaces(line) for line in text.split("\n")]
        self._add("paragraph", _escape("\n".join(line for line in lines if line)))

    def continue_paragraph(self, text: str) -> bool:
        """Append `text` to the last block if it is a paragraph (a paragraph running on to the
        next page); False if there is none."""
        if not self.blocks or self.blocks[-1].kind != "paragraph":
            return False
        text = _escape(collapse_spaces(text))
        if not text:
            return True
        joined = " " + text
        if self.pages and self.pages[-1] > self._length:
            self.pages[-1] = self._length + 1  # the page starts inside this paragraph
        self._parts.append(joined)
        self._length += len(joined)
        self.blocks[-1].end = self._length
        return True

    def last_paragraph(self) -> str | None:
        """The text of the last block if it is a paragraph, else None."""
        if not self.blocks or self.blocks[-1].kind != "paragraph":
            return None
        return "".join(self._parts[self._block_part:])

    def items(self, items: list[tuple[int, str, str]]) -> None:
        """A list as one block: (depth, marker, text) per item, e.g. (0, "-", "Milk"),
        (1, "2.", "Second step")."""
        lines = [f"{'  ' * depth}{marker} {collapse_spaces(text)}" for depth, marker, text in items
                 if collapse_spaces(text)]
        self._add("paragraph", "\n".join(lines))

    def table(self, rows: list[list[str]]) -> None:
        """A table; the first row is its header. Cells are made one line, `|` escaped."""
        rows = [[collapse_spaces(c).replace("|", "\\|") for c in row] for row in rows]
        rows = [row for row in rows if any(row)]
        if not rows:
            return
        width = max(len(row) for row in rows)
        rows = [row + [""] * (width - len(row)) for row in rows]
        def line(cells: list[str]) -> str:
            return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"

        lines = [line(rows[0]), "|" + "|".join(["---"] * width) + "|"]
        lines += [line(row) for row in rows[1:]]
        self._add("table", "\n".join(lines))

    def code(self, text: str, language: str = "") -> None:
        body = text.strip("\n").rstrip()
        if not body.strip():
            return
        longest = max((len(m) for m in re.findall(r"`{3,}", body)), default=0)
        fence = "`" * max(3, longest + 1)
        self._add("code", f"{fence}{language}\n{body}\n{fence}")

    def result(self, title: str | None = None, *, with_pages: bool = False) -> Extracted:
        return Extracted("".join(self._parts), self.blocks, title,
                         list(self.pages) if with_pages else None)


def _escape(text: str) -> str:
    return _MARKDOWN_LOOKALIKE.sub(lambda m: m.group(1) + "\\" + m.group(2), text)
