"""The one thread that writes review decisions, so the UI never waits on SQLite.

Guarantees: jobs run one at a time in submission order (so "accept, then undo" can never be
reordered), each on the thread's own `Store`, each store function doing its own BEGIN
IMMEDIATE transaction. `submit` returns at once with a Future; `drain()` awaits everything
submitted so far (tests and shutdown use it).

A job that fails on a storage fault (`JobError`: the database stayed locked past the busy
timeout, a full disk, an I/O error; the transaction was rolled back) stays at the head of the
queue and is retried with a growing pause (RETRY_DELAYS), `on_retry(label, error, attempt)`
telling the UI each time; the jobs behind it wait, so the order still holds. A job refused for
its content (`ReviewError` and other errors) fails at once. `close()` finishes the queue
before returning, retrying until its deadline; what is still not written then is listed by
`unsaved()` (labels naming each item), so quitting reports it instead of losing it silently.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from builder.errors import JobError
from builder.store import Store

_STOP = object()
RETRY_DELAYS = (0.5, 1.0, 2.0, 4.0, 5.0)


class DecisionWriter:
    def __init__(self, db_path: str,
                 on_retry: Callable[[str, BaseException, int], None] | None = None):
        self._db_path = db_path
        self.on_retry = on_retry
        self._queue: queue.Queue = queue.Queue()
        self._last: Future | None = None
        self._deadline: float | None = None
        self._unsaved: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="review-writer", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any, label: str | None = None,
               **kwargs: Any) -> Future:
        """Queue `fn(store, *args, **kwargs)`; the Future holds its result or exception.
        `label` names the job in retry messages ("accept of c000123 ...")."""
        future: Future = Future()
        self._last = future
        self._queue.put((future, fn, args, kwargs, label or getattr(fn, "__name__", "write")))
        return future

    async def drain(self) -> None:
        """Wait (without blocking the event loop) until every job submitted so far has run."""
        if self._last is not None:
            await asyncio.wait([asyncio.wrap_future(self._last)])

    def close(self, timeout: float | None = 30) -> None:
        """Finish the queue (retrying failed writes for up to `timeout` seconds), then stop."""
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._queue.put(_STOP)
        self._thread.join(None if timeout is None else timeout + 1)

    def unsaved(self) -> list[str]:
        """Labels of the jobs that could not be written before `close` gave up."""
        return list(self._unsaved)

    def _give_up(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def _run(self) -> None:
        # Opened by the first job, not when the app starts: opening reads the schema, and the
        # first job comes after the UI's first frame. A storage fault on opening is retried
        # with that job.
        store: Store | None = None
        try:
            while True:
                job = self._queue.get()
                if job is _STOP:
                    return
                future, fn, args, kwargs, label = job
                if not future.set_running_or_notify_cancel():
                    continue
                attempt = 0
                while True:
                    try:
                        if store is None:
                            store = Store(self._db_path, migrate=False)
                        future.set_result(fn(store, *args, **kwargs))
                        break
                    except JobError as exc:  # a storage fault: keep the job, try again
                        attempt += 1
                        if self._give_up():
                            self._unsaved.append(f"{label}: {exc}")
                            future.set_exception(exc)
                            break
                        if self.on_retry is not None:
                            self.on_retry(label, exc, attempt)
                        delay = RETRY_DELAYS[min(attempt, len(RETRY_DELAYS)) - 1]
                        if self._deadline is not None:
                            delay = max(0.0, min(delay, self._deadline - time.monotonic()))
                        time.sleep(delay)
                    except BaseException as exc:  # delivered to the UI through the Future
                        future.set_exception(exc)
                        break
        finally:
            if store is not None:
                store.close()
