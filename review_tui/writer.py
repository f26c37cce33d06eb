"""The one thread that writes review decisions, so the UI never waits on SQLite.

Guarantees: jobs run one at a time in submission order (so "accept, then undo" can never be
reordered), each on the thread's own `Store`, each store function doing its own BEGIN
IMMEDIATE transaction. `submit` returns at once with a Future; `drain()` awaits everything
submitted so far (tests and shutdown use it); `close()` finishes the queue before returning, so
quitting loses no decision already made.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from builder.store import Store

_STOP = object()


class DecisionWriter:
    def __init__(self, db_path: str):
        self._db_path = db_path
        self._queue: queue.Queue = queue.Queue()
        self._last: Future | None = None
        self._thread = threading.Thread(target=self._run, name="review-writer", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
        """Queue `fn(store, *args, **kwargs)`; the Future holds its result or exception."""
        future: Future = Future()
        self._last = future
        self._queue.put((future, fn, args, kwargs))
        return future

    async def drain(self) -> None:
        """Wait (without blocking the event loop) until every job submitted so far has run."""
        if self._last is not None:
            await asyncio.wait([asyncio.wrap_future(self._last)])

    def close(self, timeout: float | None = 30) -> None:
        self._queue.put(_STOP)
        self._thread.join(timeout)

    def _run(self) -> None:
        store = Store(self._db_path, migrate=False)
        try:
            while True:
                job = self._queue.get()
                if job is _STOP:
                    return
                future, fn, args, kwargs = job
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    future.set_result(fn(store, *args, **kwargs))
                except BaseException as exc:  # delivered to the UI through the Future
                    future.set_exception(exc)
        finally:
            store.close()
