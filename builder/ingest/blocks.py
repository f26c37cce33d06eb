"""Split a document's text into blocks (headings, paragraphs, fenced code, tables) with offsets.

Blocks are what the chunker packs; they never overlap and appear in text order. Offsets index
the document text exactly as decoded (no newline translation), so `text[b.start:b.end]` is the
block's own text. A block always starts at the beginning of a line and ends at the end of its
last non-blank line (trailing newline excluded).

Markdown blocks are read by `builder.text.markdown.line_blocks`, the one reading of Markdown
block structure golden has (the statement splitter uses it too); its docstring has the rules.
Plain text (`.txt`) has paragraphs only.
"""

from __future__ import annotations

from builder.text.markdown import Block, line_blocks

__all__ = ["Block", "markdown_blocks", "text_blocks"]


def _lines(text: str) -> list[tuple[int, str]]:
    """(offset, line without its newline or trailing \\r) for every line of `text`."""
    out = []
    pos = 0
    for line in text.split("\n"):
        out.append((pos, line[:-1] if line.endswith("\r") else line))
        pos += len(line) + 1
    return out


def markdown_blocks(text: str) -> list[Block]:
    """Blocks of a Markdown document (rules: `builder.text.markdown`), with offsets."""
    lines = _lines(text)
    blocks = []
    for b in line_blocks([line for _, line in lines]):
        start = lines[b.start][0]
        end = lines[b.end - 1][0] + len(lines[b.end - 1][1])
        if b.kind != "heading":  # a heading block is its whole line
            end = _rstrip_end(text, start, end)
        blocks.append(Block(b.kind, start, end, b.level, b.heading))
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
