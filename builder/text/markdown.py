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

Finer structure, by character offsets (`span_blocks`): a paragraph cut into list items and
prose (block-quote markers, rules and setext headings left out), and table rows; the list
around an offset (`list_around`, `step_at`), the heading above it (`section_heading`), and
inline markup removed (`plain`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ATX_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)(.*?)(?:[ \t]+#+)?[ \t]*$")
FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
# A wiki-style block id closing a line ("Sídney, Australia ^geo-regions") or on a line of its
# own under the block it names (a quote, a list: note-taking apps write both): a link target,
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
            blocks.append(Block("heading", i, i + 1, len(m.group(1)), heading_words(m.group(2))))
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


# -- spans: prose, list items and table rows by character offsets ----------------------------
_QUOTE = re.compile(r"[ \t]{0,3}>[ \t]?")
_RULE = re.compile(r"[ \t]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_SETEXT = re.compile(r"[ \t]{0,3}(?:=+|-+)[ \t]*$")
_ITEM = re.compile(r"([ \t]*)([-*+]|\d{1,3}[.)])[ \t]+(?=\S)")  # indent, marker
HEADING_LINE = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)


def _wiki_target(m: re.Match) -> str:
    """A wiki link with no label reads as its page, and a heading in it as the page's section
    ("[[Fees#Refunds]]" -> "Fees > Refunds"), as wiki-style editors show it."""
    return " > ".join(part.strip() for part in m.group(1).split("#") if part.strip())


_MARKUP = [
    (BLOCK_ID, ""),                                            # block ids
    (re.compile(r"!\[\[[^\]\n]*\]\]"), ""),                     # wiki embeds: a file, no words
    (re.compile(r"\[\[(?:[^\]|\n]*?)\\?\|([^\]\n]+)\]\]"), r"\1"),     # wiki links: their label
    (re.compile(r"\[\[([^\]|\n]+?)(?:\.md)?\]\]"), _wiki_target),     # or their page
    (re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),          # links and images
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1"),           # reference links
    (re.compile(r"<([a-z]+:[^>\s]+)>", re.I), r"\1"),          # autolinks
    (re.compile(r"<br\s*/?>", re.I), " "),
    (re.compile(r"(`+)(.+?)\1"), r"\2"),                       # inline code
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),     # bold
    (re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])"), r"\1"),  # italic
    (re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])"), r"\1"),
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1"),
    (re.compile(r"\n[ \t]*>[ \t]?"), "\n"),                    # inner blockquote markers
]


_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_HEADING_ID = re.compile(r"[ \t]*\{#[^{}]*\}[ \t]*$")           # "## Fees {#fees}"
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>])")


def heading_words(raw: str) -> str:
    """A heading's words as a reader sees them: the anchors and ids a docs site adds
    (`<a id="fees"></a>`, `{#fees}`), link targets, emphasis and backslash escapes gone. A
    heading is shown with every sentence under it (to the question writer and the reader), so
    its markup would be paid for many times and read as words."""
    parts = re.split(r"(`+[^`]*`+)", _HEADING_ID.sub("", raw))  # code keeps its "<T>"
    text = "".join(p if i % 2 else _ESCAPED.sub(r"\1", _TAG.sub(" ", p))
                   for i, p in enumerate(parts))
    return plain(text)


def plain(markdown: str) -> str:
    """Markdown inline markup removed (emphasis, code, links, wiki links), whitespace collapsed."""
    out = markdown
    for pattern, repl in _MARKUP:
        out = pattern.sub(repl, out)
    return " ".join(out.split())


def section_heading(text: str, offset: int) -> str | None:
    """The last Markdown heading above `offset` in `text` (None when there is none)."""
    found = None
    for m in HEADING_LINE.finditer(text, 0, offset):
        found = heading_words(m.group(1))
    return found


