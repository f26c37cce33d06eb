"""The review log: every decision (accept, reject, skip, final), edit, tag, bulk action and undo.

Guarantees:
- Review state is a projection of the append-only `review_log`: the candidate's columns
  (status, votes, conflict, adjudicated_by, edit_*, reject_*, reviewer, reviewed_at), its tags
  (`candidate_tags`) and each annotator's vote (`review_votes`). Every change writes exactly one
  log row (stable `uid`, action, annotator, time, before -> after as JSON) in the SAME
  `BEGIN IMMEDIATE` transaction as the projection, so a crash never leaves one without the other.
- Decisions are votes. Each annotator holds one current decision per candidate; the candidate's
  status is settled from all of them (`settle`): the agreed decision once as many annotators
  as the item needs have decided (1, or k for an overlap item), `pending` with `conflict` = 1
  when they disagree (the adjudication queue), and a final decision (`final=True`: an
  adjudicator's, or a bulk action told to overwrite) settles it whatever the votes say. So a
  decision never silently overwrites another annotator's: it agrees, or it goes to adjudication.
- Skip is a vote that decides nothing: a skipped item stays open for everyone (see
  review_leases.claim_next for the order in which it comes back).
- The generated `question`, `answer`, `type` and `difficulty` are never written here.
- User text (tags, notes, edits) only ever reaches SQL as bound parameters.
"""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import dataclass, field

from builder.errors import ReviewError
from builder.store.db import Store
from builder.store.jsoncols import from_json, to_json
from builder.store.review_overlap import Overlap, get_overlap
from builder.store.review_queue import CandidateFilter, candidate_tags, where_clause
from builder.store.review_ready import MESSAGES as ACCEPT_MESSAGES
from builder.store.review_ready import NOT_READY_SQL, accept_problem
from builder.store.timeutil import utcnow
from builder.vocabulary import (
    DECIDED_STATUS, DECISIONS, DIFFICULTIES, ITEM_TYPES, PRODUCTION, REJECT_REASONS,
)

# The projected review state of one candidate; `tags` is read from candidate_tags.
STATE_FIELDS = ("status", "votes", "conflict", "adjudicated_by", "edit_question", "edit_answer",
                "edit_type", "edit_difficulty", "reject_reason", "reject_note", "reviewer",
                "reviewed_at", "edit_chunk_ids")
SETTLED_FIELDS = ("status", "votes", "conflict", "adjudicated_by", "reject_reason",
                  "reject_note", "reviewer", "reviewed_at")
"""The part of the state that `settle` derives from the votes."""
EDITABLE = {"question": "edit_question", "answer": "edit_answer", "type": "edit_type",
            "difficulty": "edit_difficulty", "chunk_ids": "edit_chunk_ids"}
DECIDED_SQL = "(c.status IN ('accepted', 'rejected') OR c.votes > 0 OR c.conflict = 1)"
"""A candidate someone has accepted or rejected (bulk actions leave these alone by default)."""


@dataclass
class UndoResult:
    """What one undo step did: the log rows reverted (a bulk batch reverts as one step)."""

    action: str
    candidate_ids: list[str] = field(default_factory=list)
    restored: int = 0
    conflicts: int = 0


def candidate_votes(store: Store, candidate_id: str) -> list[dict]:
    """Every current decision on the candidate, oldest first: annotator, final (0/1), decision,
    reason, note, at. What the adjudication view shows side by side."""
    return _votes(store.conn, candidate_id)


