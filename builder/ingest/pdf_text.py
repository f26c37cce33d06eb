"""The text layer of a PDF, with its pages, headings and paragraphs, via PDFium (pypdfium2).

What is kept (see `document_text` for the shape of the result):
- the text of every page in reading order, one paragraph per block of lines: a new paragraph
  starts at a vertical gap larger than the usual line spacing, at a change of font size, and
  at a list bullet (bullets become `- `); a line that ends well short of the right margin ends
  its line (table rows, addresses stay one per line); a word hyphenated across two lines is
  joined; a paragraph that runs on to the next page is continued there;
- pages: `Extracted.pages` says where each page starts, so each chunk knows its pages;
- headings: from the PDF's outline (bookmarks) when it has one, matched to the lines of the
  page each bookmark points to (levels from the outline's depth); otherwise from font sizes:
  short lines set larger than the body text (the most used size), one level per size, largest
  first, and short bold lines standing alone at body size as the lowest level;
- dropped: running headers and footers, i.e. lines among the top or bottom two of a page that
  repeat (digits ignored, so "Page 3 of 9" matches "Page 4 of 9") on at least half of the
  pages of a document of 3 pages or more.

A PDF whose pages hold no text at all (a scan without OCR) is `NoText`: the caller warns
and skips it. Pages without text in an otherwise textual PDF are named in a warning. An
encrypted or damaged file is an `InputError` naming it, a page that cannot be loaded
included (a damaged page, or a page count larger than the pages the file holds), so the
ingest stops before anything is written, as for any other damaged file. pypdfium2 is in the `documents`
extra; without it a PDF is an `InputError` that says how to install it.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass

from builder.errors import InputError
from builder.ingest.document_text import (
    DocumentText, Extracted, NoText, needs_extra, collapse_spaces,
)

_BULLETS = "•◦▪▫‣∙·●○■□–—*-\uf0b7\uf0a7\uf076\uf0d8\uf0fc"
_BULLET_LINE = re.compile(rf"^[{re.escape(_BULLETS)}]\s+")
# "3. Step", "b) Item", "iv. Item"; "10.Step" too (no space before a capital letter)
_NUMBERED_LINE = re.compile(r"^(?:\d{1,3}|[a-zA-Z]|[ivxlcIVXLC]{1,5})[.)](?:\s+|(?=[A-Z]))(?=\S)")
# Does a paragraph end like a sentence? (A page's first paragraph that starts in lower case
# carries on one that does not.) A line-end test, not a splitter: `builder.text.sentences`.
_SENTENCE_END = re.compile(r"[.!?:;。！？]['\")\]”’]*$")
_DIGITS = re.compile(r"\d+")
_HEADING_MAX_WORDS = 14


@dataclass(slots=True)
class _Line:
    text: str
    size: float  # font size of its first letter or digit
    bold: bool
    baseline: float  # y of the baseline (PDF units, grows upwards)
    left: float
    right: float
    heading: int = 0  # heading level, 0: body text


def pdf_to_text(data: bytes, display: str) -> Extracted:
    """The document in `data` (see the module docstring). Raises NoText, InputError."""
    try:
        import pypdfium2 as pdfium
        import pypdfium2.raw as pdfium_c
    except ImportError:
        raise needs_extra("pypdfium2", "PDF", display) from None
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == pdfium_c.FPDF_ERR_PASSWORD:
            raise InputError("encrypted PDF (it needs a password); save an unprotected copy",
                             path=display) from None
        raise InputError(f"not a readable PDF ({exc})", path=display) from None
    try:
        pages = []
        for i in range(len(pdf)):
            try:
                pages.append(_page_lines(pdf[i], pdfium_c))
            except pdfium.PdfiumError as exc:
                # A damaged page, or a page count the file's pages do not bear out (a PDF
                # claiming a million pages stops at the first one that is not there).
                raise InputError(f"damaged PDF: page {i + 1} of the {len(pdf)} it claims cannot "
                                 f"be read ({str(exc).rstrip('.')})", path=display) from None
        try:
            outline = _outline(pdf)
            title = collapse_spaces(pdf.get_metadata_value("Title") or "") or None
        except pdfium.PdfiumError as exc:
            raise InputError(f"damaged PDF ({str(exc).rstrip('.')})", path=display) from None
    finally:
        pdf.close()
    if not pages or not any(pages):
        raise NoText("no text layer (a scan?); skipped: run OCR on it to ingest it")
    empty = [str(k + 1) for k, lines in enumerate(pages) if not lines]
    every_line = [list(lines) for lines in pages]
    _drop_running_lines(pages)
    if not any(pages):  # every line repeats on every page: then that is the text, not a header
        pages = every_line
    _mark_headings(pages, outline)
    out = DocumentText()
    for lines in pages:
        out.start_page()
        _emit_page(out, lines)
    result = out.result(title, with_pages=True)
    if empty:
        shown = ", ".join(empty[:10]) + (", ..." if len(empty) > 10 else "")
        result.warnings.append(f"{display}: page(s) {shown} have no text layer (scanned?); "
                               f"their content is missing")
    return result


# -- reading ----------------------------------------------------------------------------------

def _page_lines(page, pdfium_c) -> list[_Line]:
    """The text lines of one page, in PDFium's reading order."""
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
        lines: list[_Line] = []
        pos = 0
        for raw in text.replace("\r\n", "\n").split("\n"):
            # PDFium writes a line break as "\r\n" (two chars, each with an index), so the
            # index of a char is its position in `text`; keep `pos` in those units.
            start, end = pos, pos + len(raw)
            pos = end + (2 if text.startswith("\r\n", end) else 1)
            stripped = raw.strip()
            if not stripped:
                continue
            first = start + next(i for i, ch in enumerate(raw) if ch.isalnum()) \
                if any(ch.isalnum() for ch in raw) else start + raw.index(stripped[0])
            last = start + len(raw.rstrip()) - 1
            size = pdfium_c.FPDFText_GetFontSize(textpage, first)
            weight = pdfium_c.FPDFText_GetFontWeight(textpage, first)
            try:
                left, bottom, _, _ = textpage.get_charbox(start + raw.index(stripped[0]),
                                                          loose=True)
                _, _, right, _ = textpage.get_charbox(last, loose=True)
            except Exception:  # a char without a box (generated): position unknown
                left = bottom = right = 0.0
            lines.append(_Line(stripped, round(size * 2) / 2, weight >= 600, bottom, left,
                               right))
        return lines
    finally:
        textpage.close()
        page.close()


