"""All SQL of the generation pipeline: chunks to work on, candidates and the stage ledger (and
the facts table of runs before answer-first generation, read by `load_facts`).

Guarantees the generator relies on:

- Every unit of work is written by ONE call here, in ONE `store.write()` transaction together with
  its `stage_done` row (`record_candidates`, `record_verification`). A crash between units
  loses at most the unit in flight; a crash inside one leaves nothing of it.
- Inserts are `INSERT OR IGNORE` on deterministic ids, so replaying a unit never duplicates rows.
- JSON columns are written and read back decoded by `jsoncols`.
- The review columns (`status`, `edit_*`, `reject_*`, `reviewer`, `reviewed_at`) are never written
  here: the review UI owns them.
"""

from __future__ import annotations

from collections.abc import Iterable

from builder.store.db import Store
from builder.store.jsoncols import decode, from_json, to_json
from builder.store.timeutil import utcnow

FACT_JSON = ("entities", "dates", "cell")
CANDIDATE_JSON = ("difficulty_signals", "chunk_ids", "hops", "evidence", "fact_ids", "prompts",
                  "verification", "rejection_reasons", "part_ids")
CANDIDATE_COLUMNS = (
    "id", "type", "question", "answer", "language", "difficulty", "difficulty_signals",
    "chunk_ids", "hops", "evidence", "fact_ids", "seed_fact_id", "parent_id", "document_id",
    "generator_model", "prompts", "verification", "verdict", "rejection_reasons", "duplicate_of",
    "part_ids", "created_at", "updated_at",
)


# ---------------------------------------------------------------- stage ledger

def done_keys(store: Store, stage: str) -> set[str]:
    return {r["key"] for r in store.query("SELECT key FROM stage_done WHERE stage = ?", [stage])}


def done_infos(store: Store, stage: str) -> list[dict]:
    """The decoded `info` of every ledger row of `stage` (what each finished unit covered)."""
    rows = store.query("SELECT info FROM stage_done WHERE stage = ?", [stage])
    return [from_json(r["info"], {}) for r in rows]


def _mark_done(db, stage: str, key: str, info: dict | None) -> None:
    db.execute(
        "INSERT OR REPLACE INTO stage_done (stage, key, done_at, info) VALUES (?, ?, ?, ?)",
        [stage, key, utcnow(), to_json(info or {})],
    )


# ---------------------------------------------------------------- facts

def load_facts(store: Store, chunk_ids: Iterable[str] | None = None,
               prompt_version: str | None = None, prompt_name: str | None = None) -> list[dict]:
    """Facts (JSON decoded) joined with their chunk's document and language, in chunk order;
    optionally only those of one extractor (`prompt_name`: "facts" or "statements") and version."""
    where, params = [], []
    if prompt_version is not None:
        where.append("f.prompt_version = ?")
        params.append(prompt_version)
    if prompt_name is not None:
        where.append("f.prompt_name = ?")
        params.append(prompt_name)
    rows = store.query(
        f"""SELECT f.*, c.document_id, COALESCE(f.language, c.language) AS chunk_language
            FROM facts f JOIN chunks c ON c.id = f.chunk_id
            {'WHERE ' + ' AND '.join(where) if where else ''}
            ORDER BY c.document_id, c.seq, f.chunk_id, f.seq""",
        params,
    )
    if chunk_ids is not None:
        wanted = set(chunk_ids)
        rows = [r for r in rows if r["chunk_id"] in wanted]
    return [decode(r, FACT_JSON) for r in rows]


# ---------------------------------------------------------------- candidates

