"""The review log: every decision (accept, reject, skip, edit, tag, bulk) and its undo.

Guarantees:
- Review state on `candidates` (status, edit_*, reject_*, reviewer, reviewed_at, and the tags in
  `candidate_tags`) is a projection of the append-only `review_log`: every change writes exactly
  one log row (action, annotator, time, before -> after as JSON) in the SAME `BEGIN IMMEDIATE`
  transaction as the projection, so a crash never leaves one without the other.
- The generated `question`, `answer`, `type` and `difficulty` are never written here.
- User text (tags, notes, edits) only ever reaches SQL as bound parameters.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from dataclasses import dataclass, field

from builder.errors import ReviewError
from builder.store.db import Store
from builder.store.review_queue import CandidateFilter, candidate_tags, where_clause
from builder.store.timeutil import utcnow
from builder.vocabulary import DIFFICULTIES, REJECT_REASONS, TYPES

# The projected review state of one candidate; `tags` is read from candidate_tags.
STATE_FIELDS = ("status", "edit_question", "edit_answer", "edit_type", "edit_difficulty",
                "reject_reason", "reject_note", "reviewer", "reviewed_at")
EDITABLE = {"question": "edit_question", "answer": "edit_answer", "type": "edit_type",
            "difficulty": "edit_difficulty"}


@dataclass
class UndoResult:
    """What one undo step did: the log rows reverted (a bulk batch reverts as one step)."""

    action: str
    candidate_ids: list[str] = field(default_factory=list)
    restored: int = 0
    conflicts: int = 0


def candidate_log(store: Store, candidate_id: str, limit: int = 50) -> list[dict]:
    """The candidate's review history, newest first."""
    return store.query(
        "SELECT id, annotator, at, action, reason, note, undoes, batch_id FROM review_log"
        " WHERE candidate_id = ? ORDER BY id DESC LIMIT ?", (candidate_id, limit))


def _state(conn: sqlite3.Connection, candidate_id: str) -> dict | None:
    row = conn.execute(
        f"SELECT {', '.join(STATE_FIELDS)}, type, difficulty, question, answer"
        " FROM candidates WHERE id = ?", (candidate_id,)).fetchone()
    if row is None:
        return None
    state = dict(zip(STATE_FIELDS, row[:len(STATE_FIELDS)]))
    state["tags"] = candidate_tags(conn, candidate_id)
    original = dict(zip(("type", "difficulty", "question", "answer"), row[len(STATE_FIELDS):]))
    return {"state": state, "original": original}


def _write_state(conn: sqlite3.Connection, candidate_id: str, before: dict, after: dict,
                 now: str) -> None:
    conn.execute(
        f"UPDATE candidates SET {', '.join(f'{k} = ?' for k in STATE_FIELDS)}, updated_at = ?"
        " WHERE id = ?", [*(after[k] for k in STATE_FIELDS), now, candidate_id])
    old, new = set(before["tags"]), set(after["tags"])
    for tag in sorted(old - new):
        conn.execute("DELETE FROM candidate_tags WHERE candidate_id = ? AND tag = ?",
                     (candidate_id, tag))
    for tag in sorted(new - old):
        conn.execute("INSERT OR IGNORE INTO candidate_tags (candidate_id, tag) VALUES (?, ?)",
                     (candidate_id, tag))


def _log(conn: sqlite3.Connection, candidate_id: str, annotator: str, now: str, action: str,
         before: dict, after: dict, *, reason: str | None = None, note: str | None = None,
         undoes: int | None = None, batch_id: str | None = None) -> int:
    cur = conn.execute(
        "INSERT INTO review_log (candidate_id, annotator, at, action, reason, note, before,"
        " after, undoes, batch_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (candidate_id, annotator, now, action, reason, note,
         json.dumps(before, ensure_ascii=False), json.dumps(after, ensure_ascii=False),
         undoes, batch_id))
    return cur.lastrowid