def _outline(pdf) -> list[tuple[int, str, int]]:
    """(depth, title, page index) of every bookmark that points to a page."""
    out = []
    try:
        for mark in pdf.get_toc(max_depth=6):
            dest = mark.get_dest()
            page = dest.get_index() if dest is not None else None
            title = collapse_spaces(mark.get_title() or "")
            if page is not None and title:
                out.append((mark.level, title, page))
    except Exception:  # a damaged outline is no reason to lose the text
        return []
    return out


# -- cleaning ---------------------------------------------------------------------------------

def _running_key(line: _Line) -> str:
    return _DIGITS.sub("#", line.text.lower())


def _edge_lines(lines: list[_Line]) -> list[_Line]:
    ordered = sorted(lines, key=lambda ln: -ln.baseline)
    return ordered[:2] + ordered[-2:] if len(ordered) > 4 else ordered


def _drop_running_lines(pages: list[list[_Line]]) -> None:
    """Remove headers and footers repeated on at least half of the pages (3 pages or more)."""
    if len(pages) < 3:
        return
    seen: Counter[str] = Counter()
    for lines in pages:
        seen.update({_running_key(ln) for ln in _edge_lines(lines)})
    need = max(2, (len(pages) + 1) // 2)
    running = {key for key, n in seen.items() if n >= need}
    if not running:
        return
    for k, lines in enumerate(pages):
        edges = {id(ln) for ln in _edge_lines(lines) if _running_key(ln) in running}
        pages[k] = [ln for ln in lines if id(ln) not in edges]


def _normalized(text: str) -> str:
    return re.sub(r"\W+", "", text).lower()


def _mark_headings(pages: list[list[_Line]], outline: list[tuple[int, str, int]]) -> None:
    lines = [ln for page in pages for ln in page]
    sizes: Counter[float] = Counter()
    for ln in lines:
        sizes[ln.size] += len(ln.text)
    body = sizes.most_common(1)[0][0]
    if outline:
        _headings_from_outline(pages, outline, body)
        return
    candidates = sorted({ln.size for ln in lines if ln.size >= body * 1.1 + 0.01
                         and _heading_like(ln.text)}, reverse=True)
    level_of = {size: min(k + 1, 6) for k, size in enumerate(candidates)}
    lowest = min(len(candidates) + 1, 6)
    for page in pages:
        for k, ln in enumerate(page):
            if ln.size in level_of and _heading_like(ln.text):
                ln.heading = level_of[ln.size]
            elif ln.bold and abs(ln.size - body) < 0.6 and _heading_like(ln.text) \
                    and _stands_alone(page, k):
                ln.heading = lowest


def _headings_from_outline(pages: list[list[_Line]], outline: list[tuple[int, str, int]],
                           body: float) -> None:
    """Mark the lines each bookmark names (a title may wrap over consecutive lines) with the
    bookmark's depth + 1. A title line on the first page set larger than every bookmarked
    heading (the document's title, rarely bookmarked) becomes level 1, the outline one deeper."""
    marked: list[_Line] = []
    for depth, title, index in outline:
        if not 0 <= index < len(pages):
            continue
        want = _normalized(title)
        page = pages[index]
        for k, ln in enumerate(page):
            got = _normalized(ln.text)
            if ln.heading or not got or not want.startswith(got):
                continue
            j = k
            while got != want and j + 1 < len(page) and want.startswith(
                    got + _normalized(page[j + 1].text)):
                j += 1
                got += _normalized(page[j].text)
            if got == want:
                for m in range(k, j + 1):
                    page[m].heading = min(depth + 1, 6)
                    marked.append(page[m])
                break
    if not marked:
        return
    largest = max(ln.size for ln in marked)
    title = next((ln for ln in pages[0] if not ln.heading and ln.size > largest
                  and ln.size >= body * 1.3 and _heading_like(ln.text)), None)
    if title is not None:
        for ln in marked:
            ln.heading = min(ln.heading + 1, 6)
        title.heading = 1


def _heading_like(text: str) -> bool:
    return (len(text.split()) <= _HEADING_MAX_WORDS and not _BULLET_LINE.match(text)
            and not text.endswith((".", ",", ";")))


def _stands_alone(page: list[_Line], k: int) -> bool:
    gap = _usual_gap(page)
    before = k == 0 or page[k - 1].baseline - page[k].baseline > gap * 1.3
    after = k == len(page) - 1 or page[k].baseline - page[k + 1].baseline > gap * 1.3
    return before and after


# -- writing ----------------------------------------------------------------------------------

def _usual_gap(page: list[_Line]) -> float:
    gaps = [a.baseline - b.baseline for a, b in zip(page, page[1:])
            if 0 < a.baseline - b.baseline < 3 * max(a.size, 1)]
    return statistics.median(gaps) if gaps else 0.0


def _emit_page(out: DocumentText, page: list[_Line]) -> None:
    """One page's lines as headings, paragraphs and lists (rules in the module docstring)."""
    gap = _usual_gap(page)
    right = max((ln.right for ln in page), default=0.0)
    width = right - min((ln.left for ln in page), default=0.0)
    heading: list = []  # [level, text] of the open heading
    para: list[str] = []  # the open paragraph's lines, "\n"-prefixed where a line ended short
    items: list[list[str]] = []  # [marker, text] of the open list
    first = True  # nothing written for this page yet

    def flush() -> None:
        nonlocal heading, para, items, first
        if heading:
            out.heading(heading[1], heading[0])
        if para:
            text = "".join(para)
            if not (first and _continues(out, text) and out.continue_paragraph(text)):
                out.paragraph(text)
        if items:
            out.items([(0, marker, text) for marker, text in items])
        if heading or para or items:
            first = False
        heading, para, items = [], [], []

    prev: _Line | None = None
    for ln in page:
        if ln.heading:
            if heading and prev is not None and prev.heading == ln.heading:
                heading[1] += " " + ln.text  # a heading wrapped onto a second line
            else:
                flush()
                heading = [ln.heading, ln.text]
            prev = ln
            continue
        new_block = (prev is None or bool(prev.heading) or abs(prev.size - ln.size) >= 1
                     or (gap > 0 and prev.baseline - ln.baseline > gap * 1.4)
                     or ln.baseline > prev.baseline + 1)  # moved up: a new column or box
        bullet = _BULLET_LINE.match(ln.text)
        numbered = _NUMBERED_LINE.match(ln.text) if (items or new_block) else None
        if bullet or numbered:
            if heading or para:
                flush()
            if bullet:
                items.append(["-", ln.text[bullet.end():]])
            else:
                items.append([ln.text[:numbered.end()].strip(), ln.text[numbered.end():]])
        elif items and not new_block:
            items[-1][1] = _join(items[-1][1], ln.text)
        else:
            if new_block:
                flush()
            if not para:
                para.append(ln.text)
            elif width > 0 and prev is not None and prev.right < right - width * 0.2:
                para.append("\n" + ln.text)  # the line before ended short: keep the break
            else:
                para[-1] = _join(para[-1], ln.text)
        prev = ln
    flush()


def _join(left: str, right: str) -> str:
    """Two lines of one paragraph: a word hyphenated across them is joined."""
    if left.endswith("-") and len(left) > 1 and left[-2].isalpha() and right[:1].islower():
        return left[:-1] + right
    return left + " " + right


def _continues(out: DocumentText, text: str) -> bool:
    """Does `text` (the first paragraph of a page) carry on the last paragraph written?"""
    last = out.last_paragraph()
    return (last is not None and text[:1].islower() and not _SENTENCE_END.search(last)
            and "\n" not in last[-200:])
