"""The one reading of Markdown's block structure: which lines are headings, fenced code, tables
and paragraphs. The chunker (`ingest/blocks.py`) packs these blocks into chunks; the statement
splitter (`generate/statements.py`) cuts facts out of them. Both call `line_blocks`, so a fence
or a table is the same thing to both.

Rules (a practical subset of CommonMark/GFM, chosen for speed on large corpora):
- ATX headings `#`..`######` (up to 3 spaces of indent).
- Fenced code opens with 3+ backticks or tildes (up to 3 spaces of indent) and closes with a line
  of at least as many of the same character and nothing else; an unclosed fence runs to the end.
- Everything else is a run of consecutive non-blank lines, ended by a blank line, a heading or a
  fence. A run holds a table from the first line that is a table's header (it has a `|` and
  the next line is a delimiter row `|---|:--:|`, as GFM reads a header after paragraph text),
  or from the first line from which every line starts with `|`, to the end of the run; what
  comes before it in the run is a paragraph. Lists, block quotes, setext headings and rules are
  paragraph lines here; the statement splitter reads those finer structures itself.

Cells of a table row: `cell_spans` (pipes inside backticks and escaped `\\|` do not split).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ATX_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)(.*?)(?:[ \t]+#+)?[ \t]*$")
FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
# An Obsidian block id closing a line ("Sídney, Australia ^sync-geo-regions") or on a line of
# its own under the block it names (a quote, a list: Obsidian's help does both): a link target,
# not text, so it is never part of a statement or an answer.
BLOCK_ID = re.compile(r"(?:[ \t]+|^[ \t]*)\^[A-Za-z0-9][A-Za-z0-9-]*(?=[ \t]*$)", re.M)
# Link markup: a wiki link "[[Page#Heading|shown text]]" and a Markdown link "[text](url)".
WIKI_LINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]+))?\]\]")
MD_LINK = re.compile(r"\[([^\]]+)\]\([^)\s]*\)")
DELIMITER_ROW = re.compile(r"\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


@dataclass(slots=True)
class Block:
    """One block: `start` .. `end` are line numbers (end excluded) from `line_blocks`, and
    character offsets once a caller maps them onto its text (`ingest.blocks.markdown_blocks`)."""

    kind: str  # heading | paragraph | code | table
    start: int
    end: int
    level: int = 0  # heading level, 1-6
    heading: str = ""  # heading text (without the #s)


def _heading(line: str) -> re.Match | None:
    return ATX_HEADING.match(line) if "#" in line[:4] else None


def _fence(line: str) -> re.Match | None:
    return FENCE.match(line) if ("`" in line[:4] or "~" in line[:4]) else None


def fence_closes(line: str, marker: str) -> bool:
    """True when `line` closes a fence opened with `marker` (e.g. "```")."""
    stripped = line.strip()
    return (stripped.startswith(marker) and stripped == stripped[0] * len(stripped)
            and len(line) - len(line.lstrip(" ")) <= 3)


def table_start(run: list[str]) -> int | None:
    """Index of the line where a table begins in a run of non-blank lines, or None."""
    for k in range(len(run) - 1):
        nxt = run[k + 1]
        if "|" in run[k] and "-" in nxt and DELIMITER_ROW.match(nxt):
            return k
    piped = len(run)  # the run's tail of lines that all start with "|"
    while piped > 0 and run[piped - 1].lstrip().startswith("|"):
        piped -= 1
    return piped if piped < len(run) else None


def line_blocks(lines: list[str]) -> list[Block]:
    """The blocks of a document given as its lines (without newlines), in order; blank lines
    belong to no block."""
    blocks: list[Block] = []
    n = len(lines)
    i = 0
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if m := _heading(line):
            blocks.append(Block("heading", i, i + 1, len(m.group(1)), m.group(2).strip()))
            i += 1
            continue
        if fence := _fence(line):
            marker = fence.group(1)
            j = i + 1
            while j < n and not fence_closes(lines[j], marker):
                j += 1
            last = min(j, n - 1)
            blocks.append(Block("code", i, last + 1))
            i = last + 1
            continue
        j = i + 1
        while j < n:
            nxt = lines[j]
            if not nxt.strip() or _heading(nxt) or _fence(nxt):
                break
            j += 1
        start = table_start(lines[i:j])
        if start is None:
            blocks.append(Block("paragraph", i, j))
        else:
            if start:
                blocks.append(Block("paragraph", i, i + start))
            blocks.append(Block("table", i + start, j))
        i = j
    return blocks


def cell_spans(row: str) -> list[tuple[int, int]]:
    """(start, end) of each cell of a table row, whitespace trimmed: split at pipes, except an
    escaped `\\|` and pipes inside backticks; the row's outer pipes are not cell borders."""
    spans, in_code = [], False
    lead = len(row) - len(row.lstrip())
    body_end = len(row.rstrip())
    i = lead + 1 if row[lead:lead + 1] == "|" else lead
    start = i
    while i < body_end:
        ch = row[i]
        if ch == "\\" and row[i + 1:i + 2] == "|":
            i += 2
            continue
        if ch == "`":
            in_code = not in_code
        if ch == "|" and not in_code:
            spans.append((start, i))
            start = i + 1
        i += 1
    if start < body_end:
        spans.append((start, body_end))
    out = []
    for s, e in spans:
        while s < e and row[s].isspace():
            s += 1
        while e > s and row[e - 1].isspace():
            e -= 1
        out.append((s, e))
    return out
