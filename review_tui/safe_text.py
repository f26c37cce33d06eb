"""Untrusted text (knowledge-base text, LLM output, user edits) made safe to put on screen.

Guarantees: what comes out is a rich `Text` (never parsed as markup, so `[bold]`, `[/]` or
`[@click=app.quit]x[/]` show literally and cannot run an action) whose characters contain no
C0 control, DEL, C1 control or bidirectional override: each is replaced by a visible glyph
(ESC -> '␛'), so no escape sequence ever reaches the terminal. Newlines (and tabs) are kept
where the caller asks for multi-line text.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

# Bidi overrides/isolates can reorder what a reviewer sees ("Trojan Source").
_BIDI = {0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def _glyph(code: int) -> str:
    if code < 0x20:
        return chr(0x2400 + code)          # ␀ .. ␟ (ESC -> ␛)
    if code == 0x7F:
        return "\u2421"                   # ␡
    return f"\u27e8U+{code:04X}\u27e9"    # ⟨U+009B⟩ for C1 and bidi controls


def _table(keep_newlines: bool) -> dict[int, str]:
    table = {c: _glyph(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0), *_BIDI)}
    if keep_newlines:
        del table[0x0A]
        table[0x09] = "    "
    else:
        table[0x0A] = " \u23ce "            # ⏎
        table[0x09] = " "
    return table


_MULTI = _table(True)
_SINGLE = _table(False)


def visible(text: str | None, *, multiline: bool = True) -> str:
    """`text` with every control character replaced by a visible glyph (see module doc)."""
    if not text:
        return ""
    return str(text).translate(_MULTI if multiline else _SINGLE)


def safe_text(text: str | None, style: str | Style = "", *, multiline: bool = True) -> Text:
    """A `Text` showing `text` literally (markup is not interpreted, controls made visible)."""
    return Text(visible(text, multiline=multiline), style=style)
