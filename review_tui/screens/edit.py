"""Editing a candidate's question, answer, type and difficulty, with the generated original
shown beside the edit (the original is never overwritten; see builder/store/review_log.py).

TextArea keeps printable keys and ctrl+a/e/k/u/w/x/c/v/z/y for itself, so while a field has
focus the review keys use modifiers TextArea leaves alone, as priority bindings:
ctrl+s save, ctrl+n / ctrl+p save and move, ctrl+o save and accept (all remappable by id).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Select, Static, TextArea

from builder.vocabulary import DIFFICULTIES, ITEM_TYPES
from builder.text.terminal import visible
from review_tui.widgets.detail import clipped_text
from review_tui.widgets.footer import KeyFooter


@dataclass
class EditResult:
    """Fields to write (name -> new value; only changed ones) and what to do after saving."""

    edits: dict[str, str | None] = field(default_factory=dict)
    then: str | None = None  # None | "next" | "prev" | "accept"


class EditScreen(ModalScreen[EditResult | None]):
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True, id="edit.save"),
        Binding("ctrl+n", "save('next')", "Save+next", priority=True, id="edit.save_next"),
        Binding("ctrl+p", "save('prev')", "Save+prev", priority=True, id="edit.save_prev"),
        Binding("ctrl+o", "save('accept')", "Save+accept", priority=True,
                id="edit.save_accept"),
        Binding("escape", "cancel", "Cancel", id="edit.cancel"),
    ]

    def __init__(self, candidate: dict):
        super().__init__()
        self.candidate = candidate

    def _current(self, name: str) -> str:
        c = self.candidate
        value = c.get(f"edit_{name}")
        return value if value is not None else (c.get(name) or "")

    def compose(self) -> ComposeResult:
        c = self.candidate
        with Vertical(id="edit-dialog"):
            yield Static(Text("Edit candidate — the generated original stays on the left",
                              "bold"), classes="dialog-title")
            with Horizontal():
                with VerticalScroll(classes="edit-original"):
                    yield Label("Generated question")
                    yield Static(clipped_text(c["question"]), classes="original")
                    yield Label("Generated answer")
                    yield Static(clipped_text(c["answer"]), classes="original")
                    original = Text("type: ", "bold")
                    original.append(visible(c["type"], multiline=False))
                    original.append("   difficulty: ", "bold")
                    original.append(visible(c.get("difficulty") or "-", multiline=False))
                    yield Static(original, classes="original")
                with Vertical(classes="edit-fields"):
                    yield Label("Question")
                    # Loaded with controls made visible: no escape sequence reaches the terminal.
                    yield TextArea(visible(self._current("question")), id="edit-question",
                                   soft_wrap=True)
                    yield Label("Answer")
                    yield TextArea(visible(self._current("answer")), id="edit-answer",
                                   soft_wrap=True)
                    with Horizontal(classes="edit-selects"):
                        types = list(ITEM_TYPES) + ([c["type"]] if c["type"] not in ITEM_TYPES
                                                    else [])
                        yield Select([(Text(visible(t, multiline=False)), t) for t in types],
                                     value=self._current("type"), allow_blank=False,
                                     id="edit-type")
                        diffs = list(DIFFICULTIES)
                        current = self._current("difficulty")
                        yield Select([(d, d) for d in diffs],
                                     value=current if current in diffs else Select.NULL,
                                     id="edit-difficulty")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#edit-question", TextArea).focus()

    def result(self, then: str | None = None) -> EditResult:
        """The changed fields. Text equal to the shown (control-glyph) form of the generated
        original counts as the original, so merely opening the editor changes nothing."""
        c = self.candidate
        edits: dict[str, str | None] = {}
        for name in ("question", "answer"):
            value = self.query_one(f"#edit-{name}", TextArea).text.strip()
            if value == visible(c[name]).strip():
                value = c[name]
            if value != self._current(name):
                edits[name] = value
        for name in ("type", "difficulty"):
            value = self.query_one(f"#edit-{name}", Select).value
            value = None if value == Select.NULL else value
            if value is not None and value != (self._current(name) or None):
                edits[name] = value
        return EditResult(edits, then)

    def action_save(self, then: str | None = None) -> None:
        self.dismiss(self.result(then))

    def action_cancel(self) -> None:
        self.dismiss(None)
