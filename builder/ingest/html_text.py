"""Visible text of an HTML page, as blocks, with the stdlib `html.parser`.

What a reader would see is kept; what a browser does not show is dropped: `<head>` (except
`<title>`, kept as the document title), `<script>`, `<style>`, `<template>`, `<noscript>`,
`<svg>`, and any element with the `hidden` attribute. Whitespace is collapsed as a browser does,
except inside `<pre>`. Headings `<h1>`..`<h6>` become heading blocks (so the chunker follows the
page's sections), `<pre>` becomes a code block, each `<table>` a table block with one line per
row (cells joined by " | "), and other block elements (p, div, li, ...) paragraphs. Blocks are
separated by a blank line (list items by a single newline) in the returned text, which is the
document text the chunk offsets refer to. Markup in the page is never interpreted beyond this.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from builder.ingest.blocks import Block

_SKIP = {"script", "style", "template", "noscript", "svg", "iframe", "object"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr"}
_BLOCK = {"p", "div", "section", "article", "header", "footer", "main", "nav", "aside", "ul",
          "ol", "li", "dl", "dt", "dd", "blockquote", "figure", "figcaption", "form",
          "fieldset", "address", "details", "summary", "hr", "body", "html", "caption"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_SPACES = re.compile(r"\s+")


class _VisibleText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.length = 0
        self.blocks: list[Block] = []
        self.title: list[str] | None = None
        self.title_text = ""
        self.skip_tag: str | None = None
        self.skip_depth = 0
        self.in_head = False
        self.buf: list[str] = []
        self.heading_level = 0
        self.pre_depth = 0
        self.rows: list[str] | None = None
        self.cells: list[str] | None = None
        self.last_kind = ""
        self.in_li = False

    # -- output -------------------------------------------------------------------------
    def _emit(self, kind: str, text: str, level: int = 0, tight: bool = False) -> None:
        if not text.strip():
            return
        if self.parts:
            sep = "\n" if tight and self.last_kind == "li" else "\n\n"
            self.parts.append(sep)
            self.length += len(sep)
        start = self.length
        self.parts.append(text)
        self.length += len(text)
        block_kind = "paragraph" if kind == "li" else kind
        self.blocks.append(Block(block_kind, start, self.length, level,
                                 text if kind == "heading" else ""))
        self.last_kind = kind

    def _flush(self) -> None:
        if self.pre_depth:
            text = "".join(self.buf).strip("\n")
            self.buf = []
            self._emit("code", text.rstrip())
            return
        raw = "".join(self.buf)
        self.buf = []
        lines = [_SPACES.sub(" ", part).strip() for part in raw.split("\n\x00")]
        text = "\n".join(line for line in lines if line)
        if self.heading_level:
            self._emit("heading", text.replace("\n", " "), self.heading_level)
        else:
            self._emit("li" if self.in_li else "paragraph", text, tight=self.in_li)
        self.in_li = False

    # -- parser callbacks -------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skip_tag is not None:
            if tag == self.skip_tag:
                self.skip_depth += 1
            return
        if tag == "title":
            self.title = []
            return
        if tag == "head":
            self.in_head = True
            return
        if self.in_head and (tag in _BLOCK or tag in _HEADINGS or tag in ("table", "pre")):
            self.in_head = False
        if tag in _SKIP or (any(name == "hidden" for name, _ in attrs) and tag not in _VOID):
            self.skip_tag, self.skip_depth = tag, 1
            return
        if tag == "br":
            self.buf.append("\n" if self.pre_depth else "\n\x00")
        elif tag in _HEADINGS:
            self._flush()
            self.heading_level = _HEADINGS[tag]
        elif tag == "pre":
            self._flush()
            self.pre_depth += 1
        elif tag == "table":
            self._flush()
            self.rows = []
        elif tag == "tr" and self.rows is not None:
            self.cells = []
        elif tag in ("td", "th") and self.cells is not None:
            self._end_cell()
        elif tag in _BLOCK and not self.pre_depth:
            self._flush()
            self.in_li = tag == "li"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if self.skip_tag is not None:
            if tag == self.skip_tag:
                self.skip_depth -= 1
                if self.skip_depth == 0:
                    self.skip_tag = None
            return
        if tag == "title" and self.title is not None:
            if not self.title_text:
                self.title_text = _SPACES.sub(" ", "".join(self.title)).strip()
            self.title = None
        elif tag == "head":
            self.in_head = False
        elif tag in _HEADINGS and self.heading_level:
            self._flush()
            self.heading_level = 0
        elif tag == "pre" and self.pre_depth:
            self._flush()
            self.pre_depth -= 1
        elif tag in ("td", "th") and self.cells is not None:
            self._end_cell()
        elif tag == "tr" and self.rows is not None and self.cells is not None:
            self._end_cell()
            if self.cells:
                self.rows.append(" | ".join(self.cells))
            self.cells = None
        elif tag == "table" and self.rows is not None:
            if self.cells:
                self._end_cell()
                self.rows.append(" | ".join(self.cells))
            rows, self.rows, self.cells = self.rows, None, None
            self.buf = []
            self._emit("table", "\n".join(rows))
        elif tag in _BLOCK and not self.pre_depth:
            self._flush()

    def _end_cell(self) -> None:
        cell = _SPACES.sub(" ", "".join(self.buf).replace("\x00", "")).strip()
        self.buf = []
        if cell:
            assert self.cells is not None
            self.cells.append(cell)

    def handle_data(self, data: str) -> None:
        if self.skip_tag is not None:
            return
        if self.title is not None:
            self.title.append(data)
            return
        if self.in_head:
            return
        self.buf.append(data)

    def close(self) -> None:
        super().close()
        if self.rows is not None:
            self.handle_endtag("table")
        self._flush()


def html_to_text(html: str) -> tuple[str, list[Block], str]:
    """(visible text, its blocks, the page title or "") for an HTML document."""
    parser = _VisibleText()
    parser.feed(html)
    parser.close()
    title = parser.title_text
    if not title:
        title = next((b.heading for b in parser.blocks if b.kind == "heading"), "")
    return "".join(parser.parts), parser.blocks, title
