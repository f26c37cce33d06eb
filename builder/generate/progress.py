"""One progress display for a whole generation run: verified items out of the target, calls,
tokens, elapsed time and an estimate of the time left that tightens as items arrive.

In a terminal it is one rich progress bar (its time-left column divides the remaining items by
the rate measured so far); elsewhere (CI logs, pipes) a plain status line at most every
`every_s` seconds. With `show_items` (the demo), every verified item is printed as it lands, so
a first-time user has something to read while the run goes on. Questions and answers are
printed as plain text, never as markup.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.text import Text


def item_line(cand: dict) -> Text:
    return Text(f"  ✓ [{cand['type']}] {cand['question']}  →  {cand['answer']}")


class RunObserver:
    """Counts calls and tokens (`call_done`) and verified items (`verified`), and shows them."""

    def __init__(self, console: Console, target: int, *, show_items: bool = False,
                 every_s: float = 10.0, clock=time.monotonic):
        self.console = console
        self.target = target
        self.show_items = show_items
        self.calls = 0
        self.tokens = 0
        self.done = 0
        self.first_item_s: float | None = None
        self._clock = clock
        self._started = clock()
        self._every = every_s
        self._last_line = self._started
        self._bar: Progress | None = None
        self._task = None

    def __enter__(self) -> "RunObserver":
        if self.console.is_terminal:
            self._bar = Progress(
                TextColumn("verified"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[calls]} calls, {task.fields[tokens]} tokens"),
                TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                console=self.console, transient=False)
            self._bar.__enter__()
            self._task = self._bar.add_task("verified", total=self.target, calls=0, tokens=0)
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
        elif not exc or exc[0] is None:
            self._line(force=True)

    def start(self, already: int) -> None:
        """Items verified by earlier runs count towards the target from the start."""
        self.done = already
        if self._bar is not None:
            self._bar.update(self._task, completed=already)

    def call_done(self, result) -> None:
        self.calls += 1
        usage = getattr(result, "usage", None) or {}
        self.tokens += int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
        self._refresh()

    def verified(self, cand: dict) -> None:
        self.done += 1
        if self.first_item_s is None:
            self.first_item_s = self._clock() - self._started
        if self.show_items:
            (self._bar.console if self._bar else self.console).print(item_line(cand))
        self._refresh()

    def _refresh(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=min(self.done, self.target), calls=self.calls,
                             tokens=f"{self.tokens:,}")
        else:
            self._line()

    def _line(self, force: bool = False) -> None:
        now = self._clock()
        if not force and now - self._last_line < self._every:
            return
        self._last_line = now
        elapsed = now - self._started
        left = ""
        if 0 < self.done < self.target:
            left = f", about {elapsed / self.done * (self.target - self.done):.0f} s left"
        self.console.print(Text(f"golden: {self.done}/{self.target} verified, {self.calls} calls, "
                                f"{self.tokens:,} tokens, {elapsed:.0f} s{left}"))
