"""The candidate list: a Line-API scroll view that renders only the visible rows and fetches them
in blocks from the store, so 100,000 candidates cost what one screenful does.

Rows come from a `fetch(offset, limit, after_key)` callable (the screen binds it to
`builder.store.review_queue.page_candidates` with the current filter). A block that follows a cached
block is fetched by keyset (after that block's last sort key), so walking down the list never
pays a deep OFFSET and rows that changed meanwhile are not skipped. Blocks live in a small LRU
cache that `reset()` clears. Decisions not yet written show through `overlay` (id -> status).

All text is drawn as plain `Segment`s after `visible()`: never markup, never a control code.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from builder.text.terminal import visible

Fetch = Callable[[int, int, "tuple | None"], list[dict]]

BLOCK = 100
MAX_BLOCKS = 64
STATUS_GLYPH = {"pending": "·", "accepted": "✓", "rejected": "✗", "skipped": "»"}
"""Plus ⚖ (annotators disagree: adjudication), ⧗ (waiting for more decisions) and ◷ after the
glyph while another annotator holds the item."""
COMPACT_BELOW = 46
"""Narrower than this, a row shows its status and question only."""


class CandidateList(ScrollView, can_focus=True):
    """Scrollable list of candidates with a cursor row."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="list.up"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="list.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="list.page_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="list.page_down"),
        Binding("home", "jump(0)", "First", show=False, id="list.first"),
        Binding("end", "jump(-1)", "Last", show=False, id="list.last"),
    ]

    COMPONENT_CLASSES = {
        "candidate-list--cursor",
        "candidate-list--accepted",
        "candidate-list--rejected",
        "candidate-list--skipped",
        "candidate-list--pending",
        "candidate-list--dim",
    }

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)
    """Index of the highlighted row (0-based, in the current filter's order)."""

    class CursorMoved(Message):
        """The user moved the cursor (keys or mouse) to `index` (row may be None if missing)."""

        def __init__(self, index: int, row: dict | None):
            super().__init__()
            self.index = index
            self.row = row

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id)
        self._fetch: Fetch = lambda offset, limit, after: []
        self._count = 0
        self._blocks: OrderedDict[int, list[dict]] = OrderedDict()
        self.overlay: dict[str, str] = {}
        """Statuses decided in this UI but maybe not yet re-read from the store."""
        self.annotator: str | None = None
        """Whose list this is: leases held by anyone else are marked ◷."""

    # ------------------------------------------------------------------ data

    @property
    def count(self) -> int:
        return self._count

    def reset(self, fetch: Fetch | None = None, count: int | None = None,
              cursor: int | None = None) -> None:
        """Drop cached rows (and optionally change source, row count and cursor)."""
        if fetch is not None:
            self._fetch = fetch
        if count is not None:
            self._count = max(0, count)
        self._blocks.clear()
        self.virtual_size = Size(self.size.width, self._count)
        new_cursor = self.cursor if cursor is None else cursor
        self.set_reactive(CandidateList.cursor, max(0, min(new_cursor, self._count - 1)))
        self._scroll_to_cursor()
        self.refresh()

    def prime(self, number: int, rows: list[dict]) -> None:
        """Cache rows already read (block `number`), e.g. the first page of a new filter."""
        self._blocks[number] = rows

    def row(self, index: int) -> dict | None:
        """The row at `index`, fetched (with its block) if not cached."""
        if not 0 <= index < self._count:
            return None
        number, offset = divmod(index, BLOCK)
        block = self._blocks.get(number)
        if block is None:
            previous = self._blocks.get(number - 1)
            if previous is not None and len(previous) == BLOCK:
                block = self._fetch(0, BLOCK, previous[-1]["sort_key"])
            else:
                block = self._fetch(number * BLOCK, BLOCK, None)
            self._blocks[number] = block
            while len(self._blocks) > MAX_BLOCKS:
                self._blocks.popitem(last=False)
        else:
            self._blocks.move_to_end(number)
        return block[offset] if offset < len(block) else None

    def status_of(self, row: dict) -> str:
        return self.overlay.get(row["id"], row["status"])

    def index_of(self, candidate_id: str) -> int | None:
        """Index of a cached row with this id (no query)."""
        for number, block in self._blocks.items():
            for offset, row in enumerate(block):
                if row["id"] == candidate_id:
                    return number * BLOCK + offset
        return None

    # ------------------------------------------------------------------ cursor

    def move_to(self, index: int, *, announce: bool = False) -> None:
        """Put the cursor on `index` (clamped); announce=True posts CursorMoved."""
        index = max(0, min(index, self._count - 1))
        self.cursor = index
        self._scroll_to_cursor()
        self.refresh()
        if announce:
            self.post_message(self.CursorMoved(index, self.row(index)))

    def _scroll_to_cursor(self) -> None:
        if self._count and self.size.height:
            self.scroll_to_region(Region(0, self.cursor, 1, 1), animate=False, immediate=True,
                                  force=True)

    def action_cursor(self, delta: int) -> None:
        self.move_to(self.cursor + delta, announce=True)

    def action_page(self, direction: int) -> None:
        self.move_to(self.cursor + direction * max(1, self.size.height - 1), announce=True)

    def action_jump(self, index: int) -> None:
        self.move_to(index if index >= 0 else self._count - 1, announce=True)

    def on_click(self, event) -> None:
        index = int(self.scroll_offset.y) + event.y
        if 0 <= index < self._count:
            self.focus()
            self.move_to(index, announce=True)

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, self._count)
        self._scroll_to_cursor()

    # ------------------------------------------------------------------ rendering

    def distinct_part(self, index: int, question: str, room: int) -> str:
        """The question as the row can show it in `room` columns: whole if it fits, else,
        when it shares a long beginning with the row above or below ("How many days of unused
        annual leave may…" twice), "…" and the words from where they differ, so neighbouring
        rows can be told apart."""
        question = " ".join((question or "").split()[:200])
        if len(question) <= room or room < 8:
            return question
        shared = 0
        for other in (self.row(index - 1) if index else None, self.row(index + 1)):
            if other is None:
                continue
            text = " ".join((other.get("question") or "").split()[:200])
            n = 0
            for a, b in zip(question, text):
                if a != b:
                    break
                n += 1
            shared = max(shared, n)
        if shared < room // 2:
            return question
        start = question.rfind(" ", 0, shared) + 1  # the start of the word that differs
        return "…" + question[start:]

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_offset.y) + y
        width = self.size.width
        base = self.rich_style
        if index >= self._count:
            return Strip.blank(width, base)
        row = self.row(index)
        if row is None:
            return Strip([Segment(" …", base)]).adjust_cell_length(width, base)
        status = self.status_of(row)
        glyph = STATUS_GLYPH.get(status, "?")
        if row.get("conflict") and status == "pending":
            glyph = "⚖"
        elif row.get("votes") and status == "pending":
            glyph = "⧗"
        held = any(a != self.annotator for a in (row.get("held_by") or "").split("\x1f") if a)
        cursor = index == self.cursor
        line_style = base + self.get_component_rich_style("candidate-list--cursor") \
            if cursor else base
        status_style = self.get_component_rich_style(f"candidate-list--{status}", partial=True) \
            if status in STATUS_GLYPH else Style()
        dim = self.get_component_rich_style("candidate-list--dim", partial=True)
        tags = f"  #{' #'.join(row['tags'].split())}" if row.get("tags") else ""
        segments = [
            Segment("▶" if cursor else " ", line_style),
            Segment(glyph + ("◷" if held else " "), line_style + status_style),
        ]
        if width >= COMPACT_BELOW:  # room for type and difficulty columns
            segments += [
                Segment(f"{visible(row['type'], multiline=False)[:12]:<12} ",
                        line_style + dim),
                Segment(f"{visible(row['difficulty'] or '-', multiline=False)[:6]:<6} ",
                        line_style + dim)]
        room = width - sum(seg.cell_length for seg in segments) - (2 if row.get("edited") else 0)
        segments += [
            Segment(("✎ " if row.get("edited") else "") +
                    visible(self.distinct_part(index, row["question"], room), multiline=False),
                    line_style),
            Segment(visible(tags, multiline=False), line_style + dim),
        ]
        return Strip(segments).adjust_cell_length(width, line_style)