def normalize_tag(tag: str) -> str:
    """Tags are single words of printable characters, at most 40, case kept, spaces -> '-'."""
    clean = "-".join(tag.split())
    if not clean or len(clean) > 40 or not clean.isprintable():
        raise ReviewError(f"bad tag {tag!r}: use 1-40 printable characters")
    return clean


def _next_state(action: str, state: dict, original: dict, annotator: str, now: str, *,
                reason: str | None, note: str | None, edits: dict | None, tag: str | None
                ) -> dict:
    after = dict(state, tags=list(state["tags"]))
    decided = {"reviewer": annotator, "reviewed_at": now}
    if action == "accept":
        after.update(status="accepted", reject_reason=None, reject_note=None, **decided)
    elif action == "reject":
        if reason not in REJECT_REASONS:
            raise ReviewError(f"unknown reject reason {reason!r} "
                              f"(one of {', '.join(REJECT_REASONS)})")
        if reason == "other" and not (note or "").strip():
            raise ReviewError("reason 'other' needs a note")
        after.update(status="rejected", reject_reason=reason, reject_note=note or None,
                     **decided)
    elif action == "skip":
        after.update(status="skipped", reject_reason=None, reject_note=None, **decided)
    elif action == "edit":
        for name, value in (edits or {}).items():
            if name not in EDITABLE:
                raise ReviewError(f"cannot edit {name!r} (one of {', '.join(EDITABLE)})")
            if name == "type" and value is not None and value not in TYPES:
                raise ReviewError(f"unknown type {value!r}")
            if name == "difficulty" and value is not None and value not in DIFFICULTIES:
                raise ReviewError(f"unknown difficulty {value!r}")
            if isinstance(value, str) and name in ("question", "answer"):
                value = value.strip() or None
            # An edit equal to the generated original is no edit: the column stays NULL.
            after[EDITABLE[name]] = None if value == original[name] else value
    elif action in ("tag", "untag"):
        tag = normalize_tag(tag or "")
        tags = set(after["tags"])
        if action == "tag":
            tags.add(tag)
        else:
            tags.discard(tag)
        after["tags"] = sorted(tags)
    else:
        raise ReviewError(f"unknown review action {action!r}")
    return after


def record_decision(store: Store, candidate_id: str, annotator: str, action: str, *,
                    reason: str | None = None, note: str | None = None,
                    edits: dict[str, str | None] | None = None, tag: str | None = None,
                    batch_id: str | None = None) -> int | None:
    """Apply one review action and append its log row, in one BEGIN IMMEDIATE transaction.

    action: accept | reject (reason in REJECT_REASONS, note; 'other' needs a note) | skip |
    edit (edits: {question|answer|type|difficulty: value}; a value equal to the generated
    original clears the edit) | tag / untag (tag). Returns the log id, or None when the action
    changes nothing (no log row is written then): an edit/tag that is already so, or a repeat
    of this annotator's own accept/reject/skip -- the same decision already made by another
    annotator IS recorded (it becomes this annotator's). Raises ReviewError for an unknown
    candidate or a bad value.
    """
    with store.write():
        return _decide(store.conn, candidate_id, annotator, action, utcnow(), reason=reason,
                       note=note, edits=edits, tag=tag, batch_id=batch_id)


def _decide(conn: sqlite3.Connection, candidate_id: str, annotator: str, action: str,
            now: str, *, reason=None, note=None, edits=None, tag=None, batch_id=None
            ) -> int | None:
    current = _state(conn, candidate_id)
    if current is None:
        raise ReviewError(f"no candidate {candidate_id!r}")
    before = current["state"]
    after = _next_state(action, before, current["original"], annotator, now, reason=reason,
                        note=note, edits=edits, tag=tag)
    # A repeat of the annotator's own decision changes nothing. The same decision by ANOTHER
    # annotator is theirs to record (reviewer changes; agreement needs both log rows).
    if _same(before, after, ignore_stamp=True) and after["reviewer"] == before["reviewer"]:
        return None
    _write_state(conn, candidate_id, before, after, now)
    return _log(conn, candidate_id, annotator, now, action, before, after,
                reason=reason if action == "reject" else None, note=note,
                batch_id=batch_id)


