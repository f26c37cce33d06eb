"""`KeyFooter`: Textual's `Footer`, rebuilt only when the keys it shows actually change.

Textual 8.2.8's `Footer` re-composes (unmounts and mounts one `FooterKey` per shown binding,
each styled anew) on every `bindings_updated` signal, and queues one re-compose per signal.
Opening the review screen publishes five (screen pushed, app focus, screen resumed, focus
moves), so the stock footer was built five times: ~40 ms each, about 200 ms of the first
screen (measured with bench/bench_review_tui.py). Here signals are coalesced into one pending
check, and the check re-composes only when the shown (binding, enabled, tooltip) list differs
from what is on screen. What is drawn is exactly the stock footer's.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """Drop-in `Footer` that skips redundant rebuilds."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._check_pending = False
        self._shown: tuple | None = None

    def _shown_bindings(self) -> tuple:
        return tuple((binding, enabled, tooltip)
                     for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
                     if binding.show)

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._check_pending:
            self._check_pending = True
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._check_pending = False
        if not self.is_attached:
            return
        shown = self._shown_bindings()
        if shown == self._shown:
            return
        self._shown = shown
        await self.recompose()
