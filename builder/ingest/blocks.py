"""Split a document's text into blocks (headings, paragraphs, fenced code, tables) with offsets.

Blocks are what the chunker packs; they never overlap and appear in text order. Offsets index
the document text exactly as decoded (no newline translation), so `text[b.start:b.end]` is the
block's own text. A block always starts at the beginning of a line and ends at the end of its
last non-blank line (trailing newline excluded).

Markdown rules (a practical subset of CommonMark/GFM, chosen for speed on large corpora):
- ATX headings `#`..`######` (up to 3 spaces of indent); setext headings are read as paragraphs.
- Fenced code opens with 3+ backticks or tildes and closes with a line of at least as many of
  the same character; an unclosed fence runs to the end of the document.
- A table is a run of consecutive non-blank lines whose second line is a delimiter row
  (`|---|:--:|`), or a run of lines that all start with `|`.
- Everything else is a paragraph: consecutive non-blank lines (lists included), ended by a
  blank line, a heading or a fence.
Plain text (`.txt`) has paragraphs only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_DELIMITER_ROW = re.compile(r"\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


@dataclass(slots=True)
class Block:
    kind: str  # heading | paragraph | code | table
    start: int
    end: int
    level: int = 0  # heading level, 1-6
    heading: str = ""  # heading text (without the #s)


def _lines(text: str) -> list[tuple[int, str]]:
    """(offset, line without its newline or trailing \\r) for every line of `text`."""
    out = []
    pos = 0
    for line in text.split("\n"):
        out.append((pos, line[:-1] if line.endswith("\r") else line))
        pos += len(line) + 1
    return out


def markdown_blocks(text: str) -> list[Block]:
    """Blocks of a Markdown document (see the module docstring for the rules)."""
    lines = _lines(text)
    blocks: list[Block] = []
    n = len(lines)
    i = 0
    while i < n:
        pos, line = lines[i]
        if not line.strip():
            i += 1
            continue
        if "#" in line[:4]:
            m = _ATX.match(line)
            if m:
                blocks.append(Block("heading", pos, pos + len(line), len(m.group(1)),
                                    m.group(2).strip()))
                i += 1
                continue
        fence = _FENCE.match(line) if ("`" in line[:4] or "~" in line[:4]) else None
        if fence:
            marker = fence.group(1)
            j = i + 1
            while j < n:
                stripped = lines[j][1].strip()
                if stripped.startswith(marker) and stripped == stripped[0] * len(stripped) \
                        and len(lines[j][1]) - len(lines[j][1].lstrip(" ")) <= 3:
                    break
                j += 1
            last = min(j, n - 1)
            end = lines[last][0] + len(lines[last][1])
            blocks.append(Block("code", pos, _rstrip_end(text, pos, end)))
            i = last + 1
            continue
        # A run of plain lines, ended by a blank line, a heading or a fence.
        j = i + 1
        while j < n:
            nxt = lines[j][1]
            if not nxt.strip():
                break
            if ("#" in nxt[:4] and _ATX.match(nxt)) or (
                    ("`" in nxt[:4] or "~" in nxt[:4]) and _FENCE.match(nxt)):
                break
            j += 1
        end = lines[j - 1][0] + len(lines[j - 1][1])
        is_table = (j - i >= 2 and "|" in line and "-" in lines[i + 1][1]
                    and _DELIMITER_ROW.match(lines[i + 1][1]) is not None) or all(
            lines[k][1].lstrip().startswith("|") for k in range(i, j))
        blocks.append(Block("table" if is_table else "paragraph", pos,
                            _rstrip_end(text, pos, end)))
        i = j
    return blocks


def text_blocks(text: str) -> list[Block]:
    """Blocks of a plain-text document: paragraphs separated by blank lines."""
    blocks: list[Block] = []
    start = None
    end = 0
    for pos, line in _lines(text):
        if line.strip():
            if start is None:
                start = pos
            end = pos + len(line)
        elif start is not None:
            blocks.append(Block("paragraph", start, _rstrip_end(text, start, end)))
            start = None
    if start is not None:
        blocks.append(Block("paragraph", start, _rstrip_end(text, start, end)))
    return blocks


def _rstrip_end(text: str, start: int, end: int) -> int:
    """Move `end` back over trailing whitespace so a block never ends in blanks."""
    while end > start and text[end - 1].isspace():
        end -= 1
    return end