def _votes(conn: sqlite3.Connection, candidate_id: str) -> list[dict]:
    cur = conn.execute(
        "SELECT annotator, final, decision, reason, note, at, log_id FROM review_votes"
        " WHERE candidate_id = ? ORDER BY at, log_id", (candidate_id,))
    cols = [c[0] for c in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


def settle(votes: list[dict], needed: int) -> dict:
    """The settled part of a candidate's state (SETTLED_FIELDS) from its votes, oldest first.

    - a final decision (the latest one) wins: its status, reason, note and author;
    - accept/reject votes that disagree: pending, conflict = 1 (adjudication);
    - `needed` or more votes that agree: their status; reason and note of the latest;
    - fewer: pending (waiting for more annotators);
    - only skips: skipped (still open to everyone);
    - none: pending.
    """
    decisive = [v for v in votes if not v["final"] and v["decision"] != "skip"]
    state = {"status": "pending", "votes": len(decisive), "conflict": 0, "adjudicated_by": None,
             "reject_reason": None, "reject_note": None, "reviewer": None, "reviewed_at": None}
    finals = [v for v in votes if v["final"]]

    def decided_by(vote: dict) -> None:
        state.update(status=DECIDED_STATUS[vote["decision"]], reviewer=vote["annotator"],
                     reviewed_at=vote["at"])
        if vote["decision"] == "reject":
            state.update(reject_reason=vote["reason"], reject_note=vote["note"])

    if finals:
        decided_by(finals[-1])
        state["adjudicated_by"] = finals[-1]["annotator"]
    elif len({v["decision"] for v in decisive}) > 1:
        state["conflict"] = 1
    elif decisive and len(decisive) >= needed:
        decided_by(decisive[-1])
    elif not decisive:
        skips = [v for v in votes if not v["final"]]
        if skips:
            decided_by(skips[-1])
    return state


_ORIGINAL = ("type", "difficulty", "question", "answer", "chunk_ids")


def _state(conn: sqlite3.Connection, candidate_id: str) -> dict | None:
    row = conn.execute(
        f"SELECT {', '.join(STATE_FIELDS)}, {', '.join(_ORIGINAL)}"
        " FROM candidates WHERE id = ?", (candidate_id,)).fetchone()
    if row is None:
        return None
    state = dict(zip(STATE_FIELDS, row[:len(STATE_FIELDS)]))
    state["tags"] = candidate_tags(conn, candidate_id)
    original = dict(zip(_ORIGINAL, row[len(STATE_FIELDS):]))
    original["chunk_ids"] = from_json(original["chunk_ids"], [])
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
         undoes: int | None = None, batch_id: str | None = None, final: bool = False,
         uid: str | None = None) -> int:
    cur = conn.execute(
        "INSERT INTO review_log (uid, candidate_id, annotator, at, action, reason, note, before,"
        " after, undoes, batch_id, final) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (uid or uuid.uuid4().hex, candidate_id, annotator, now, action, reason, note,
         to_json(before), to_json(after), undoes, batch_id, int(final)))
    return cur.lastrowid


def normalize_tag(tag: str) -> str:
    """Tags are single words of printable characters, at most 40, case kept, spaces -> '-'."""
    clean = "-".join(tag.split())
    if not clean or len(clean) > 40 or not clean.isprintable():
        raise ReviewError(f"bad tag {tag!r}: use 1-40 printable characters")
    return clean


