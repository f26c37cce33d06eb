"""Untrusted text (knowledge-base text, LLM output, user edits) made safe to put on screen.

Guarantees: what comes out is a rich `Text` (never parsed as markup, so `[bold]`, `[/]` or
`[@click=app.quit]x[/]` show literally and cannot run an action) whose characters are shown by
`builder.text.terminal.visible`: no C0 or C1 control, DEL, bidirectional control or lone
surrogate, each replaced by a visible glyph (ESC -> '␛'), so no escape sequence ever reaches
the terminal. Newlines (and tabs) are kept where the caller asks for multi-line text.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from builder.text.terminal import visible


def safe_text(text: str | None, style: str | Style = "", *, multiline: bool = True) -> Text:
    """A `Text` showing `text` literally (markup is not interpreted, controls made visible)."""
    return Text(visible(text, multiline=multiline), style=style)
