"""`ReviewApp`: the Textual application behind `golden review`.

Owns the UI thread's `Store` (reads), the single `DecisionWriter` thread (writes) and the
session id its leases are taken under; applies the keymap and the overlap setting, and opens
the review screen or, with `calibrate=True`, the calibration screen.

On exit (q, SIGTERM, SIGHUP) the app leaves through Textual's own shutdown, which restores the
terminal (alternate screen, mouse reporting, cursor); the session's leases are released and
the writer's queue finished before the app returns: no decision is lost, and one that could
not be written is listed by `unsaved()`. When the terminal is gone and Textual's shutdown
blocks on it, a signal still ends the process within seconds (review_tui/signals.py).
"""

from __future__ import annotations

import asyncio
import gc
import uuid

from textual.app import App
from textual.screen import Screen

from builder.store import Store
from builder.store.review_leases import release_session
from builder.store.review_overlap import Overlap, get_overlap
from builder.text.terminal import visible
from review_tui.screens.review import ReviewScreen
from review_tui.signals import SignalExit
from review_tui.writer import DecisionWriter


class ReviewApp(App):
    CSS_PATH = "review.tcss"
    TITLE = "golden review"
    ENABLE_COMMAND_PALETTE = False  # ctrl+p is "previous" here

    def __init__(self, db_path: str, annotator: str, *, keymap: dict[str, str] | None = None,
                 calibrate: bool = False, run_id: str | None = None,
                 overlap: Overlap | None = None):
        super().__init__()
        self.db_path = str(db_path)
        self.annotator = annotator
        self.session = uuid.uuid4().hex
        """This process's lease owner id (builder/store/review_leases.py)."""
        self.keymap = dict(keymap or {})
        """Binding id -> keys, as loaded from the config (shown in help)."""
        self.calibrate = calibrate
        self.run_id = run_id
        self.store = Store(self.db_path)  # migrates (adds the review tables) once, here
        if overlap is not None and overlap != get_overlap(self.store.conn):
            from builder.store.review_log import set_overlap

            set_overlap(self.store, overlap)
        self.writer = DecisionWriter(self.db_path, on_retry=self._write_retrying)
        self._signals = SignalExit(self._exit_on_signal, self._finish)
        if self.keymap:
            self.set_keymap(self.keymap)

    def run(self, *args, **kwargs):
        try:
            return super().run(*args, **kwargs)
        finally:
            self._signals.returned()
            self._signals.uninstall()

    def get_default_screen(self) -> Screen:
        """The review (or calibration) screen is the app's first screen, composed with the
        app like a bare app's widgets are: pushed from `on_mount` instead, it was laid out
        and rendered once inside Textual's start-up batch (a frame thrown away), and the
        first frame that reached the terminal came a layout and a footer build later."""
        if self.calibrate:
            from review_tui.screens.calibrate import CalibrationScreen

            return CalibrationScreen(self.store, self.annotator, self.writer, self.run_id)
        return ReviewScreen(self.store, self.db_path, self.annotator, self.writer,
                            self.session)

    def on_mount(self) -> None:
        self._signals.install(asyncio.get_running_loop())
        # `golden review` turns the cyclic GC off for the start-up (review_tui/commands.py):
        # on again once the first frame is on screen.
        self.call_after_refresh(gc.enable)

    def _exit_on_signal(self, code: int) -> None:
        """SIGTERM / SIGHUP: leave like `q` does, so the terminal is restored and every
        decision already made is written."""
        self.exit(return_code=code)

    def _finish(self, timeout: float) -> None:
        """What quitting guarantees, from the signal watchdog when Textual's shutdown is stuck
        on a dead terminal: the queued decisions written, the session's leases released."""
        self.writer.close(timeout)
        if not self.calibrate:
            with Store(self.db_path, migrate=False) as store:
                release_session(store, self.session)

    def _write_retrying(self, label: str, error: BaseException, attempt: int) -> None:
        """From the writer thread: a write failed and will be retried; say which item."""
        message = (f"{visible(label, multiline=False)}: {visible(str(error), multiline=False)}"
                   f" — kept, retrying (attempt {attempt + 1}); nothing is lost")
        try:
            self.call_from_thread(self.notify, message, title="Not saved yet",
                                  severity="warning", markup=False)
        except RuntimeError:  # the app has stopped: the message goes to `unsaved()`
            pass

    def unsaved(self) -> list[str]:
        """Decisions that could not be written before the app gave up on exit."""
        return self.writer.unsaved()

    def on_unmount(self) -> None:
        # From here on a signal's default action (end the process) is right: what quitting
        # guarantees is done below, before Textual closes the terminal.
        self._signals.uninstall()
        if not self.calibrate:
            self.writer.submit(release_session, self.session, label="release leases")
        self.writer.close()
        self.store.close()