def _chunk_ids(conn: sqlite3.Connection, value) -> list[str] | None:
    """A marked chunk list as stored: ids of existing chunks, in marking order, each once."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ReviewError("chunk_ids: expected a list of chunk ids")
    ids = list(dict.fromkeys(value))
    for start in range(0, len(ids), 500):
        batch = ids[start:start + 500]
        found = {r[0] for r in conn.execute(
            f"SELECT id FROM chunks WHERE id IN ({', '.join('?' * len(batch))})", batch)}
        missing = [i for i in batch if i not in found]
        if missing:
            raise ReviewError(f"no chunk {missing[0]!r} in the knowledge base")
    return ids


def _next_state(action: str, state: dict, original: dict, *, edits: dict | None,
                tag: str | None) -> dict:
    """The state after an edit, tag or untag (decisions go through `_vote`). Chunk ids in
    `edits` are already checked (`_chunk_ids`)."""
    after = dict(state, tags=list(state["tags"]))
    if action == "edit":
        for name, value in (edits or {}).items():
            if name not in EDITABLE:
                raise ReviewError(f"cannot edit {name!r} (one of {', '.join(EDITABLE)})")
            if name == "type" and value is not None and value not in ITEM_TYPES:
                raise ReviewError(f"unknown type {value!r}")
            if name == "difficulty" and value is not None and value not in DIFFICULTIES:
                raise ReviewError(f"unknown difficulty {value!r}")
            if isinstance(value, str) and name in ("question", "answer"):
                value = value.strip() or None
            if name == "chunk_ids":
                # A production item's marks are its only chunks: kept even when empty.
                same = value == original["chunk_ids"] and original["type"] != PRODUCTION
                after["edit_chunk_ids"] = None if value is None or same else to_json(value)
                continue
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


def check_accept(current: dict) -> None:
    """ReviewError when the candidate cannot be accepted yet (`review_ready.accept_problem`:
    a production item without a reference answer or its relevant chunks marked)."""
    state, original = current["state"], current["original"]
    problem = accept_problem(original["type"], original["answer"], state["edit_answer"],
                             state["edit_chunk_ids"], state["edit_type"])
    if problem is not None:
        raise ReviewError(ACCEPT_MESSAGES[problem])


def check_decision(action: str, reason: str | None, note: str | None) -> None:
    """Raise ReviewError for a decision that cannot be recorded (before anything is written)."""
    if action not in DECISIONS:
        raise ReviewError(f"unknown decision {action!r} (one of {', '.join(DECISIONS)})")
    if action == "reject":
        if reason not in REJECT_REASONS:
            raise ReviewError(f"unknown reject reason {reason!r} "
                              f"(one of {', '.join(REJECT_REASONS)})")
        if reason == "other" and not (note or "").strip():
            raise ReviewError("reason 'other' needs a note")


def record_decision(store: Store, candidate_id: str, annotator: str, action: str, *,
                    reason: str | None = None, note: str | None = None,
                    edits: dict[str, str | None] | None = None, tag: str | None = None,
                    batch_id: str | None = None, final: bool = False) -> int | None:
    """Apply one review action and append its log row, in one BEGIN IMMEDIATE transaction.

    action: accept | reject (reason in REJECT_REASONS, note; 'other' needs a note) | skip:
    the annotator's vote (`final=True`: a final decision that settles the item, as an
    adjudicator makes it), which also releases their lease on the item; edit (edits:
    {question|answer|type|difficulty: value}; a value equal to the generated original clears
    the edit) | tag / untag (tag). Returns the log id, or None when the action changes nothing
    (no log row is written then): a repeat of the annotator's own decision, an edit or tag
    that is already so. `edits` may also mark the relevant chunks (`chunk_ids`: a list of
    existing chunk ids, None to clear); a production item is accepted only once ready
    (`check_accept`). The same decision by another annotator IS recorded: it is their vote.
    Raises ReviewError for an unknown candidate or a bad value.
    """
    with store.write():
        return apply_action(store.conn, candidate_id, annotator, action, utcnow(),
                            reason=reason, note=note, edits=edits, tag=tag, batch_id=batch_id,
                            final=final)


def apply_action(conn: sqlite3.Connection, candidate_id: str, annotator: str, action: str,
                 now: str, *, reason=None, note=None, edits=None, tag=None, batch_id=None,
                 final: bool = False, uid: str | None = None, overlap: Overlap | None = None
                 ) -> int | None:
    """`record_decision` inside a transaction the caller holds (bulk actions, import-log).
    `now` is the decision's time (an imported row keeps its own), `uid` its stable id."""
    current = _state(conn, candidate_id)
    if current is None:
        raise ReviewError(f"no candidate {candidate_id!r}")
    if action == "accept":
        check_accept(current)
    if action == "edit" and edits and "chunk_ids" in edits:
        edits = {**edits, "chunk_ids": _chunk_ids(conn, edits["chunk_ids"])}
    if action in DECISIONS:
        return _vote(conn, candidate_id, annotator, action, now, current["state"],
                     reason=reason, note=note, final=final, batch_id=batch_id, uid=uid,
                     overlap=overlap)
    before = current["state"]
    after = _next_state(action, before, current["original"], edits=edits, tag=tag)
    if _same(before, after):
        return None
    _write_state(conn, candidate_id, before, after, now)
    return _log(conn, candidate_id, annotator, now, action, before, after, note=note,
                batch_id=batch_id, uid=uid)


def _vote_record(vote: dict | None) -> dict | None:
    """A vote as stored in a log row's before/after (what undo restores)."""
    if vote is None:
        return None
    return {k: vote.get(k) for k in ("decision", "reason", "note", "at", "log_id")}