def _same(a: dict, b: dict, *, ignore_stamp: bool = False) -> bool:
    skip = {"reviewer", "reviewed_at"} if ignore_stamp else set()
    return all(a.get(k) == b.get(k) for k in (*STATE_FIELDS, "tags") if k not in skip)


def bulk_decide(store: Store, f: CandidateFilter, annotator: str, action: str, *,
                reason: str | None = None, note: str | None = None, tag: str | None = None,
                chunk: int = 500) -> tuple[str, int]:
    """Apply accept / reject / skip / tag / untag to every candidate matching `f` now.

    The ids are fixed when the call starts; they are written in transactions of `chunk` rows
    (so other writers are never locked out for long), every log row carrying the same
    batch_id, which `undo_last` reverts as one step. Returns (batch_id, rows changed).
    """
    if action not in ("accept", "reject", "skip", "tag", "untag"):
        raise ReviewError(f"bulk {action!r} is not supported")
    if action == "reject" and reason not in REJECT_REASONS:
        raise ReviewError(f"unknown reject reason {reason!r}")
    where, params = where_clause(f, store)
    ids = [r[0] for r in store.conn.execute(
        f"SELECT c.id {where} ORDER BY c.id", params)]
    batch_id = uuid.uuid4().hex
    changed = 0
    for start in range(0, len(ids), chunk):
        with store.write():
            now = utcnow()
            for cid in ids[start:start + chunk]:
                if _decide(store.conn, cid, annotator, action, now, reason=reason, note=note,
                           tag=tag, batch_id=batch_id) is not None:
                    changed += 1
    return batch_id, changed


def undo_last(store: Store, annotator: str) -> UndoResult | None:
    """Revert `annotator`'s most recent decision that is not yet undone (a bulk batch counts as
    one decision), appending an `undo` log row per reverted row with `undoes` = its id.

    A row whose candidate has changed since (another annotator decided it) is not overwritten:
    its undo row is written with after == before and note 'conflict', so repeated undo moves
    on, and the result counts it in `conflicts`. Returns None when there is nothing to undo.
    """
    with store.write():
        conn = store.conn
        target = conn.execute(
            "SELECT id, batch_id FROM review_log r WHERE annotator = ? AND action <> 'undo'"
            " AND NOT EXISTS (SELECT 1 FROM review_log u WHERE u.undoes = r.id)"
            " ORDER BY id DESC LIMIT 1", (annotator,)).fetchone()
        if target is None:
            return None
        if target[1] is not None:
            rows = conn.execute(
                "SELECT id, candidate_id, action, before, after FROM review_log r"
                " WHERE batch_id = ? AND annotator = ? AND action <> 'undo' AND NOT EXISTS"
                " (SELECT 1 FROM review_log u WHERE u.undoes = r.id) ORDER BY id DESC",
                (target[1], annotator)).fetchall()
        else:
            rows = conn.execute(
                "SELECT id, candidate_id, action, before, after FROM review_log WHERE id = ?",
                (target[0],)).fetchall()
        now = utcnow()
        result = UndoResult(action=rows[0][2])
        for log_id, cid, _action, before_json, after_json in rows:
            current = _state(conn, cid)["state"]
            wanted = json.loads(before_json)
            if _same(current, json.loads(after_json)):
                _write_state(conn, cid, current, wanted, now)
                _log(conn, cid, annotator, now, "undo", current, wanted, undoes=log_id,
                     batch_id=target[1])
                result.restored += 1
            else:
                _log(conn, cid, annotator, now, "undo", current, current, undoes=log_id,
                     note="conflict: changed by someone else since; not restored",
                     batch_id=target[1])
                result.conflicts += 1
            result.candidate_ids.append(cid)
        return result
