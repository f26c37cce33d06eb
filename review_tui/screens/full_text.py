"""The whole of a candidate's long fields (key w): the detail pane clips a question or answer
past a few screens (review_tui/widgets/detail.py), this shows every line in a read-only
`TextArea`, which lays out only the lines on screen, so a 10,000-line answer opens at once.
Controls are made visible first (a TextArea shows markup literally; escapes would still reach
the terminal)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from builder.text.terminal import visible


def full_text(candidate: dict) -> str:
    """Question and answer (the edits and the generated originals), headed, as plain text."""
    parts = []
    for name, title in (("question", "QUESTION"), ("answer", "REFERENCE ANSWER")):
        edit = candidate.get(f"edit_{name}")
        if edit is not None:
            parts += [f"{title} (edited)", edit, f"{title} (generated)", candidate.get(name) or ""]
        else:
            parts += [title, candidate.get(name) or ""]
    production = (candidate.get("provenance") or {}) if isinstance(
        candidate.get("provenance"), dict) else {}
    if production.get("production_answer"):
        parts += ["PRODUCTION ANSWERED", str(production["production_answer"])]
    return "\n\n".join(visible(part) for part in parts)


class FullTextScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,w,q", "close", "Close", id="full.close")]

    def __init__(self, candidate: dict):
        super().__init__()
        self.candidate = candidate

    def compose(self) -> ComposeResult:
        with Vertical(id="full-text"):
            yield Static(f"{visible(self.candidate['id'], multiline=False)} · whole text "
                         f"(escape closes)", markup=False, classes="dialog-title")
            yield TextArea(full_text(self.candidate), read_only=True, soft_wrap=True,
                           id="full-text-area")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_close(self) -> None:
        self.dismiss(None)
