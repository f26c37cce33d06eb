"""The body of a Word document (.docx) as headings, paragraphs, lists and tables (python-docx).

What is kept, in body order (see `document_text` for the shape of the result):
- headings: paragraphs styled "Heading N" (level N), also through a custom style based on
  one, or any paragraph with an outline level (`w:outlineLvl`); a "Title" paragraph is level 1
  and pushes the others one level down, so sections sit under the document's title;
- lists: numbered or bulleted paragraphs (`w:numPr` on the paragraph or its style), one item
  per line, indented by list level, numbered as Word shows them ("1.", "2.", "a.") or `- `;
- tables: one Markdown table per Word table, first row as the header, merged cells once,
  nested tables' text in their cell;
- everything else with text: paragraphs, hyperlink text included.
Dropped: page headers and footers, footnotes, comments, text boxes, pictures. A document with
no text at all (pictures only) is `NoText`. A file that is not a readable .docx is an
`InputError`; python-docx is in the `documents` extra.
"""

from __future__ import annotations

import io
import re
import zipfile

from builder.errors import InputError
from builder.ingest.document_text import (
    DocumentText, Extracted, NoText, needs_extra, collapse_spaces,
)

_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_TITLE = -1  # `_heading_level` of a "Title" paragraph
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def docx_to_text(data: bytes, display: str) -> Extracted:
    """The document in `data` (see the module docstring). Raises NoText, InputError."""
    try:
        import docx
        from docx.table import Table
    except ImportError:
        raise needs_extra("python-docx", "DOCX", display) from None
    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise InputError(f"not a readable .docx file ({type(exc).__name__}: {exc})",
                         path=display) from None
    except Exception as exc:  # python-docx/lxml raise their own types for damaged parts
        raise InputError(f"not a readable .docx file ({type(exc).__name__}: {exc})",
                         path=display) from None
    styles = _Styles(document)
    numbering = _Numbering(document)
    below_title = int(any(styles.heading_level(p._p) == _TITLE for p in document.paragraphs))
    out = DocumentText()
    items: list[tuple[int, str, str]] = []
    list_id = None  # the Word list the open items belong to
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            _flush(out, items)
            out.table(_rows(block))
            continue
        text = block.text
        if not text.strip():
            continue
        level = styles.heading_level(block._p)
        listed = numbering.marker(*styles.num_pr(block._p)) if not level else None
        if listed is not None:
            depth, marker, num_id = listed
            if depth == 0 and num_id != list_id:
                _flush(out, items)  # another list starts
            list_id = num_id
            items.append((depth, marker, text))
            continue
        _flush(out, items)
        if level:
            out.heading(text, 1 if level == _TITLE else level + below_title)
        else:
            out.paragraph(text.replace("\n", " "))  # a soft line break inside a paragraph
    _flush(out, items)
    if not out.blocks:
        raise NoText("no text in this Word document (pictures only?); skipped")
    title = collapse_spaces(document.core_properties.title or "") or None
    return out.result(title)


def _flush(out: DocumentText, items: list[tuple[int, str, str]]) -> None:
    if items:
        out.items(list(items))
        items.clear()


def _rows(table) -> list[list[str]]:
    """Cell texts per row; a cell merged across columns appears once."""
    rows = []
    for row in table.rows:
        cells, seen = [], set()
        for cell in row.cells:
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            cells.append(_cell_text(cell))
        rows.append(cells)
    return rows


def _cell_text(cell) -> str:
    parts = [p.text for p in cell.paragraphs]
    for nested in cell.tables:
        parts += [" ".join(_cell_text(c) for c in row.cells) for row in nested.rows]
    return " ".join(p for p in parts if p.strip())


def _val(element, tag: str) -> str | None:
    child = element.find(f"{_W}{tag}") if element is not None else None
    return child.get(f"{_W}val") if child is not None else None