def list_around(text: str, offset: int) -> tuple[list[tuple[int, int]], int] | None:
    """The items of the list that holds `offset` in `text` (each item's span without its
    marker, as `span_blocks` reads them) and the index of the one holding it; None when
    `offset` is in no list item. A list is a run of items with no prose, table or heading
    between them."""
    run: list[tuple[int, int]] = []
    found = None
    for kind, spans in span_blocks(text) + [("end", [])]:
        if kind == "item":
            start, end = spans[0]
            if start <= offset < end:
                found = len(run)
            run.append((start, end))
            continue
        if found is not None:
            return run, found
        run = []
    return None


def step_at(text: str, offset: int | None) -> bool:
    """Whether `offset` of `text` is in an item of a numbered list ("3. Configure the client to
    use the certificates stored in `client.pem`."): a step of a procedure, which holds only within
    the procedure its heading names."""
    found = list_around(text, offset) if offset is not None else None
    if found is None:
        return False
    items, at = found
    start = items[at][0]
    pos = text.rfind("\n", 0, start) + 1
    while (quote := _QUOTE.match(text, pos, start)) and quote.end() > pos:
        pos = quote.end()
    marker = _ITEM.match(text, pos)
    return bool(marker) and marker.end() == start and marker.group(2)[0].isdigit()


def _lines(text: str) -> list[tuple[int, int, int]]:
    """(line start, content start after blockquote markers, line end without newline)."""
    out = []
    pos = 0
    for line in text.split("\n"):
        end = pos + len(line)
        content = pos
        while (m := _QUOTE.match(text, content, end)) and m.end() > content:
            content = m.end()
        out.append((pos, content, end))
        pos = end + 1
    return out


def span_blocks(text: str) -> list[tuple[str, list[tuple[int, int]]]]:
    """("prose" | "item", [(start, end)]) or ("table", [(start, end) per row]), in order.

    Headings, fenced code, tables and paragraphs are read by `line_blocks` (the chunker's
    reading), on each line's content after block-quote markers; a paragraph is
    then cut into list items and prose here, and its rules and setext headings dropped. Prose
    and item spans run from the first content character to the last; table spans are whole row
    lines without leading/trailing whitespace."""
    lines = _lines(text)
    contents = [text[cs:le] for _, cs, le in lines]
    blocks: list[tuple[str, list[tuple[int, int]]]] = []
    for block in line_blocks(contents):
        if block.kind == "table":
            rows = []
            for _, cs, le in lines[block.start:block.end]:
                cs += len(text[cs:le]) - len(text[cs:le].lstrip())
                rows.append((cs, _rstrip(text, cs, le)))
            blocks.append(("table", rows))
        elif block.kind == "paragraph":
            blocks.extend(_paragraph_blocks(text, lines, block.start, block.end))
    return blocks


def _paragraph_blocks(text: str, lines: list[tuple[int, int, int]], first: int, end: int
                      ) -> list[tuple[str, list[tuple[int, int]]]]:
    """The list items and prose of paragraph lines `first` .. `end` (excluded), without rules
    and setext headings."""
    blocks: list[tuple[str, list[tuple[int, int]]]] = []
    current: list | None = None  # [kind, start, end]

    def close() -> None:
        nonlocal current
        if current is not None:
            blocks.append((current[0], [(current[1], current[2])]))
            current = None

    i = first
    while i < end:
        _, cs, le = lines[i]
        content = text[cs:le]
        i += 1
        if _RULE.match(content):
            close()
            continue
        if m := _ITEM.match(content):
            close()
            current = ["item", cs + m.end(), _rstrip(text, cs, le)]
            continue
        if current is None and i < end and _SETEXT.match(text[lines[i][1]:lines[i][2]]):
            i += 1  # setext heading: the text line and its underline
            continue
        if current is None:
            lead = len(content) - len(content.lstrip())
            current = ["prose", cs + lead, _rstrip(text, cs, le)]
        else:  # continuation (or lazy continuation) of a paragraph or list item
            current[2] = _rstrip(text, cs, le)
    close()
    return blocks


def _rstrip(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end
