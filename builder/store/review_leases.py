"""Work distribution: which candidate each review session is offered next, held by a lease.

An annotator is offered candidates that are open to them (nobody settled them, they have not
decided them) and that no one else holds: each session takes a short lease (`LEASE_SECONDS`)
on the items it shows or has lined up, renews it while it runs, and loses it on a decision
(review_log releases it in the decision's transaction), on quit (`release_session`) or when
it expires (a session killed with -9). An overlap item (review_overlap.py) may be held by as
many annotators as it still needs decisions.

A lease keeps OTHER annotators away; it never keeps its own annotator out. A session restarted
after a crash (a new session id, the old leases still live for up to LEASE_SECONDS) is offered
the same items again at once, in queue order; two windows open under one name share a queue.

The order of the offer follows the list's filter and sort: first the items nobody has
decided, then items others skipped, then the annotator's own skipped items, after the rest.
The adjudication queue (`CandidateFilter(conflict=True)`) offers items with conflicting
decisions, one adjudicator each.

Guarantees: a claim is one BEGIN IMMEDIATE transaction (read the queue, write the leases),
so two sessions claiming at the same moment never get the same non-overlap item.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from builder.store.db import Store
from builder.store.review_overlap import get_overlap
from builder.store.review_queue import OPEN_SQL, CandidateFilter, _key_steps, _sort, where_clause

LEASE_SECONDS = 120.0
"""How long a lease lasts without renewal; a running session renews every POLL (30 s)."""


def _renew(store: Store, session: str, keep: Sequence[str], expires: float) -> None:
    """Extend the session's leases on `keep`; drop its other leases."""
    conn = store.conn
    marks = ", ".join("?" * len(keep))
    conn.execute(f"DELETE FROM review_leases WHERE session = ? AND candidate_id NOT IN ({marks})",
                 [session, *keep])
    if keep:
        conn.execute(f"UPDATE review_leases SET expires_at = ? WHERE session = ?"
                     f" AND candidate_id IN ({marks})", [expires, session, *keep])


def claim_next(store: Store, f: CandidateFilter, annotator: str, session: str, *,
               after_key: tuple | None = None, count: int = 1, keep: Sequence[str] = (),
               ttl: float = LEASE_SECONDS) -> list[tuple[str, tuple]]:
    """Lease and return up to `count` more candidates for `annotator` as (id, sort key), in
    `f`'s order after `after_key` (wrapping to the start). The session's leases on `keep` are
    renewed and its other leases released in the same transaction; `keep` items are never
    returned again."""
    with store.write():
        now = time.time()
        conn = store.conn
        _renew(store, session, list(keep), now + ttl)
        conn.execute("DELETE FROM review_leases WHERE expires_at <= ?", (now,))
        got = _open_items(store, f, annotator, after_key, count, set(keep), now)
        conn.executemany(
            "INSERT OR REPLACE INTO review_leases (candidate_id, session, annotator, expires_at)"
            " VALUES (?, ?, ?, ?)", [(cid, session, annotator, now + ttl) for cid, _ in got])
        return got


def _open_items(store: Store, f: CandidateFilter, annotator: str,
                after_key: tuple | None, count: int, exclude: set[str], now: float
                ) -> list[tuple[str, tuple]]:
    keys, direction = _sort(f)
    where, params = where_clause(f, store)
    others = ("(SELECT count(*) FROM review_leases l WHERE l.candidate_id = c.id"
              " AND l.annotator <> ? AND l.expires_at > ?)")
    mine = ("EXISTS (SELECT 1 FROM review_votes v WHERE v.candidate_id = c.id"
            " AND v.annotator = ? AND v.final = 0{})")
    my_skip = mine.format(" AND v.decision = 'skip'")
    if f.conflict:
        stages = [(f"c.conflict = 1 AND c.status = 'pending' AND {others} = 0",
                   [annotator, now])]
    else:
        needed, needed_params = get_overlap(store.conn).needed_sql()
        free = f"c.votes + {others} < {needed}"
        free_params = [annotator, now, *needed_params]
        stages = [
            (f"c.status = 'pending' AND c.conflict = 0 AND NOT {mine.format('')} AND {free}",
             [annotator, *free_params]),
            (f"c.status = 'skipped' AND NOT {mine.format('')} AND {free}",
             [annotator, *free_params]),
            (f"{OPEN_SQL} AND {my_skip} AND {free}",
             [annotator, *free_params]),
        ]
    whole = ", ".join(f"{k} {direction}" for k in keys)
    steps = _key_steps(keys, direction, after_key) if after_key is not None else []
    key_cols = ", ".join(keys)
    got: list[tuple[str, tuple]] = []
    for stage, stage_params in stages:
        for cond, kparams, order in [*steps, ("1", [], whole)]:
            if len(got) >= count:
                return got
            skip = sorted(exclude | {cid for cid, _ in got})
            excl = f" AND c.id NOT IN ({', '.join('?' * len(skip))})" if skip else ""
            rows = store.conn.execute(
                f"SELECT c.id, {key_cols} {where} AND {stage} AND {cond}{excl}"
                f" ORDER BY {order} LIMIT ?",
                [*params, *stage_params, *kparams, *skip, count - len(got)]).fetchall()
            got += [(r[0], tuple(r[1:])) for r in rows]
    return got


def take(store: Store, candidate_id: str, annotator: str, session: str,
         ttl: float = LEASE_SECONDS) -> bool:
    """Lease one given candidate for the session (after an undo brings it back, say) unless
    another annotator holds it. True when the session holds it now."""
    with store.write():
        now = time.time()
        held = store.conn.execute(
            "SELECT 1 FROM review_leases WHERE candidate_id = ? AND annotator <> ?"
            " AND expires_at > ?", (candidate_id, annotator, now)).fetchone()
        if held:
            return False
        store.conn.execute(
            "INSERT OR REPLACE INTO review_leases (candidate_id, session, annotator, expires_at)"
            " VALUES (?, ?, ?, ?)", (candidate_id, session, annotator, now + ttl))
        return True


def renew(store: Store, session: str, keep: Sequence[str], ttl: float = LEASE_SECONDS) -> None:
    """The session's heartbeat: extend its leases on `keep`. Releases nothing (a claim in
    flight may be adding leases `keep` does not list yet; `claim_next` drops the rest)."""
    if not keep:
        return
    with store.write():
        store.conn.execute(
            f"UPDATE review_leases SET expires_at = ? WHERE session = ?"
            f" AND candidate_id IN ({', '.join('?' * len(keep))})",
            [time.time() + ttl, session, *keep])


def release_session(store: Store, session: str) -> int:
    """Release every lease of the session (on quit). Returns how many."""
    with store.write():
        return store.conn.execute("DELETE FROM review_leases WHERE session = ?",
                                  (session,)).rowcount


def held_by_others(store: Store, candidate_id: str, session: str) -> list[str]:
    """Annotators of other sessions holding a live lease on the candidate."""
    return [r[0] for r in store.conn.execute(
        "SELECT annotator FROM review_leases WHERE candidate_id = ? AND session <> ?"
        " AND expires_at > ? ORDER BY annotator", (candidate_id, session, time.time()))]