def _vote_key(vote: dict | None) -> tuple | None:
    return None if vote is None else (vote["decision"], vote.get("reason"), vote.get("note"))


def _vote(conn: sqlite3.Connection, candidate_id: str, annotator: str, action: str, now: str,
          state: dict, *, reason, note, final: bool, batch_id, uid, overlap) -> int | None:
    check_decision(action, reason, note)
    new = {"annotator": annotator, "final": int(final), "decision": action,
           "reason": reason if action == "reject" else None, "note": (note or "").strip() or None,
           "at": now, "log_id": None}
    votes = _votes(conn, candidate_id)
    mine = next((v for v in votes if v["annotator"] == annotator and v["final"] == int(final)),
                None)
    conn.execute("DELETE FROM review_leases WHERE candidate_id = ? AND annotator = ?",
                 (candidate_id, annotator))
    if _vote_key(mine) == _vote_key(new):
        return None
    if mine is not None and mine["at"] > now:
        # An imported decision older than this annotator's decision here: kept in the log,
        # changes nothing (the newer one stands).
        log_id = _log(conn, candidate_id, annotator, now, action,
                      {**state, "vote": _vote_record(mine)}, {**state, "vote": _vote_record(mine)},
                      reason=new["reason"], note="superseded: older than this annotator's "
                      "decision here", batch_id=batch_id, final=final, uid=uid)
        return log_id
    others = [v for v in votes if v is not mine]
    after = _settled(conn, candidate_id, state, [*others, new], overlap)
    _write_state(conn, candidate_id, state, after, now)
    log_id = _log(conn, candidate_id, annotator, now, action,
                  {**state, "vote": _vote_record(mine)}, {**after, "vote": _vote_record(new)},
                  reason=new["reason"], note=new["note"], batch_id=batch_id, final=final,
                  uid=uid)
    _put_vote(conn, candidate_id, annotator, final, {**new, "log_id": log_id})
    return log_id


def _settled(conn: sqlite3.Connection, candidate_id: str, state: dict, votes: list[dict],
             overlap: Overlap | None) -> dict:
    overlap = overlap or get_overlap(conn)
    ordered = sorted(votes, key=lambda v: (v["at"], v["log_id"] or 0))
    return {**state, **settle(ordered, overlap.needed(candidate_id))}


def _put_vote(conn: sqlite3.Connection, candidate_id: str, annotator: str, final: bool,
              vote: dict | None) -> None:
    if vote is None:
        conn.execute("DELETE FROM review_votes WHERE candidate_id = ? AND annotator = ?"
                     " AND final = ?", (candidate_id, annotator, int(final)))
        return
    conn.execute(
        "INSERT OR REPLACE INTO review_votes (candidate_id, annotator, final, decision, reason,"
        " note, at, log_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (candidate_id, annotator, int(final), vote["decision"], vote.get("reason"),
         vote.get("note"), vote["at"], vote.get("log_id")))


def _same(a: dict, b: dict) -> bool:
    return all(a.get(k) == b.get(k) for k in (*STATE_FIELDS, "tags"))


def _bulk_sql(f: CandidateFilter, store: Store, action: str | None, overwrite: bool
              ) -> tuple[str, list]:
    """The FROM/WHERE of the candidates a bulk `action` over `f` touches: the undecided ones
    (all with `overwrite`), minus production items not ready to accept for an accept. One
    rule for the preview's count and for the action itself."""
    where, params = where_clause(f, store)
    if not overwrite:
        where += f" AND NOT {DECIDED_SQL}"
    if action == "accept":
        where += f" AND NOT {NOT_READY_SQL}"
    return where, list(params)