class _Styles:
    """Heading level and list membership of paragraph styles, read once per style from the
    styles part (following `basedOn`), then looked up by style id: python-docx's
    `paragraph.style` searches all styles on every call."""

    def __init__(self, document) -> None:
        self.elements: dict[str, object] = {}
        self.default: str | None = None
        for style in document.styles.element.findall(f"{_W}style"):
            style_id = style.get(f"{_W}styleId")
            if style_id:
                self.elements[style_id] = style
                if style.get(f"{_W}type") == "paragraph" and style.get(f"{_W}default") in (
                        "1", "true"):
                    self.default = style_id
        self._levels: dict[str | None, int] = {}
        self._num_prs: dict[str | None, tuple[str | None, int]] = {}

    def _chain(self, style_id: str | None):
        seen = set()
        while style_id is not None and style_id in self.elements and style_id not in seen:
            seen.add(style_id)
            element = self.elements[style_id]
            yield element
            style_id = _val(element, "basedOn")

    def _style_id(self, p) -> str | None:
        return _val(p.find(f"{_W}pPr"), "pStyle") or self.default

    def heading_level(self, p) -> int:
        """1-9 for a heading, `_TITLE` for a title, 0 for body text."""
        own = _val(p.find(f"{_W}pPr"), "outlineLvl")
        style_id = self._style_id(p)
        if style_id not in self._levels:
            self._levels[style_id] = self._style_level(style_id)
        level = self._levels[style_id]
        if not level and own is not None and own.isdigit() and int(own) < 9:
            return int(own) + 1
        return level

    def _style_level(self, style_id: str | None) -> int:
        chain = list(self._chain(style_id))
        for element in chain:
            name = (_val(element, "name") or "").strip()
            if name.lower() == "title":
                return _TITLE
            m = _HEADING_STYLE.match(name)
            if m:
                return int(m.group(1))
        for element in chain:
            value = _val(element.find(f"{_W}pPr"), "outlineLvl")
            if value is not None and value.isdigit() and int(value) < 9:
                return int(value) + 1
        return 0

    def num_pr(self, p) -> tuple[str | None, int]:
        """(list id, level) from the paragraph's own numbering, else its style's."""
        own = self._read_num_pr(p)
        if own is not None:
            return own
        style_id = self._style_id(p)
        if style_id not in self._num_prs:
            self._num_prs[style_id] = next(
                (found for found in map(self._read_num_pr, self._chain(style_id))
                 if found is not None), (None, 0))
        return self._num_prs[style_id]

    @staticmethod
    def _read_num_pr(element) -> tuple[str | None, int] | None:
        ppr = element.find(f"{_W}pPr")
        num_pr = ppr.find(f"{_W}numPr") if ppr is not None else None
        if num_pr is None:
            return None
        level = _val(num_pr, "ilvl") or "0"
        return _val(num_pr, "numId"), int(level) if level.isdigit() else 0


class _Numbering:
    """List markers as Word shows them: counters per list and level, restarted below."""

    _FORMATS = {"decimal": lambda n: str(n), "lowerLetter": lambda n: _letters(n),
                "upperLetter": lambda n: _letters(n).upper(),
                "lowerRoman": lambda n: _roman(n), "upperRoman": lambda n: _roman(n).upper()}

    def __init__(self, document) -> None:
        self.levels: dict[tuple[str, int], tuple[str, str, int]] = {}  # fmt, lvlText, start
        self.counters: dict[tuple[str, int], int] = {}
        try:
            root = document.part.numbering_part.element
        except (KeyError, NotImplementedError, AttributeError):
            return
        abstract = {a.get(f"{_W}abstractNumId"): a for a in root.findall(f"{_W}abstractNum")}
        for num in root.findall(f"{_W}num"):
            ref = num.find(f"{_W}abstractNumId")
            definition = abstract.get(ref.get(f"{_W}val")) if ref is not None else None
            if definition is None:
                continue
            for lvl in definition.findall(f"{_W}lvl"):
                fmt = lvl.find(f"{_W}numFmt")
                text = lvl.find(f"{_W}lvlText")
                start = lvl.find(f"{_W}start")
                self.levels[(num.get(f"{_W}numId"), int(lvl.get(f"{_W}ilvl", "0")))] = (
                    fmt.get(f"{_W}val") if fmt is not None else "decimal",
                    text.get(f"{_W}val") if text is not None else "%1.",
                    int(start.get(f"{_W}val")) if start is not None else 1)

    def marker(self, num_id: str | None, ilvl: int) -> tuple[int, str, str] | None:
        """(depth, marker, list id) of an item of list `num_id` at level `ilvl`; None when
        it is not a list item."""
        if num_id is None or num_id == "0":
            return None
        fmt, pattern, start = self.levels.get((num_id, ilvl), ("bullet", "", 1))
        key = (num_id, ilvl)
        self.counters[key] = self.counters.get(key, start - 1) + 1
        for (other, level) in list(self.counters):  # deeper levels restart
            if other == num_id and level > ilvl:
                del self.counters[(other, level)]
        if fmt == "bullet" or fmt not in self._FORMATS:
            return ilvl, "-", num_id
        label = pattern
        for k in range(ilvl + 1):
            count = self.counters.get((num_id, k), 1)
            f = self.levels.get((num_id, k), ("decimal", "", 1))[0]
            label = label.replace(f"%{k + 1}", self._FORMATS.get(f, str)(count))
        label = label.strip() or f"{self.counters[key]}."
        return ilvl, label if label[-1] in ".)" else label + ".", num_id


def _letters(n: int) -> str:
    out = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        out = chr(ord("a") + r) + out
    return out or "a"


def _roman(n: int) -> str:
    out = ""
    for value, numeral in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"),
                           (90, "xc"), (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"),
                           (4, "iv"), (1, "i")):
        while n >= value:
            out += numeral
            n -= value
    return out
