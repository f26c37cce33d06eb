"""Judge calibration: a human scores answers from a scored run, 1-5 for faithfulness then
correctness, without seeing the judge's scores (the queue never selects them). Each score is
written at once to `calibration` through the app's writer; the scorer computes agreement."""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from builder.store import Store
from builder.store import calibration
from builder.text.terminal import visible
from review_tui.widgets.footer import KeyFooter

SCALE = "1 = wrong/unsupported · 3 = partly · 5 = fully right/supported"


class CalibrationScreen(Screen):
    BINDINGS = [
        *(Binding(str(i), f"score({i})", f"Score {i}", show=i in (1, 5),
                  id=f"calibrate.score_{i}") for i in range(1, 6)),
        Binding("tab", "switch_metric", "Metric", id="calibrate.switch"),
        Binding("n", "move(1)", "Next", id="calibrate.next"),
        Binding("p", "move(-1)", "Prev", id="calibrate.prev"),
        Binding("question_mark", "help", "Help", id="calibrate.help"),
        Binding("q", "quit", "Quit", id="calibrate.quit"),
    ]

    def __init__(self, store: Store, annotator: str, writer, run_id: str | None = None):
        super().__init__()
        self.store = store
        self.annotator = annotator
        self.writer = writer
        self.run_id = run_id
        self.items = calibration.calibration_queue(store, annotator, run_id)
        self.index = 0
        self.metric = 0

    def compose(self) -> ComposeResult:
        yield Static(id="cal-header")
        with VerticalScroll(id="cal-body"):
            yield Static(id="cal-item")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.render_item()

    @property
    def item(self) -> dict | None:
        return self.items[self.index] if 0 <= self.index < len(self.items) else None

    def render_item(self) -> None:
        header = Text("golden review --calibrate", "bold")
        header.append(f" · {visible(self.annotator, multiline=False)}", "dim")
        item = self.item
        body = Text()
        if item is None:
            header.append(" · nothing left to score", "dim")
            body.append("Every answer in the queue has both scores from you. Press q to quit.",
                        "dim")
        else:
            header.append(f" · item {self.index + 1}/{len(self.items)} · run ")
            header.append(visible(item["run_id"] or "-", multiline=False))
            header.append(" · query ")
            header.append(visible(item["query_id"], multiline=False))
            body.append("Question\n", "bold underline")
            body.append(visible(item["question"]) + "\n\n")
            body.append("Retrieved contexts\n", "bold underline")
            for i, ctx in enumerate(item["contexts"], 1):
                body.append(f"[{i}] ", "bold cyan")
                body.append(visible(ctx) + "\n")
            body.append("\nAnswer under test\n", "bold underline")
            body.append(visible(item["answer"]) + "\n\n")
            body.append("Reference answer\n", "bold underline")
            body.append(visible(item["reference"]) + "\n\n")
            body.append("Your scores ", "bold underline")
            body.append(f"({SCALE})\n", "dim")
            for i, metric in enumerate(calibration.CALIBRATION_METRICS):
                score = item["scores"].get(metric)
                marker = "▶ " if i == self.metric else "  "
                body.append(marker + f"{metric}: ", "bold" if i == self.metric else "")
                body.append(str(score) if score else "–", "green" if score else "dim")
                body.append("\n")
        self.query_one("#cal-header", Static).update(header)
        self.query_one("#cal-item", Static).update(body)

    def action_score(self, score: int) -> None:
        item = self.item
        if item is None:
            self.app.bell()
            return
        metric = calibration.CALIBRATION_METRICS[self.metric]
        item["scores"][metric] = score
        future = asyncio.wrap_future(self.writer.submit(
            calibration.record_calibration, run_id=item["run_id"], query_id=item["query_id"],
            metric=metric, score=score, annotator=self.annotator))
        future.add_done_callback(self._written)
        if self.metric + 1 < len(calibration.CALIBRATION_METRICS):
            self.metric += 1
        elif all(item["scores"].get(m) for m in calibration.CALIBRATION_METRICS):
            self.metric = 0
            self.index = min(self.index + 1, len(self.items))
        self.render_item()

    def _written(self, future: asyncio.Future) -> None:
        if future.exception() is not None:
            self.app.notify(str(future.exception()), title="Score not saved", severity="error",
                            markup=False)

    def action_switch_metric(self) -> None:
        self.metric = (self.metric + 1) % len(calibration.CALIBRATION_METRICS)
        self.render_item()

    def action_move(self, delta: int) -> None:
        self.index = max(0, min(self.index + delta, len(self.items)))
        self.metric = 0
        self.render_item()

    def action_help(self) -> None:
        from review_tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(list(self.BINDINGS), getattr(self.app, "keymap", {})))

    def action_quit(self) -> None:
        self.app.exit()