def bulk_preview(store: Store, f: CandidateFilter, action: str | None = None) -> dict:
    """What a bulk action over `f` would touch: {matching, open, decided, by: {annotator: n},
    applies, applies_overwrite, not_ready}. `decided` candidates (someone accepted or rejected
    them) are left alone unless the action is told to overwrite; `by` names whose decisions
    those are (a candidate decided by two annotators counts for each). `applies` is exactly
    how many `bulk_decide(..., action)` changes at most (`applies_overwrite` with overwrite);
    `not_ready` counts production items an accept leaves out (`check_accept`)."""
    where, params = where_clause(f, store)
    matching = store.conn.execute(f"SELECT count(*) {where}", params).fetchone()[0]
    decided = store.conn.execute(f"SELECT count(*) {where} AND {DECIDED_SQL}",
                                 params).fetchone()[0]
    by = dict(store.conn.execute(
        "SELECT v.annotator, count(DISTINCT v.candidate_id) FROM review_votes v"
        f" WHERE v.decision <> 'skip' AND v.candidate_id IN (SELECT c.id {where}"
        f" AND {DECIDED_SQL}) GROUP BY v.annotator ORDER BY 2 DESC, 1", params).fetchall())
    not_ready = 0
    if action == "accept":
        not_ready = store.conn.execute(f"SELECT count(*) {where} AND {NOT_READY_SQL}",
                                       params).fetchone()[0]
    counts = {}
    for name, overwrite in (("applies", False), ("applies_overwrite", True)):
        sql, sql_params = _bulk_sql(f, store, action, overwrite)
        counts[name] = store.conn.execute(f"SELECT count(*) {sql}", sql_params).fetchone()[0]
    return {"matching": matching, "open": matching - decided, "decided": decided, "by": by,
            "not_ready": not_ready, **counts}


def bulk_decide(store: Store, f: CandidateFilter, annotator: str, action: str, *,
                reason: str | None = None, note: str | None = None, tag: str | None = None,
                overwrite: bool = False, chunk: int = 500) -> tuple[str, int]:
    """Apply accept / reject / skip / tag / untag to the candidates matching `f` now.

    By default only candidates nobody has accepted or rejected yet are touched (a decision on
    them is this annotator's vote). A bulk accept leaves out production items not ready to
    be accepted (no reference or no chunks marked yet: `check_accept`). With
    `overwrite=True` the decided ones are included, and a decision on them is a FINAL
    decision by this annotator (it settles the item whatever the votes say; the votes stay in
    the log and in `review_votes`).

    The ids are fixed when the call starts; they are written in transactions of `chunk` rows
    (so other writers are never locked out for long), every log row carrying the same
    batch_id, which `undo_last` reverts as one step. Returns (batch_id, rows changed).
    """
    if action not in (*DECISIONS, "tag", "untag"):
        raise ReviewError(f"bulk {action!r} is not supported")
    if action in DECISIONS:
        check_decision(action, reason, note)
    where, params = _bulk_sql(f, store, action, overwrite)
    rows = store.conn.execute(f"SELECT c.id, {DECIDED_SQL} {where} ORDER BY c.id",
                              params).fetchall()
    batch_id = uuid.uuid4().hex
    changed = 0
    for start in range(0, len(rows), chunk):
        with store.write():
            now = utcnow()
            overlap = get_overlap(store.conn)
            for cid, decided in rows[start:start + chunk]:
                if apply_action(store.conn, cid, annotator, action, now, reason=reason,
                                note=note, tag=tag, batch_id=batch_id,
                                final=bool(decided) and action in DECISIONS,
                                overlap=overlap) is not None:
                    changed += 1
    return batch_id, changed


