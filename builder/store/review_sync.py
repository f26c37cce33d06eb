"""Moving review decisions between databases: the log rows out (`iter_log_records`) and in
(`import_log_records`), identified by their stable `uid`.

Guarantees:
- The log stays append-only on both sides: an imported row is a NEW local row carrying its
  original uid, annotator and time; no existing row is changed.
- Idempotent: a row whose uid is already here is passed over, so importing a file twice (or a
  file exported from this database) adds nothing.
- An imported decision is the annotator's vote like any other (review_log.settle): one that
  disagrees with the decisions here puts the candidate in the adjudication queue; an older
  decision than the same annotator's here is logged and changes nothing. An imported edit
  applies when the field still holds what it replaced (or already holds the new value); else
  it is logged as a conflict, not applied, and the candidate is tagged `edit-conflict`.
- Each batch of rows is one BEGIN IMMEDIATE transaction; an interrupted import is finished
  by running it again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from builder.errors import InputError
from builder.store.db import Store
from builder.store.jsoncols import from_json
from builder.store.review_log import EDITABLE, _log, _state, apply_action, revert
from builder.store.review_overlap import get_overlap

EDIT_CONFLICT_TAG = "edit-conflict"


def iter_log_records(store: Store) -> Iterator[dict]:
    """Every review_log row in log order as a portable record: uid, candidate_id, annotator,
    at, action, final, reason, note, edits ({field: new value}) and edits_before ({field: old
    value}) for an edit, tag for tag/untag, undoes (the uid of the row it undoes), batch_id.
    Streams from one cursor."""
    cur = store.conn.execute(
        "SELECT r.uid, r.candidate_id, r.annotator, r.at, r.action, r.final, r.reason, r.note,"
        " r.before, r.after, u.uid, r.batch_id FROM review_log r"
        " LEFT JOIN review_log u ON u.id = r.undoes ORDER BY r.id")
    try:
        while rows := cur.fetchmany(1000):
            for (uid, cid, annotator, at, action, final, reason, note, before, after, undoes,
                 batch_id) in rows:
                record = {"uid": uid, "candidate_id": cid, "annotator": annotator, "at": at,
                          "action": action, "final": bool(final), "reason": reason,
                          "note": note, "edits": None, "edits_before": None, "tag": None,
                          "undoes": undoes, "batch_id": batch_id}
                b, a = from_json(before, {}), from_json(after, {})
                if action == "edit":
                    changed = [n for n, col in EDITABLE.items() if b.get(col) != a.get(col)]
                    record["edits"] = {n: a.get(EDITABLE[n]) for n in changed}
                    record["edits_before"] = {n: b.get(EDITABLE[n]) for n in changed}
                elif action in ("tag", "untag"):
                    diff = set(a.get("tags") or []) ^ set(b.get("tags") or [])
                    record["tag"] = min(diff) if diff else None
                yield record
    finally:
        cur.close()


@dataclass
class ImportResult:
    """What an import did."""

    added: int = 0
    already: int = 0
    conflicts_opened: int = 0
    edit_conflicts: int = 0
    candidate_ids: list[str] = field(default_factory=list)


def check_import(store: Store, records: Sequence[dict], path: str,
                 lines: Sequence[int]) -> None:
    """Refuse (InputError naming the file and line) a file whose rows name a candidate this
    database does not have, or undo a row that is neither here nor earlier in the file."""
    conn = store.conn
    known_uids = set()
    for record, line in zip(records, lines):
        exists = conn.execute("SELECT 1 FROM candidates WHERE id = ?",
                              (record["candidate_id"],)).fetchone()
        if exists is None:
            missing = sum(1 for r in records if conn.execute(
                "SELECT 1 FROM candidates WHERE id = ?", (r["candidate_id"],)).fetchone() is None)
            raise InputError(f"candidate {record['candidate_id']!r} is not in this database "
                             f"({missing} row(s) name unknown candidates): generate the same "
                             f"candidates here first; nothing was imported", path=path, line=line)
        undoes = record.get("undoes")
        if undoes and undoes not in known_uids and conn.execute(
                "SELECT 1 FROM review_log WHERE uid = ?", (undoes,)).fetchone() is None:
            raise InputError(f"row undoes {undoes!r}, which is neither in this database nor "
                             f"earlier in the file; nothing was imported", path=path, line=line)
        known_uids.add(record["uid"])


def import_log_records(store: Store, records: Sequence[dict], batch: int = 500
                       ) -> ImportResult:
    """Append the records not yet here (by uid) and apply them (see the module doc)."""
    result = ImportResult()
    touched: dict[str, None] = {}
    for start in range(0, len(records), batch):
        with store.write():
            conn = store.conn
            overlap = get_overlap(conn)
            for record in records[start:start + batch]:
                if conn.execute("SELECT 1 FROM review_log WHERE uid = ?",
                                (record["uid"],)).fetchone():
                    result.already += 1
                    continue
                cid = record["candidate_id"]
                was_conflict = _state(conn, cid)["state"]["conflict"]
                _apply(store, record, overlap, result)
                result.added += 1
                touched[cid] = None
                if _state(conn, cid)["state"]["conflict"] and not was_conflict:
                    result.conflicts_opened += 1
    result.candidate_ids = list(touched)
    return result


def _apply(store: Store, record: dict, overlap, result: ImportResult) -> None:
    conn = store.conn
    cid, annotator, at, action = (record["candidate_id"], record["annotator"], record["at"],
                                  record["action"])
    if action == "undo":
        row = conn.execute("SELECT id, action, before, after, final, annotator FROM review_log"
                           " WHERE uid = ?", (record["undoes"],)).fetchone()
        revert(conn, row[0], cid, row[5], row[1], from_json(row[2], {}), from_json(row[3], {}),
               bool(row[4]), at, batch_id=record.get("batch_id"), uid=record["uid"])
        return
    note = record.get("note")
    if action == "edit":
        current = _state(conn, cid)["state"]
        edits = record.get("edits") or {}
        before = record.get("edits_before") or {}
        clash = [n for n, value in edits.items()
                 if current.get(EDITABLE[n]) not in (before.get(n), value)]
        if clash:
            _log(conn, cid, annotator, at, "edit", current, current, uid=record["uid"],
                 note=f"conflict: {', '.join(clash)} edited here too; not applied",
                 batch_id=record.get("batch_id"))
            apply_action(conn, cid, "import", "tag", at, tag=EDIT_CONFLICT_TAG)
            result.edit_conflicts += 1
            return
    logged = apply_action(conn, cid, annotator, action, at, reason=record.get("reason"),
                          note=note, edits=record.get("edits"), tag=record.get("tag"),
                          final=record.get("final", False), batch_id=record.get("batch_id"),
                          uid=record["uid"], overlap=overlap)
    if logged is None:
        # Already so here: keep the row anyway, so its uid is known and the log complete.
        current = _state(conn, cid)["state"]
        _log(conn, cid, annotator, at, action, current, current, uid=record["uid"],
             reason=record.get("reason"), note=note, batch_id=record.get("batch_id"),
             final=record.get("final", False))
