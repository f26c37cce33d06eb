"""Leaving on SIGTERM / SIGHUP, promptly, even when the terminal is gone.

Textual 8.2.8 writes the screen through a thread with a bounded queue (30 writes). When the
terminal stops reading (a closed window, `tmux kill-session`: the pty's other end is gone) that
thread blocks or dies, the queue fills, and the UI thread blocks in `Queue.put`, inside a
render or inside shutdown (`App._shutdown -> LinuxDriver.close -> WriterThread.stop`). asyncio's
signal handlers run on that blocked loop, so SIGTERM did nothing and the process lingered.

`SignalExit` installs plain `signal.signal` handlers instead: Python runs them on the main
thread even while it waits on a lock. The first signal asks the app to leave the normal way
(`exit`, which restores a live terminal) and starts a watchdog; if the app has not returned
GRACE_SECONDS later, the watchdog finishes what quitting guarantees (`finish`: the decision
writer's queue written, the session's leases released; bounded by FLUSH_SECONDS) and ends the
process with `os._exit(128 + signal)`. A second signal skips the grace period. Decisions are
written as they are made, so nothing is lost either way.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable

EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
GRACE_SECONDS = 3.0
FLUSH_SECONDS = 10.0


class SignalExit:
    def __init__(self, request_exit: Callable[[int], None], finish: Callable[[float], None]):
        """`request_exit(code)` asks the app to leave (called on the event loop's thread);
        `finish(timeout)` writes what is queued and releases the leases (any thread)."""
        self._request_exit = request_exit
        self._finish = finish
        self._previous: dict[int, object] = {}
        self._returned = threading.Event()
        self._hurry = threading.Event()
        self._signalled: int | None = None
        self._loop = None

    def install(self, loop) -> None:
        """Take over SIGTERM and SIGHUP (only possible on the main thread)."""
        if threading.current_thread() is not threading.main_thread():
            return
        self._loop = loop
        for sig in EXIT_SIGNALS:
            self._previous[sig] = signal.signal(sig, self._on_signal)

    def uninstall(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def returned(self) -> None:
        """The app has returned: the watchdog has nothing left to do."""
        self._returned.set()

    def _on_signal(self, sig: int, _frame) -> None:
        if self._signalled is not None:  # a second signal: no more waiting
            self._hurry.set()
            return
        self._signalled = sig
        threading.Thread(target=self._watchdog, args=(sig,), name="review-exit",
                         daemon=True).start()
        try:
            self._loop.call_soon_threadsafe(self._request_exit, 128 + sig)
        except RuntimeError:  # the loop is closed: the watchdog ends the process
            self._hurry.set()

    def _watchdog(self, sig: int) -> None:
        self._hurry.wait(GRACE_SECONDS)
        if self._returned.is_set():
            return
        try:
            self._finish(FLUSH_SECONDS)
        finally:
            os._exit(128 + sig)