def undo_last(store: Store, annotator: str) -> UndoResult | None:
    """Revert `annotator`'s most recent change that is not yet undone (a bulk batch counts as
    one), appending an `undo` log row per reverted row with `undoes` = its id.

    A decision is undone by putting the annotator's vote back as it was and settling the item
    again from everyone's votes. An edit or tag is undone only if the fields it changed still
    hold what it wrote; if someone changed them since, nothing is overwritten: its undo row is
    written with after == before and note 'conflict', so repeated undo moves on, and the
    result counts it in `conflicts`. Returns None when there is nothing to undo.
    """
    with store.write():
        conn = store.conn
        target = conn.execute(
            "SELECT id, batch_id FROM review_log r WHERE annotator = ? AND action <> 'undo'"
            " AND NOT EXISTS (SELECT 1 FROM review_log u WHERE u.undoes = r.id)"
            " ORDER BY id DESC LIMIT 1", (annotator,)).fetchone()
        if target is None:
            return None
        columns = "id, candidate_id, action, before, after, final"
        if target[1] is not None:
            rows = conn.execute(
                f"SELECT {columns} FROM review_log r"
                " WHERE batch_id = ? AND annotator = ? AND action <> 'undo' AND NOT EXISTS"
                " (SELECT 1 FROM review_log u WHERE u.undoes = r.id) ORDER BY id DESC",
                (target[1], annotator)).fetchall()
        else:
            rows = conn.execute(f"SELECT {columns} FROM review_log WHERE id = ?",
                                (target[0],)).fetchall()
        now = utcnow()
        result = UndoResult(action=rows[0][2])
        for log_id, cid, action, before_json, after_json, final in rows:
            restored = revert(conn, log_id, cid, annotator, action, from_json(before_json, {}),
                              from_json(after_json, {}), bool(final), now,
                              batch_id=target[1])
            result.restored += restored
            result.conflicts += not restored
            result.candidate_ids.append(cid)
        return result


def revert(conn: sqlite3.Connection, log_id: int, candidate_id: str, annotator: str,
           action: str, before: dict, after: dict, final: bool, now: str, *,
           batch_id: str | None = None, uid: str | None = None) -> bool:
    """Write the undo row of log row `log_id` (see `undo_last`); True when it was restored."""
    current = _state(conn, candidate_id)["state"]
    if action in DECISIONS:
        votes = _votes(conn, candidate_id)
        mine = next((v for v in votes
                     if v["annotator"] == annotator and v["final"] == int(final)), None)
        # Rows logged before votes existed carry no "vote": their vote was the action itself.
        expected = _vote_key(after.get("vote")) if "vote" in after else (action,)
        held = _vote_key(mine)
        if held is not None and "vote" not in after:
            held = held[:1]
        if held == expected:
            wanted = before.get("vote") if "vote" in before else None
            others = [v for v in votes if v is not mine]
            restored_vote = None if wanted is None else {
                "annotator": annotator, "final": int(final), **wanted}
            state = _settled(conn, candidate_id, current,
                             others + ([restored_vote] if restored_vote else []), None)
            _write_state(conn, candidate_id, current, state, now)
            _log(conn, candidate_id, annotator, now, "undo",
                 {**current, "vote": _vote_record(mine)},
                 {**state, "vote": _vote_record(restored_vote)}, undoes=log_id,
                 batch_id=batch_id, final=final, uid=uid)
            _put_vote(conn, candidate_id, annotator, final, restored_vote)
            return True
    else:
        changed = [k for k in (*STATE_FIELDS, "tags") if before.get(k) != after.get(k)
                   and k not in SETTLED_FIELDS]
        if all(current.get(k) == after.get(k) for k in changed):
            wanted = {**current, **{k: before.get(k) for k in changed}}
            _write_state(conn, candidate_id, current, wanted, now)
            _log(conn, candidate_id, annotator, now, "undo", current, wanted, undoes=log_id,
                 batch_id=batch_id, uid=uid)
            return True
    _log(conn, candidate_id, annotator, now, "undo", current, current, undoes=log_id,
         note="conflict: changed by someone else since; not restored", batch_id=batch_id,
         uid=uid)
    return False


def set_overlap(store: Store, overlap: Overlap) -> int:
    """Store the database's overlap setting and settle again the open items it completes (an
    item waiting for a second vote when k drops to 1 takes its vote). Items already accepted
    or rejected stay as they are. One transaction; returns how many items changed status."""
    from builder.store.review_overlap import META_KEY

    with store.write():
        conn = store.conn
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                     (META_KEY, to_json({"k": overlap.k, "share": overlap.share})))
        changed = 0
        now = utcnow()
        waiting = [r[0] for r in conn.execute(
            "SELECT id FROM candidates WHERE status = 'pending' AND votes > 0 AND conflict = 0")]
        for cid in waiting:
            state = _state(conn, cid)["state"]
            after = _settled(conn, cid, state, _votes(conn, cid), overlap)
            if after["status"] != state["status"]:
                _write_state(conn, cid, state, after, now)
                changed += 1
        return changed
