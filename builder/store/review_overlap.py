"""Overlap: a share of the candidates is routed to k annotators, so agreement can be measured.

The setting is the database's, not a session's (`meta` key `review.overlap`): every review
session on the file routes and counts the same way, whoever passed `--overlap`. Which
candidates are in the share is decided by a hash of the candidate id (`overlap_slot`, a number
in [0, 1)), so it is stable across sessions and machines and needs no column: a candidate is
an overlap item when its slot < share. Such an item counts as reviewed only when k annotators
have accepted or rejected it (and they agree; else it goes to adjudication).

Guarantees: `set_overlap` is one BEGIN IMMEDIATE transaction that also re-settles the items
the change completes (an item waiting for a second vote when k drops to 1 takes its vote).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from functools import cache

from builder.errors import InputError

META_KEY = "review.overlap"
SLOT_FUNCTION = "golden_overlap_slot"


@cache
def _sha1():
    """hashlib's sha1, imported on the first slot asked for: only with overlap on, and never
    before the review UI's first frame (hashlib's OpenSSL binding costs ~3 ms to load)."""
    import hashlib

    return hashlib.sha1


def overlap_slot(candidate_id: str | None) -> float:
    """A stable number in [0, 1) for a candidate id (the first 32 bits of its sha1)."""
    digest = _sha1()(str(candidate_id).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:4], "big") / 2 ** 32


def register_functions(conn: sqlite3.Connection) -> None:
    """Make `golden_overlap_slot(id)` and `golden_accept_problem(...)` (review_ready.py)
    callable in this connection's queries (never used in a trigger, index or view, so other
    SQLite tools can still read and write the file)."""
    from builder.store import review_ready

    conn.create_function(SLOT_FUNCTION, 1, overlap_slot, deterministic=True)
    review_ready.register(conn)


@dataclass(frozen=True)
class Overlap:
    """k annotators for `share` of the candidates (k = 1: no overlap)."""

    k: int = 1
    share: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.k, int) or isinstance(self.k, bool) or not 1 <= self.k <= 20:
            raise InputError(f"overlap must be a whole number of annotators 1-20, got {self.k!r}")
        if not isinstance(self.share, (int, float)) or not 0.0 <= self.share <= 1.0:
            raise InputError(f"overlap share must be between 0 and 1, got {self.share!r}")

    @property
    def active(self) -> bool:
        return self.k > 1 and self.share > 0

    def needed(self, candidate_id: str) -> int:
        """Decisions the candidate needs before it counts as reviewed."""
        return self.k if self.active and overlap_slot(candidate_id) < self.share else 1

    def needed_sql(self, column: str = "c.id") -> tuple[str, list]:
        """The same as an SQL expression over `column`, with its parameters."""
        if not self.active:
            return "1", []
        return f"(CASE WHEN {SLOT_FUNCTION}({column}) < ? THEN ? ELSE 1 END)", [self.share,
                                                                                  self.k]

    def describe(self) -> str:
        return f"overlap {self.k} on {self.share:.0%}" if self.active else "no overlap"


def get_overlap(conn: sqlite3.Connection) -> Overlap:
    """The database's overlap setting (none stored: no overlap). A value this golden cannot
    read counts as no overlap rather than stopping a review session."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    if row is None:
        return Overlap()
    try:
        data = json.loads(row[0])
        return Overlap(int(data["k"]), float(data["share"]))
    except (ValueError, KeyError, TypeError, InputError):
        return Overlap()
