"""The knowledge-base search dialog (key K on the review screen): `ChunkSearch` full screen,
prefilled with the current question. Escape closes it; with `select=True` enter on the list
closes it returning the chunks marked relevant (space), for a screen that needs them (key m:
the relevant chunks of the current item, starting from those `marked` already)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList

from builder.store import Store
from review_tui.widgets.chunk_search import ChunkSearch
from review_tui.widgets.footer import KeyFooter


class KBSearchScreen(ModalScreen[list[str] | None]):
    BINDINGS = [
        Binding("escape", "close", "Close", id="kb.close"),
    ]

    def __init__(self, store: Store, query: str = "", *, select: bool = False,
                 marked: list[str] | None = None):
        super().__init__()
        self.store = store
        self.initial = query
        self.select = select
        self.marked = list(marked or [])

    def compose(self) -> ComposeResult:
        yield ChunkSearch(self.store, self.initial, id="kb-search", marked=self.marked)
        yield KeyFooter(compact=True)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if self.select:
            self.dismiss(list(self.query_one(ChunkSearch).marked))

    def action_close(self) -> None:
        self.dismiss(list(self.query_one(ChunkSearch).marked) if self.select else None)
