"""`ChunkSearch`: search the knowledge base (FTS5 over the chunks, BM25) and read the results,
the matched words highlighted; optionally mark chunks (space) as the relevant ones.

Reusable on any screen: the review screen opens it (key K) to check that an "unanswerable"
item really has no answer, and a screen that writes a reference answer for a candidate that
has none can use its marks as that candidate's relevant chunks (`marked`, in marking order).

Guarantees: chunk text, titles and headings are shown as `Text` after `visible()`: never
markup, never an escape sequence; the query reaches FTS5 as quoted words, never syntax.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from builder.store import Store
from builder.store.jsoncols import from_json
from builder.store.search import kb_search
from builder.text.terminal import visible
from review_tui.widgets.detail import highlighted

MATCH = "bold black on yellow"
PAGE = 30
SNIPPET = 160


def snippet(text: str, spans: list[tuple[int, int]], width: int = SNIPPET) -> Text:
    """A one-line window of `text` around its first match, matches highlighted."""
    start = max(0, spans[0][0] - width // 3) if spans else 0
    end = min(len(text), start + width)
    inside = [(max(a, start) - start, min(b, end) - start) for a, b in spans
              if b > start and a < end]
    out = Text("…" if start else "", "dim")
    # Newlines become spaces (same length, so the offsets still hold): one line per result.
    out.append_text(highlighted(text[start:end].replace("\n", " "), inside))
    if end < len(text):
        out.append("…", "dim")
    return out


def result_label(row: dict, marked: bool) -> Text:
    """Two lines per result: where the chunk is (document › headings · id) and a snippet."""
    out = Text("[x] " if marked else "[ ] ", "bold green" if marked else "dim")
    out.append(visible(row.get("document_title") or row["document_id"] or "?",
                       multiline=False), "bold")
    heading = from_json(row.get("heading_path"), [])
    if isinstance(heading, list) and heading:
        out.append(" › " + " › ".join(visible(str(h), multiline=False) for h in heading))
    out.append(f"  {visible(row['id'], multiline=False)}", "dim")
    out.append("\n    ")
    out.append_text(snippet(row["text"], row["spans"]))
    return out


class ChunkSearch(Vertical):
    """Search field, result list and the full text of the highlighted result."""

    BINDINGS = [
        Binding("space", "toggle_mark", "Mark relevant", id="kb.mark"),
    ]

    class Marked(Message):
        """The set of marked chunk ids changed."""

        def __init__(self, marked: list[str]):
            super().__init__()
            self.marked = marked

    def __init__(self, store: Store, query: str = "", *, id: str | None = None,
                 marked: list[str] | None = None):
        super().__init__(id=id)
        self.store = store
        self.initial = query
        self.rows: list[dict] = []
        self.marked: list[str] = list(marked or [])
        """Chunk ids marked relevant, in marking order (`marked`: already marked ones)."""

    def compose(self) -> ComposeResult:
        yield Input(value=visible(self.initial, multiline=False),
                    placeholder="words to look for in the knowledge base — enter searches",
                    id="kb-query", compact=True)
        yield Static(Text("", "dim"), id="kb-count")
        yield OptionList(id="kb-results")
        with VerticalScroll(id="kb-preview"):
            yield Static(Text(""), id="kb-text")

    def on_mount(self) -> None:
        if self.initial.strip():
            self.search(self.initial)
        self.query_one("#kb-query", Input).focus()

    def search(self, text: str) -> None:
        """Run the search and show the first PAGE results."""
        self.rows = kb_search(self.store, text, k=PAGE)
        results = self.query_one("#kb-results", OptionList)
        results.clear_options()
        results.add_options([Option(result_label(r, r["id"] in self.marked), id=r["id"])
                             for r in self.rows])
        self._show_count()
        if self.rows:
            results.highlighted = 0
            self._preview(0)
        else:
            self.query_one("#kb-text", Static).update(Text(""))

    def _show_count(self) -> None:
        count = (f"{len(self.rows)}{'+' if len(self.rows) == PAGE else ''} chunks match"
                 if self.rows else "no chunk matches these words")
        if self.marked:
            count += f" · {len(self.marked)} marked: {', '.join(self.marked[:4])}"
            count += " …" if len(self.marked) > 4 else ""
        self.query_one("#kb-count", Static).update(Text(visible(count, multiline=False),
                                                        "dim"))

    def _preview(self, index: int | None) -> None:
        if index is None or not 0 <= index < len(self.rows):
            return
        row = self.rows[index]
        body = Text(visible(row["id"], multiline=False) + "\n", "dim")
        body.append_text(highlighted(row["text"], row["spans"]))
        self.query_one("#kb-text", Static).update(body)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "kb-query":
            event.stop()
            self.search(event.value)
            self.query_one("#kb-results", OptionList).focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._preview(event.option_index)

    def action_toggle_mark(self) -> None:
        results = self.query_one("#kb-results", OptionList)
        index = results.highlighted
        if index is None or not 0 <= index < len(self.rows):
            return
        cid = self.rows[index]["id"]
        if cid in self.marked:
            self.marked.remove(cid)
        else:
            self.marked.append(cid)
        results.replace_option_prompt_at_index(index, result_label(self.rows[index],
                                                                   cid in self.marked))
        self._show_count()
        self.post_message(self.Marked(list(self.marked)))
