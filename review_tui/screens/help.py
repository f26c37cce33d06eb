"""Help: the annotation guidelines (review_tui/guidelines.md, project-controlled, so Markdown is
fine) and the keys in force (after any keymap) for the screen that opened it."""

from __future__ import annotations

from importlib import resources

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.keys import format_key
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static


def guidelines_text() -> str:
    return resources.files("review_tui").joinpath("guidelines.md").read_text(encoding="utf-8")


def keys_text(bindings: list[Binding], keymap: dict[str, str]) -> Text:
    """One line per binding: keys (remapped ones as configured), description, id."""
    out = Text()
    for b in bindings:
        keys = keymap.get(b.id, b.key) if b.id else b.key
        shown = ", ".join(format_key(k.strip()) for k in keys.split(","))
        out.append(f"{shown:>16}  ", "bold cyan")
        out.append(f"{b.description or b.action:<28}")
        out.append(f" {b.id or ''}\n", "dim")
    return out


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "close", "Close", id="help.close")]

    def __init__(self, bindings: list[Binding], keymap: dict[str, str]):
        super().__init__()
        self.bindings = bindings
        self.keymap = keymap

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            with VerticalScroll():
                yield Static(Text("Keys (remap by id in [review.keys] of golden.toml or "
                                  "--keymap FILE)", "bold"))
                yield Static(keys_text(self.bindings, self.keymap))
                yield Markdown(guidelines_text(), id="guidelines")

    def action_close(self) -> None:
        self.dismiss(None)
