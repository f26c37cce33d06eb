"""The review screen: candidate list, detail pane, progress header, and every review key.
Dialogs are imported by the key that opens them: none is needed for the first frame (help's
Markdown alone cost ~50 ms of start-up); so is the store's decision log (`review_log`, 500
lines compiled on every start where bytecode is not cached), by the first decision.

Data flow, and what keeps it fast, loss-free and free of duplicated work:
- Reads that a key press needs (a block of list rows, one candidate's detail) run on the UI
  thread against the app's own connection; each is an index seek of ~1 ms.
- Every write is handed at once to the app's `DecisionWriter` (one thread, submission order,
  one BEGIN IMMEDIATE transaction each). The list shows the new status at once through its
  overlay, and the next item opens without waiting for the write.
- The items this session is offered are CLAIMED (builder/store/review_leases.py): a lease per
  item, so another annotator is never offered it. The screen keeps PREFETCH items lined up
  (`offers`), so the next item opens at once; the writer claims the next ones behind it.
  Browsing (n/p, arrows, a click) claims nothing: deciding a browsed item is an explicit
  choice (a disagreement with another annotator goes to adjudication, never overwrites).
- In the adjudication queue (key c: `CandidateFilter(conflict=True)`) a decision is final.
- Counts, list position, progress and agreement are recomputed off the UI thread
  (`schedule_refresh`) after a filter change, after our writes land, and when
  `PRAGMA data_version` shows another process committed: polled every 2 s. Leases are
  renewed every LEASE_RENEW seconds.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Input
from textual.worker import WorkerCancelled

from builder.errors import JobError
from builder.store import Store
from builder.store import review_leases, review_queue, review_ready
from builder.store.review_queue import CandidateFilter
from builder.vocabulary import DECIDED_STATUS
from builder.text.terminal import visible
from review_tui.widgets.candidate_list import BLOCK, CandidateList
from review_tui.widgets.detail import DetailPane
from review_tui.widgets.footer import KeyFooter
from review_tui.widgets.progress import ProgressLine

if TYPE_CHECKING:
    from builder.store import review_log
    from review_tui.screens.edit import EditResult
    from review_tui.screens.modals import BulkChoice, Rejection

POLL_SECONDS = 2.0
LEASE_RENEW = 30.0
PREFETCH = 2
"""Items claimed ahead of the one shown, so the next one opens without a round trip."""
RECENT_DECISIONS = 500
"""The header's throughput reads this annotator's last decisions only."""


def compute_refresh(store: Store, f: CandidateFilter, candidate_id: str | None,
                    annotator: str) -> tuple[int, int | None, dict]:
    """(count, position of candidate_id, progress stats with `agreement` and `throughput`):
    the heavier reads, run in a thread on a connection of their own (`RefreshReader`).
    Index-only since m004 (agreement: the partial index of m006): ~30 ms at 100k."""
    from builder.review.agreement import agreement, throughput  # not needed for the first frame
    from builder.store.review_stats import decision_times, shared_votes

    count = review_queue.count_candidates(store, f)
    position = review_queue.position_of(store, f, candidate_id) if candidate_id else None
    stats = review_queue.review_stats(store, f)
    stats["agreement"] = agreement(shared_votes(store))["overall"]
    times = decision_times(store, annotator).get(annotator, [])[-RECENT_DECISIONS:]
    stats["throughput"] = throughput(times)
    return count, position, stats


class RefreshReader:
    """The refresh thread's connection, opened once and reused (a fresh `Store` per refresh
    cost ~20 ms of setup and a cold page cache). One refresh at a time: a stale one still
    running when a newer one starts finishes first (the lock), then the newer one reads."""

    def __init__(self, db_path: str):
        self.db_path = db_path
        self._store: Store | None = None
        self._closed = False
        self._lock = threading.Lock()

    def refresh(self, f: CandidateFilter, candidate_id: str | None, annotator: str
                ) -> tuple[int, int | None, dict]:
        with self._lock:
            if self._closed:  # a late refresh after the screen went: a one-off connection
                store = Store(self.db_path, migrate=False)
                try:
                    return compute_refresh(store, f, candidate_id, annotator)
                finally:
                    store.close()
            if self._store is None:
                self._store = Store(self.db_path, migrate=False)
            try:
                return compute_refresh(self._store, f, candidate_id, annotator)
            finally:
                if self._closed:  # the screen went while we counted: close it here
                    self._close_store()

    def close(self) -> None:
        """Never waits for a refresh in flight (a count over 100,000 rows on a busy machine
        took seconds, and quitting waited for it): that refresh closes the connection."""
        self._closed = True
        if self._lock.acquire(blocking=False):
            try:
                self._close_store()
            finally:
                self._lock.release()

    def _close_store(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


NOT_READY_HINTS = {
    review_ready.NO_ANSWER: "Write the reference answer first (e): a production item has none "
                            "until you do.",
    review_ready.NO_MARKS: "Mark the relevant chunks first (m): search the knowledge base, "
                           "space marks.",
    review_ready.NONE_MARKED: "No relevant chunk is marked: mark one (m), or make the item "
                              "unanswerable (e, type) if the knowledge base does not cover it.",
}


def not_ready(candidate: dict) -> str | None:
    """Why the candidate cannot be accepted yet, said with the keys that fix it (None when it
    can): the store's own rule (`review_ready.accept_problem`), checked before anything is
    sent."""
    problem = review_ready.accept_problem(
        candidate.get("type"), candidate.get("answer"), candidate.get("edit_answer"),
        candidate.get("edit_chunk_ids"), candidate.get("edit_type"))
    return None if problem is None else NOT_READY_HINTS[problem]


def item_label(action: str, candidate: dict | None, candidate_id: str) -> str:
    """How a write is named in messages: 'accept of c000123 “What is…”'."""
    question = ""
    if candidate is not None:
        text = candidate.get("edit_question") or candidate.get("question") or ""
        question = f" “{visible(text[:50], multiline=False)}{'…' if len(text) > 50 else ''}”"
    return f"{action} of {visible(candidate_id, multiline=False)}{question}"


class ReviewScreen(Screen):
    AUTO_FOCUS = "#list"  # not the first focusable (the search field): one focus move less
    # The footer is cut at the right on a narrow terminal: at 80 columns it shows help, the
    # decisions, moving, search and filter; the rest is in help (?).
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="review.help"),
        Binding("a", "decide('accept')", "Accept", id="review.accept"),
        Binding("r", "reject", "Reject", id="review.reject"),
        Binding("s", "decide('skip')", "Skip", id="review.skip"),
        Binding("e", "edit", "Edit", id="review.edit"),
        Binding("u", "undo", "Undo", id="review.undo"),
        Binding("n", "move(1)", "Next", id="review.next"),
        Binding("p", "move(-1)", "Prev", id="review.prev"),
        Binding("slash", "search", "Search", id="review.search"),
        Binding("f", "filter", "Filter", id="review.filter"),
        Binding("q", "quit", "Quit", id="review.quit"),
        Binding("v", "evidence", "Evidence", id="review.evidence"),
        Binding("t", "tag", "Tag", id="review.tag"),
        Binding("K", "kb_search", "KB search", id="review.kb_search"),
        Binding("c", "conflicts", "Conflicts", id="review.conflicts"),
        Binding("m", "mark_chunks", "Mark chunks", show=False, id="review.mark_chunks"),
        Binding("o", "cycle_sort", "Sort", show=False, id="review.sort"),
        Binding("x", "reset_filter", "Queue", show=False, id="review.reset_filter"),
        Binding("z", "zoom", "Hide list", show=False, id="review.zoom"),
        Binding("w", "whole_text", "Whole text", show=False, id="review.whole_text"),
        Binding("S", "stats", "Agreement", show=False, id="review.stats"),
        Binding("A", "bulk('accept')", "Bulk accept", show=False, id="review.bulk_accept"),
        Binding("R", "bulk('reject')", "Bulk reject", show=False, id="review.bulk_reject"),
        Binding("T", "bulk('tag')", "Bulk tag", show=False, id="review.bulk_tag"),
        Binding("f1", "help", "Help", show=False, id="review.help_f1"),
        # Modifier twins that still work while the search field has focus.
        Binding("ctrl+n", "move(1)", "Next", show=False, id="review.next_alt"),
        Binding("ctrl+p", "move(-1)", "Prev", show=False, id="review.prev_alt"),
        Binding("ctrl+o", "decide('accept')", "Accept", show=False, id="review.accept_alt"),
        Binding("escape", "focus_list", "List", show=False, id="review.focus_list"),
    ]

    def __init__(self, store: Store, db_path: str, annotator: str, writer,
                 session: str = "local"):
        super().__init__()
        self.store = store
        self.db_path = db_path
        self.annotator = annotator
        self.writer = writer
        self.session = session
        self.filter = CandidateFilter()
        self.current_id: str | None = None
        self.current: dict | None = None
        self.stats: dict | None = None
        self.offers: list[tuple[str, tuple]] = []
        """Items claimed for this session and lined up after the current one."""
        self.held: set[str] = set()
        """Items this session holds a lease on (the offered current one and `offers`)."""
        self._claims = 0  # claim jobs in flight (0 or 1)
        self._first_claim_done = False
        self._claim_wanted = False  # another claim asked for while one was in flight
        self._claim_show = False
        self._last_key: tuple | None = None  # sort key of the last item claimed
        self._last_decided: str | None = None
        self._count_after_open = False
        self._queued: list[tuple] = []
        """Decision keys (accept, skip, reject) pressed while the next item was still being
        claimed: applied in order as items open, never dropped silently."""
        self._generation = 0
        self._landed: set[str] = set()
        self._marker = review_queue.change_marker(store)
        self._renewed = time.monotonic()
        self._refresh_worker = None
        self._refresh_timer = None
        self._reader = RefreshReader(db_path)

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield ProgressLine(id="progress")
        yield Input(placeholder="/ search question, answer or id — enter applies, esc returns",
                    id="search", compact=True)
        with Horizontal(id="main"):
            yield CandidateList(id="list")
            yield DetailPane(id="detail")
        yield KeyFooter(compact=True)

    @property
    def list(self) -> CandidateList:
        return self.query_one("#list", CandidateList)

    @property
    def adjudicating(self) -> bool:
        return bool(self.filter.conflict)

    def on_mount(self) -> None:
        self.list.annotator = self.annotator
        self.apply_filter(self.filter)
        self.list.focus()
        self.set_interval(POLL_SECONDS, self.poll)

    def on_unmount(self) -> None:
        self._reader.close()

    # ------------------------------------------------------------------ showing

    def show_candidate(self, candidate_id: str | None) -> None:
        """Make `candidate_id` current and load its detail (one small read)."""
        self.current_id = candidate_id
        self.current = review_queue.get_candidate(self.store, candidate_id) if candidate_id else None
        overlay = self.list.overlay.get(candidate_id) if candidate_id else None
        self.query_one("#detail", DetailPane).show(self.current, overlay, self.annotator,
                                                   adjudicating=self.adjudicating)

    def _show_index(self, index: int) -> None:
        row = self.list.row(index)
        if row is not None:
            self.list.move_to(index)
        self.show_candidate(row["id"] if row else None)

    def _show_id(self, candidate_id: str) -> None:
        """Show a candidate and put the cursor on it when its row is loaded (else the next
        refresh finds its position)."""
        index = self.list.index_of(candidate_id)
        if index is not None:
            self.list.move_to(index)
        self.show_candidate(candidate_id)
        if index is None:
            self.schedule_refresh()

    def apply_filter(self, f: CandidateFilter) -> None:
        """Show the list for `f`: the first block is read now (index seek); the items to
        review are claimed by the writer and the first opens when its lease is taken; the
        exact count and progress follow from a background refresh."""
        self.filter = f
        self._generation += 1
        self._drop_queued("the filter changed")
        first = review_queue.page_candidates(self.store, f, 0, BLOCK)
        lst = self.list
        lst.reset(fetch=partial(review_queue.page_candidates, self.store, f), count=len(first),
                  cursor=0)
        lst.prime(0, first)
        self.offers = []
        self._last_key = None
        self.current_id, self.current = None, None
        self.query_one("#detail", DetailPane).waiting()
        search = self.query_one("#search", Input)
        if search.value != f.text:
            search.value = f.text
        search.set_class(bool(f.text) or search.has_focus, "shown")
        self._show_progress(count=None)
        # Count once the first item is on screen (`_take_claimed`): a count over 100,000 rows
        # running beside the claim and the first paint cost the first frame more CPU than
        # anything else we do. The timer is the fallback; quick successive filter changes
        # share one count.
        self._count_after_open = True
        self.schedule_refresh(delay=1.0)
        if not self._claim_now(PREFETCH + 1):
            self._claim(PREFETCH + 1, show=True)

    def _show_progress(self, count: int | None) -> None:
        # a refresh that counted in its thread while the app closed finds the line gone
        for line in self.query("#progress").results(ProgressLine):
            line.show(self.stats, self.annotator, self.filter.describe(), count)

    # ------------------------------------------------------------------ claims

    def _keep(self) -> list[str]:
        """The items this session keeps holding: the current one (if it was offered to us)
        and the lined-up offers."""
        ids = ([self.current_id] if self.current_id in self.held else []) + [
            cid for cid, _ in self.offers]
        return list(dict.fromkeys(ids))

    def _claim_now(self, count: int) -> bool:
        """The session's first claim, made at once on the UI thread's connection, so the
        first frame already shows the first item (through the writer, the claim's answer
        waited behind the first frames' layout and paint: 0.2-0.5 s of the first frame).
        Only when nothing was submitted to the writer yet, so no write of ours can be
        reordered; a database locked by another process is waited for 0.1 s at most, and
        then the claim goes to the writer as any other (False)."""
        if self._first_claim_done:
            return False
        self._first_claim_done = True
        future: Future = Future()
        try:
            with self.store.waiting_at_most(0.1):
                future.set_result(review_leases.claim_next(
                    self.store, self.filter, self.annotator, self.session, count=count,
                    keep=self._keep()))
        except JobError:
            return False
        self._take_claimed(True, future)
        return True

    def _claim(self, count: int, *, show: bool) -> None:
        """Ask the writer to lease `count` more items after the last one claimed; with
        `show`, open the first of them when they land.

        One claim at a time: a claim renews the session's leases on what it keeps and drops
        the rest, so a second claim sent before the first one's items were added to `keep`
        would drop them (and another annotator could take them). A claim asked for while one
        is in flight is sent when that one lands."""
        if self._claims:
            self._claim_wanted = True
            self._claim_show = self._claim_show or show
            return
        self._claims += 1
        future = asyncio.wrap_future(self.writer.submit(
            review_leases.claim_next, self.filter, self.annotator, self.session,
            after_key=self._last_key, count=count, keep=self._keep(), label="claim next items"))
        future.add_done_callback(partial(self._claimed, self._generation, show))

    def _claimed(self, generation: int, show: bool, future: asyncio.Future) -> None:
        self._claims -= 1
        if not self.is_attached:
            return  # we quit
        try:
            if generation == self._generation:  # else the filter changed: its claim follows
                self._take_claimed(show, future)
        finally:
            if self._claim_wanted:
                wanted_show, self._claim_wanted, self._claim_show = self._claim_show, False, False
                need = (PREFETCH + (self.current_id is None) + len(self._queued)
                        - len(self.offers))
                if need > 0:
                    self._claim(need, show=wanted_show)

    def _take_claimed(self, show: bool, future: asyncio.Future) -> None:
        if future.exception() is not None:
            self.app.notify(str(future.exception()), title="Could not take the next items",
                            severity="error", markup=False)
            got = []
        else:
            got = future.result()
        for cid, key in got:
            if cid not in self.held and all(cid != o for o, _ in self.offers):
                self.offers.append((cid, key))
                self.held.add(cid)
            self._last_key = key
        if self._count_after_open:
            self._count_after_open = False
            self.call_after_refresh(self.schedule_refresh)
        if self.current_id is None and not self.open_next(claim_more=False):
            self._drop_queued("no item is left to review in this filter")
            if show:
                self._browse_start()
            else:
                self.app.notify("No item left to review in this filter.", markup=False)
                self.show_candidate(self._last_decided)
        self._replay_queued()

    def _waiting_for_item(self) -> bool:
        """No item is open because the next one is still being claimed."""
        return self.current_id is None and bool(self._claims or self._claim_wanted)

    def _queue_key(self, *action) -> None:
        """Hold a decision key pressed before the next item opened, and make sure the claim
        in flight (or the next one) brings enough items for every held key."""
        self._queued.append(action)
        self._claim(PREFETCH + 1 + len(self._queued), show=False)

    def _replay_queued(self) -> None:
        """Apply held decision keys, in the order pressed, while an item is open (a reject
        waits for its dialog; the rest continue when it closes)."""
        while self._queued and self.current_id is not None and self.app.screen is self:
            action = self._queued.pop(0)
            if action[0] == "reject":
                self.action_reject()
                return
            self.action_decide(*action[1:])

    def _drop_queued(self, why: str) -> None:
        if self._queued:
            count, self._queued = len(self._queued), []
            self.app.bell()
            self.app.notify(f"{count} key(s) pressed ahead were not applied: {why}.",
                            title="Not applied", severity="warning", markup=False)

    def _browse_start(self) -> None:
        """Nothing to claim in this filter: show its first row for browsing."""
        if self.list.count:
            self._show_index(0)
        else:
            self.show_candidate(None)

    def _open_for_me(self, candidate: dict | None) -> bool:
        """Still worth offering: not settled meanwhile, and (outside adjudication) not
        decided by this annotator from another session."""
        if candidate is None:
            return False
        if self.adjudicating:
            return bool(candidate["conflict"]) and candidate["status"] == "pending"
        mine = [d for d in candidate.get("decisions", [])
                if d["annotator"] == self.annotator and not d["final"]
                and d["decision"] != "skip"]
        return candidate["status"] in ("pending", "skipped") and not candidate["conflict"] \
            and not mine

    def open_next(self, *, claim_more: bool = True) -> bool:
        """Open the first lined-up item still open for this annotator and, with
        `claim_more`, claim more behind it; with none lined up, wait for a claim (the item
        opens when it lands). False when nothing was lined up and no claim was made."""
        while self.offers:
            cid, _key = self.offers.pop(0)
            if cid in self.list.overlay:  # decided here, its write not read back yet
                self.held.discard(cid)
                continue
            candidate = review_queue.get_candidate(self.store, cid)
            if self._open_for_me(candidate):
                self._show_id(cid)
                need = PREFETCH + len(self._queued) - len(self.offers)
                if claim_more and need > 0:
                    self._claim(need, show=False)
                return True
            self.held.discard(cid)
        if not claim_more:
            return False
        self.current_id, self.current = None, None
        self.query_one("#detail", DetailPane).waiting()
        if self._claims == 0:
            self._claim(PREFETCH + 1 + len(self._queued), show=False)
        return True

    # ------------------------------------------------------------------ refresh

    def schedule_refresh(self, delay: float = 0.0) -> None:
        """Recompute count, position and progress in a thread (debounced by `delay`)."""
        if self._refresh_timer is not None:
            self._refresh_timer.stop()
            self._refresh_timer = None
        if delay:
            self._refresh_timer = self.set_timer(delay, self.schedule_refresh)
            return
        self._refresh_worker = self.run_worker(self._refresh, group="refresh",
                                               exclusive=True)

    async def _refresh(self) -> None:
        while True:
            f, cid, generation = self.filter, self.current_id, self._generation
            landed = set(self._landed)
            count, position, stats = await asyncio.to_thread(self._reader.refresh, f, cid,
                                                             self.annotator)
            if generation != self._generation:
                return  # a new filter started its own refresh
            if cid == self.current_id:
                break  # else the reviewer moved meanwhile: the position is stale, redo
        for candidate_id in landed:
            self.list.overlay.pop(candidate_id, None)
        self._landed -= landed
        self.stats = stats
        lst = self.list
        lst.reset(count=count, cursor=position if position is not None else lst.cursor)
        if position is not None:
            self._align_cursor()
        self._show_progress(count)

    def _align_cursor(self) -> None:
        """Keep the cursor row = the open candidate after the cache was dropped.

        `position` was counted in the refresh thread, but the rows are re-read afterwards; a
        decision that landed in between moves its row to the end of the queue order and
        shifts the rest by one, and the next key would then act from the wrong row (seen as
        a flaky "a a s" test once the refresh got fast). Look near the cursor first (the
        block is read anyway), else count again on this connection."""
        lst, cid = self.list, self.current_id
        for index in sorted(range(max(0, lst.cursor - 8), min(lst.count, lst.cursor + 9)),
                            key=lambda i: abs(i - lst.cursor)):
            row = lst.row(index)
            if row is not None and row["id"] == cid:
                if index != lst.cursor:
                    lst.move_to(index)
                return
        position = review_queue.position_of(self.store, self.filter, cid)
        if position is not None:
            lst.move_to(position)

    async def settle(self) -> None:
        """Wait until every queued write and claim has landed and the view reflects it (for
        tests)."""
        while True:
            await self.writer.drain()
            await asyncio.sleep(0)
            if self._claims == 0:
                break
        self.schedule_refresh()
        while True:
            worker = self._refresh_worker
            try:
                await worker.wait()
            except WorkerCancelled:
                continue  # replaced by a newer refresh: wait for that one
            if self._refresh_timer is not None:
                self.schedule_refresh()  # a debounced refresh is pending: run it now
            elif worker is self._refresh_worker:
                return

    def poll(self) -> None:
        """Cheap change check: refresh only when another connection committed. Renew the
        leases now and then, so a running session keeps what it holds."""
        marker = review_queue.change_marker(self.store)
        if marker != self._marker:
            self._marker = marker
            self.schedule_refresh()
        if time.monotonic() - self._renewed >= LEASE_RENEW:
            self._renewed = time.monotonic()
            self.writer.submit(review_leases.renew, self.session, self._keep(),
                               label="renew leases")

    # ------------------------------------------------------------------ writes

    def _submit(self, fn, *args, on_done=None, label: str | None = None,
                **kwargs) -> asyncio.Future:
        future = asyncio.wrap_future(self.writer.submit(fn, *args, label=label, **kwargs))
        future.add_done_callback(partial(self._write_done, on_done, label))
        return future

    def _write_done(self, on_done, label: str | None, future: asyncio.Future) -> None:
        error = future.exception()
        if error is not None:
            name = f"{label}: " if label else ""
            self.app.notify(f"{name}{error}", title="Not saved", severity="error",
                            markup=False)
        elif on_done is not None:
            on_done(future.result())
        self.schedule_refresh(delay=0.3)

    def _decision_landed(self, candidate_id: str, _result) -> None:
        self._landed.add(candidate_id)
        if candidate_id == self.current_id:
            self.show_candidate(candidate_id)

    def action_decide(self, action: str, reason: str | None = None,
                      note: str | None = None) -> None:
        """Accept / reject / skip the current candidate (a final decision in the
        adjudication queue, where skip passes the item on without recording anything), then
        open the next item lined up for this session."""
        from builder.store import review_log

        cid = self.current_id
        if cid is None:
            if self._waiting_for_item():
                self._queue_key("decide", action, reason, note)
            else:
                self.app.bell()
            return
        final = self.adjudicating
        if action == "accept" and self.current is not None and self.current_id == cid:
            problem = not_ready(self.current)
            if problem:
                self.app.bell()
                self.app.notify(problem, title="Not accepted", severity="warning",
                                markup=False)
                return
        if final and action == "skip":  # an adjudicator passes: nothing to record
            self.held.discard(cid)
            self.open_next()
            return
        self.list.overlay[cid] = DECIDED_STATUS[action]
        self.list.refresh()
        self.held.discard(cid)
        # A browsed item (n/p) may be one of the lined-up offers: it is decided now, so it
        # must not open again as "next" before its write lands.
        self.offers = [(o, key) for o, key in self.offers if o != cid]
        label = item_label(("final " if final else "") + action, self.current, cid)
        future = self._submit(review_log.record_decision, cid, self.annotator, action,
                              reason=reason, note=note, final=final, label=label,
                              on_done=partial(self._decision_landed, cid))
        future.add_done_callback(partial(self._decision_failed, cid))
        self._last_decided = cid
        self.open_next()

    def _decision_failed(self, candidate_id: str, future: asyncio.Future) -> None:
        if future.exception() is not None:
            self.list.overlay.pop(candidate_id, None)
            self.list.refresh()

    def action_reject(self) -> None:
        from review_tui.screens.modals import RejectScreen

        if self.current_id is None:
            if self._waiting_for_item():
                self._queue_key("reject")
            else:
                self.app.bell()
            return

        def done(choice: Rejection | None) -> None:
            if choice is not None:
                self.action_decide("reject", choice.reason, choice.note)
            self._replay_queued()

        self.app.push_screen(RejectScreen(), done)

    def action_edit(self) -> None:
        from builder.store import review_log
        from review_tui.screens.edit import EditScreen

        if self.current is None:
            self.app.bell()
            return
        cid, candidate = self.current_id, self.current

        def done(result: EditResult | None) -> None:
            if result is None:
                return
            if result.edits:
                self._submit(review_log.record_decision, cid, self.annotator, "edit",
                             edits=result.edits, label=item_label("edit", candidate, cid),
                             on_done=partial(self._decision_landed, cid))
            if result.then == "accept":
                self.action_decide("accept")
            elif result.then in ("next", "prev"):
                self.action_move(1 if result.then == "next" else -1)

        self.app.push_screen(EditScreen(self.current), done)

    def action_tag(self) -> None:
        from builder.store import review_log
        from review_tui.screens.modals import TagScreen

        if self.current is None:
            self.app.bell()
            return
        cid, candidate = self.current_id, self.current

        def done(raw: str | None) -> None:
            if not raw:
                return
            action, tag = ("untag", raw[1:]) if raw.startswith("-") else ("tag", raw)
            self._submit(review_log.record_decision, cid, self.annotator, action, tag=tag,
                         label=item_label(action, candidate, cid),
                         on_done=partial(self._decision_landed, cid))

        known = review_queue.filter_choices(self.store)["tag"]
        self.app.push_screen(TagScreen(self.current.get("tags", []), known), done)

    def action_undo(self) -> None:
        from builder.store import review_log

        self._submit(review_log.undo_last, self.annotator, on_done=self._undone,
                     label="undo")

    def _undone(self, result: review_log.UndoResult | None) -> None:
        if result is None:
            self.app.notify("Nothing to undo.", markup=False)
            return
        for cid in result.candidate_ids:
            self.list.overlay.pop(cid, None)
            self._landed.discard(cid)
        message = f"Undid {result.action} of {len(result.candidate_ids)} candidate(s)."
        if result.conflicts:
            message += (f" {result.conflicts} not restored: changed by someone else since.")
        self.app.notify(message, markup=False)
        first = result.candidate_ids[0]
        if self.current_id in self.held and self.current_id != first:
            # Put the item we were on back in line, and hold the undone one instead.
            self.offers.insert(0, (self.current_id, ()))
        self.held.add(first)
        self.writer.submit(review_leases.take, first, self.annotator, self.session,
                           label="hold the undone item")
        self._show_id(first)
        self.list.refresh()

    def action_bulk(self, action: str) -> None:
        from builder.store import review_log
        from review_tui.screens.modals import BulkConfirmScreen, RejectScreen, TagScreen

        f = self.filter
        if not review_queue.count_candidates(self.store, f):
            self.app.notify("No candidate matches the filter.", markup=False)
            return

        def run(reason=None, note=None, tag=None, verb=action) -> None:
            preview = review_log.bulk_preview(self.store, f, verb)

            def confirmed(choice: BulkChoice | None) -> None:
                if choice is not None:
                    self._submit(review_log.bulk_decide, f, self.annotator, verb,
                                 reason=reason, note=note, tag=tag,
                                 overwrite=choice.overwrite, on_done=self._bulk_done,
                                 label=f"bulk {verb} of {f.describe()}")

            shown = visible(tag or "", multiline=False).replace("{", "{{").replace("}", "}}")
            question = {"accept": "Accept {n}?", "reject": f"Reject {{n}} as {reason}?",
                        "tag": f"Tag {{n}} #{shown}?", "untag": f"Untag #{shown} on {{n}}?"}[verb]
            self.app.push_screen(BulkConfirmScreen(question, f.describe(), preview), confirmed)

        if action == "accept":
            run()
        elif action == "reject":
            self.app.push_screen(RejectScreen("Bulk reject: why?"),
                                 lambda c: c and run(reason=c.reason, note=c.note))
        else:
            def tagged(raw: str | None) -> None:
                if raw:
                    verb, tag = ("untag", raw[1:]) if raw.startswith("-") else ("tag", raw)
                    run(tag=tag, verb=verb)
            self.app.push_screen(TagScreen([], review_queue.filter_choices(self.store)["tag"],
                                           "Bulk tag"), tagged)

    def _bulk_done(self, result: tuple[str, int]) -> None:
        self.app.notify(f"Bulk action applied to {result[1]} candidate(s).", markup=False)
        self.show_candidate(self.current_id)
        self.schedule_refresh()

    # ------------------------------------------------------------------ navigation

    def action_move(self, delta: int) -> None:
        lst = self.list
        target = lst.cursor + delta
        if not 0 <= target < lst.count:
            self.app.bell()
            return
        self._show_index(target)

    def on_candidate_list_cursor_moved(self, event: CandidateList.CursorMoved) -> None:
        self.show_candidate(event.row["id"] if event.row else None)

    def action_search(self) -> None:
        """Show the search line (hidden while no search applies: one more line for the
        item on a small terminal) and type into it."""
        search = self.query_one("#search", Input)
        search.add_class("shown")
        search.focus()

    def action_focus_list(self) -> None:
        self.list.focus()
        self.query_one("#search", Input).set_class(bool(self.filter.text), "shown")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "search":
            self.apply_filter(replace(self.filter, text=event.value.strip()))
            self.action_focus_list()

    def action_filter(self) -> None:
        from review_tui.screens.modals import FilterScreen

        def done(f: CandidateFilter | None) -> None:
            if f is not None:
                self.apply_filter(f)

        self.app.push_screen(FilterScreen(self.filter, review_queue.filter_choices(self.store)), done)

    def action_cycle_sort(self) -> None:
        names = list(review_queue.SORTS)
        self.apply_filter(replace(self.filter,
                                  sort=names[(names.index(self.filter.sort) + 1) % len(names)]))

    def action_reset_filter(self) -> None:
        self.apply_filter(CandidateFilter())

    def action_conflicts(self) -> None:
        """Toggle the adjudication queue: candidates whose annotators disagree."""
        if self.adjudicating:
            self.apply_filter(CandidateFilter())
        else:
            self.apply_filter(CandidateFilter(conflict=True, verdict=None))

    def action_evidence(self) -> None:
        """Jump to the current item's sources (evidence highlighted), or back to the top."""
        self.query_one("#detail", DetailPane).toggle_evidence()

    def action_whole_text(self) -> None:
        """Every line of the current item's question and answer (the pane clips long ones)."""
        if self.current is None:
            self.app.bell()
            return
        from review_tui.screens.full_text import FullTextScreen

        self.app.push_screen(FullTextScreen(self.current))

    def action_zoom(self) -> None:
        self.list.display = not self.list.display

    def action_kb_search(self) -> None:
        from review_tui.screens.kb_search import KBSearchScreen

        question = ""
        if self.current is not None:
            question = self.current.get("edit_question") or self.current.get("question") or ""
        self.app.push_screen(KBSearchScreen(self.store, question))

    def action_mark_chunks(self) -> None:
        """Mark the relevant chunks of the current item in the knowledge-base search (space
        marks, enter or escape saves): a production item needs them before it is accepted."""
        from builder.store import review_log
        from review_tui.screens.kb_search import KBSearchScreen

        if self.current is None:
            self.app.bell()
            return
        cid, candidate = self.current_id, self.current
        marked = candidate.get("edit_chunk_ids")
        if marked is None:
            provenance = candidate.get("provenance") or {}
            marked = (provenance.get("useful_chunk_ids") if isinstance(provenance, dict)
                      else None) or candidate.get("chunk_ids") or []
        question = candidate.get("edit_question") or candidate.get("question") or ""

        def done(chunks: list[str] | None) -> None:
            if chunks is None or chunks == candidate.get("edit_chunk_ids"):
                return
            self._submit(review_log.record_decision, cid, self.annotator, "edit",
                         edits={"chunk_ids": chunks},
                         label=item_label("marking chunks", candidate, cid),
                         on_done=partial(self._decision_landed, cid))

        self.app.push_screen(KBSearchScreen(self.store, question, select=True,
                                            marked=[str(x) for x in marked]), done)

    def action_stats(self) -> None:
        from review_tui.screens.modals import StatsScreen

        self.app.push_screen(StatsScreen(self.db_path))

    def action_help(self) -> None:
        from review_tui.screens.edit import EditScreen
        from review_tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(list(self.BINDINGS) + EditScreen.BINDINGS,
                                        getattr(self.app, "keymap", {})))

    def action_quit(self) -> None:
        self.app.exit()
