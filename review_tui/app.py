"""`ReviewApp`: the Textual application behind `golden review`.

Owns the UI thread's `Store` (reads) and the single `DecisionWriter` thread (writes), applies
the keymap, and opens the review screen or, with `calibrate=True`, the calibration screen.
On exit the writer's queue is finished before the app returns: no decision is lost.
"""

from __future__ import annotations

from textual.app import App

from builder.store import Store
from review_tui.screens.calibrate import CalibrationScreen
from review_tui.screens.review import ReviewScreen
from review_tui.writer import DecisionWriter


class ReviewApp(App):
    CSS_PATH = "review.tcss"
    TITLE = "golden review"
    ENABLE_COMMAND_PALETTE = False  # ctrl+p is "previous" here

    def __init__(self, db_path: str, annotator: str, *, keymap: dict[str, str] | None = None,
                 calibrate: bool = False, run_id: str | None = None):
        super().__init__()
        self.db_path = str(db_path)
        self.annotator = annotator
        self.keymap = dict(keymap or {})
        """Binding id -> keys, as loaded from the config (shown in help)."""
        self.calibrate = calibrate
        self.run_id = run_id
        self.store = Store(self.db_path)  # migrates (adds the review indexes) once, here
        self.writer = DecisionWriter(self.db_path)
        if self.keymap:
            self.set_keymap(self.keymap)

    def on_mount(self) -> None:
        if self.calibrate:
            self.push_screen(CalibrationScreen(self.store, self.annotator, self.writer,
                                               self.run_id))
        else:
            self.push_screen(ReviewScreen(self.store, self.db_path, self.annotator,
                                          self.writer))

    def on_unmount(self) -> None:
        self.writer.close()
        self.store.close()
