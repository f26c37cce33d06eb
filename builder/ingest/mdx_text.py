"""MDX (Markdown with JSX, as docs sites built with Docusaurus, Nextra or Astro use) as Markdown.

What is dropped: the front matter (`---` YAML or `+++` TOML at the top; its `title` becomes
the document title), ESM `import`/`export` statements, JSX and HTML tags (`<Tabs>`,
`<Callout type="info">`, `<br/>`, fragments, attributes with `{...}` and quoted `>` included)
and `{...}` expressions (`{props.x}`, `{/* comments */}`). What is kept: all Markdown, and the
text between tags (a `<Callout>`'s words stay); lines inside a component lose the indentation
the component gave them. Code fences and inline code are kept verbatim, JSX in them included.
The result is parsed as Markdown (`blocks.markdown_blocks`); it is the document text the chunk
offsets index. Nothing is evaluated: this is a text transformation only.
"""

from __future__ import annotations

import re

from builder.errors import InputError
from builder.ingest.blocks import markdown_blocks
from builder.ingest.document_text import Extracted

_FRONT_MATTER = re.compile(r"\A(?:---|\+\+\+)[ \t]*\r?\n")
_TITLE = re.compile(r"""^title\s*[:=]\s*(?P<q>["']?)(?P<title>.*?)(?P=q)\s*$""", re.MULTILINE)
_ESM = re.compile(r"^(?:import|export)\b")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^\s<>]+)>")
_TAG_START = re.compile(r"<(?:/|>|[A-Za-z])")
_BLANK_RUNS = re.compile(r"\n[ \t]*(?:\n[ \t]*)+\n")


def mdx_to_text(source: str, display: str) -> Extracted:
    """The Markdown left of an MDX file (see the module docstring)."""
    body, title, _ = strip_front_matter(source)
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    lines = body.split("\n")
    k = 0
    while k < len(lines):
        line = lines[k]
        marker = _FENCE.match(line)
        if fence is not None:
            out.append(line + "\n")
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence) \
                    and not line.strip()[len(marker.group(1)):].strip():
                fence = None
            k += 1
            continue
        if marker:
            out.append(_without_jsx("".join(prose)))
            prose = []
            fence = marker.group(1)
            out.append(line + "\n")
            k += 1
            continue
        if _ESM.match(line):
            k = _skip_statement(lines, k)
            continue
        prose.append(line + "\n")
        k += 1
    out.append(_without_jsx("".join(prose)))
    text = "".join(out)
    text = "\n".join("" if not line.strip() else line.rstrip() for line in text.split("\n"))
    text = _BLANK_RUNS.sub("\n\n", text).strip("\n")
    if not text.strip():
        raise InputError("no text left in this MDX file once its JSX and front matter are "
                         "dropped", path=display)
    return Extracted(text, markdown_blocks(text), title)


def strip_front_matter(source: str) -> tuple[str, str | None, bool]:
    """(the text below a leading `---` YAML or `+++` TOML block, its `title`, whether there
    was one). The body keeps its own leading blank lines out: it starts at its first line."""
    m = _FRONT_MATTER.match(source)
    if not m:
        return source, None, False
    closer = "---" if source.startswith("-") else "+++"
    end = re.search(rf"^(?:{re.escape(closer)}|\.\.\.)[ \t]*$", source[m.end():], re.MULTILINE)
    if end is None:
        return source, None, False
    block = source[m.end():m.end() + end.start()]
    title = _TITLE.search(block)
    body = source[m.end() + end.end():].lstrip("\r\n")
    return body, (title.group("title").strip() or None) if title else None, True


def _skip_statement(lines: list[str], k: int) -> int:
    """Index of the line after the ESM statement starting at line k (brackets balanced)."""
    depth = 0
    while k < len(lines):
        depth += _bracket_balance(lines[k])
        k += 1
        if depth <= 0:
            break
    return k


def _bracket_balance(line: str) -> int:
    balance, quote = 0, None
    for ch in line:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
        elif ch in "([{":
            balance += 1
        elif ch in ")]}":
            balance -= 1
    return balance


def _without_jsx(text: str) -> str:
    """`text` (no code fences in it) with tags and expressions removed, inline code kept."""
    out: list[str] = []
    i, n = 0, len(text)
    depth = 0  # open JSX elements: their children's indentation is dropped
    while i < n:
        ch = text[i]
        if ch == "`":
            run = 1
            while i + run < n and text[i + run] == "`":
                run += 1
            ticks = text[i:i + run]
            close = text.find(ticks, i + run)
            if close != -1 and "\n\n" not in text[i:close]:
                out.append(text[i:close + run])
                i = close + run
                continue
            out.append(ticks)
            i += run
            continue
        if ch == "\\" and i + 1 < n and text[i + 1] in "{}<>":
            out.append(text[i:i + 2])
            i += 2
            continue
        if ch == "{":
            i = _skip_balanced(text, i)
            continue
        if ch == "<":
            if text.startswith("<!--", i):
                end = text.find("-->", i + 4)
                i = n if end == -1 else end + 3
                continue
            link = _AUTOLINK.match(text, i)
            if link:
                out.append(link.group(1))
                i = link.end()
                continue
            if _TAG_START.match(text, i):
                end = _tag_end(text, i)
                tag = text[i:end]
                if tag.startswith("</"):
                    depth = max(0, depth - 1)
                elif not tag.rstrip(">").rstrip().endswith("/"):
                    depth += 1
                i = end
                continue
        if ch == "\n" and depth:
            out.append("\n")
            i += 1
            while i < n and text[i] in " \t":
                i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _skip_balanced(text: str, i: int) -> int:
    """Index after the `{...}` expression starting at text[i] (strings and nesting aware)."""
    depth, quote = 0, None
    n = len(text)
    while i < n:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _tag_end(text: str, i: int) -> int:
    """Index after the tag starting at text[i]: its `>`, skipping quoted values and {...}."""
    n = len(text)
    j = i + 1
    quote = None
    while j < n:
        ch = text[j]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "{":
            j = _skip_balanced(text, j)
            continue
        elif ch == ">":
            return j + 1
        j += 1
    return n