def record_candidates(store: Store, rows: list[dict], *, stage: str, key: str, info: dict) -> int:
    """Insert candidates (INSERT OR IGNORE) and the unit's ledger row in one transaction.

    Returns how many rows were new."""
    now = utcnow()
    new = 0
    with store.write() as db:
        for row in rows:
            values = {c: row.get(c) for c in CANDIDATE_COLUMNS}
            values["verdict"] = values["verdict"] or "pending"
            values["created_at"] = values["updated_at"] = now
            for c in CANDIDATE_JSON:
                values[c] = to_json(values[c])
            cur = db.execute(
                f"INSERT OR IGNORE INTO candidates ({', '.join(values)}) "
                f"VALUES ({', '.join('?' * len(values))})",
                list(values.values()),
            )
            new += cur.rowcount
        _mark_done(db, stage, key, info)
    return new


def load_candidates(store: Store, *, verdict: str | None = None) -> list[dict]:
    """Generated candidates (JSON decoded), oldest first; review columns included read-only."""
    where, params = "", []
    if verdict is not None:
        where, params = "WHERE verdict = ?", [verdict]
    rows = store.query(f"SELECT * FROM candidates {where} ORDER BY created_at, id", params)
    return [decode(r, CANDIDATE_JSON) for r in rows]


def record_verification(store: Store, candidate_id: str, *, verification: list[dict],
                        verdict: str, rejection_reasons: list[str], stage: str, key: str) -> None:
    with store.write() as db:
        db.execute(
            """UPDATE candidates SET verification = ?, verdict = ?, rejection_reasons = ?,
                   updated_at = ? WHERE id = ?""",
            [to_json(verification), verdict, to_json(rejection_reasons), utcnow(), candidate_id],
        )
        _mark_done(db, stage, key, {"candidate_id": candidate_id, "verdict": verdict})


def record_verifications(store: Store, rows: list[dict], *, stage: str) -> None:
    """Store the verdicts of several candidates and each one's ledger row in ONE transaction,
    so a unit that judged them together (one batched verifier call) is committed whole or not
    at all. Each row holds `candidate_id`, `verification`, `verdict`, `rejection_reasons` and
    `key` (its `stage_done` key); columns and ledger rows are those of `record_verification`."""
    if not rows:
        return
    now = utcnow()
    with store.write() as db:
        for row in rows:
            db.execute(
                """UPDATE candidates SET verification = ?, verdict = ?, rejection_reasons = ?,
                       updated_at = ? WHERE id = ?""",
                [to_json(row["verification"]), row["verdict"], to_json(row["rejection_reasons"]), now,
                 row["candidate_id"]],
            )
            _mark_done(db, stage, row["key"],
                       {"candidate_id": row["candidate_id"], "verdict": row["verdict"]})


def record_duplicates(store: Store, pairs: list[tuple[str, str]], *, stage: str,
                      key: str) -> int:
    """Set `duplicate_of` for (duplicate id, kept id) pairs, only where not already set, and
    record the pass in the ledger, in one transaction. Returns rows changed."""
    changed = 0
    now = utcnow()
    with store.write() as db:
        for dup, keep in pairs:
            cur = db.execute(
                "UPDATE candidates SET duplicate_of = ?, updated_at = ? "
                "WHERE id = ? AND duplicate_of IS NULL",
                [keep, now, dup],
            )
            changed += cur.rowcount
        _mark_done(db, stage, key, {"duplicates": changed})
    return changed


def release_duplicates(store: Store, ids: list[str]) -> None:
    """Clear `duplicate_of` of `ids` in one transaction (generate.candidate.stale_duplicates)."""
    if not ids:
        return
    now = utcnow()
    with store.write() as db:
        db.conn.executemany(
            "UPDATE candidates SET duplicate_of = NULL, updated_at = ? WHERE id = ?",
            [(now, cid) for cid in ids])


def record_difficulty(store: Store, rows: list[tuple[str, str, dict]]) -> None:
    """Store (candidate id, difficulty, signals) in one transaction."""
    if not rows:
        return
    now = utcnow()
    with store.write() as db:
        for cid, level, signals in rows:
            db.execute(
                "UPDATE candidates SET difficulty = ?, difficulty_signals = ?, updated_at = ? "
                "WHERE id = ?",
                [level, to_json(signals), now, cid],
            )
