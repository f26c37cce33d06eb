"""Human calibration scores (`calibration`): what the review UI's calibration mode asks for,
records, and what `golden calibrate` imports and reads back to measure the judge.

Guarantees:
- The judge's own scores are never selected here, so an annotator cannot see them.
- Every write is one transaction; importing the same file twice adds nothing the second time.
- The latest row per (item, annotator, metric) is the one that counts.
"""

from __future__ import annotations

from typing import Any

from builder.errors import ReviewError
from builder.store.db import Store
from builder.store.jsoncols import from_json, to_json
from builder.store.timeutil import utcnow

CALIBRATION_METRICS = ("faithfulness", "correctness")


def calibration_queue(store: Store, annotator: str, run_id: str | None = None,
                      limit: int = 200) -> list[dict]:
    """Scored answers `annotator` has not yet given both human scores for, oldest run first.

    Each item: run_id, query_id, question, reference, answer, contexts (list of str) and the
    annotator's scores so far {metric: score}. The judge's scores are never selected, so the
    annotator cannot see them.
    """
    metrics = ", ".join(f"'{m}'" for m in CALIBRATION_METRICS)
    rows = store.query(
        "SELECT ri.run_id, ri.query_id, ri.question, ri.reference, ri.answer, ri.contexts"
        " FROM run_items ri LEFT JOIN runs r ON r.id = ri.run_id"
        " WHERE (? IS NULL OR ri.run_id = ?) AND (SELECT count(DISTINCT k.metric)"
        "   FROM calibration k WHERE k.run_id = ri.run_id AND k.query_id = ri.query_id"
        f"   AND k.annotator = ? AND k.metric IN ({metrics})) < ?"
        " ORDER BY r.created_at, ri.run_id, ri.query_id LIMIT ?",
        (run_id, run_id, annotator, len(CALIBRATION_METRICS), limit))
    for row in rows:
        contexts = from_json(row["contexts"], [])
        row["contexts"] = [c if isinstance(c, str) else to_json(c)
                           for c in (contexts if isinstance(contexts, list) else [contexts])]
        row["scores"] = calibration_scores(store, row["run_id"], row["query_id"], annotator)
    return rows


def calibration_scores(store: Store, run_id: str, query_id: str, annotator: str
                       ) -> dict[str, int]:
    """The annotator's latest score per metric for one item."""
    return {m: s for m, s in store.conn.execute(
        "SELECT metric, score FROM calibration WHERE run_id = ? AND query_id = ?"
        " AND annotator = ? ORDER BY id", (run_id, query_id, annotator))}


def import_calibration(store: Store, run_id: str, scores: list[dict]) -> int:
    """Store imported human scores (query_id, metric, score, annotator) for `run_id` with
    source 'import', in one transaction. A score already stored identically (same run, item,
    metric, annotator and value, from an import) is not added again, so importing a file twice
    changes nothing. Returns how many rows were added."""
    added = 0
    with store.write():
        for s in scores:
            exists = store.conn.execute(
                "SELECT 1 FROM calibration WHERE run_id = ? AND query_id = ? AND metric = ?"
                " AND annotator = ? AND score = ? AND source = 'import' LIMIT 1",
                (run_id, s["query_id"], s["metric"], s["annotator"], s["score"])).fetchone()
            if exists:
                continue
            store.conn.execute(
                "INSERT INTO calibration (run_id, query_id, metric, score, annotator, source, at)"
                " VALUES (?, ?, ?, ?, ?, 'import', ?)",
                (run_id, s["query_id"], s["metric"], s["score"], s["annotator"], utcnow()))
            added += 1
    return added


def record_calibration(store: Store, *, run_id: str | None, query_id: str, metric: str,
                       score: int, annotator: str, source: str = "tui") -> int:
    """Append one human score (1-5) for `metric`; the latest row per (item, annotator, metric)
    is the one that counts. Returns the row id."""
    if metric not in CALIBRATION_METRICS:
        raise ReviewError(f"unknown calibration metric {metric!r}")
    if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 5:
        raise ReviewError(f"calibration score must be an integer 1-5, got {score!r}")
    with store.write():
        return store.conn.execute(
            "INSERT INTO calibration (run_id, query_id, metric, score, annotator, source, at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run_id, query_id, metric, score, annotator, source, utcnow())).lastrowid


def human_scores(store: Store, run_id: str | None = None) -> list[dict]:
    """Human 1-5 scores from the `calibration` table (for one run, or all when None), oldest
    first: query_id, metric, score, annotator, run_id."""
    sql = "SELECT run_id, query_id, metric, score, annotator, at FROM calibration"
    params: list[Any] = []
    if run_id is not None:
        sql += " WHERE run_id = ? OR run_id IS NULL"
        params.append(run_id)
    return store.query(sql + " ORDER BY at, id", params)


def save_judge_calibration(store: Store, *, judge_model: str, run_id: str | None,
                           entries: list[dict]) -> None:
    """Store agreement figures (each: metric, prompts, n, exact, within_one, kappa) for
    `judge_model`, in one transaction; a key measured again is replaced."""
    at = utcnow()
    with store.write():
        store.conn.executemany(
            "INSERT OR REPLACE INTO judge_calibration (judge_model, prompts, metric, n, exact,"
            " within_one, kappa, run_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(judge_model, e["prompts"], e["metric"], e["n"], e["exact"], e["within_one"],
              e["kappa"], run_id, at) for e in entries])


def judge_calibration(store: Store, judge_model: str, prompts: str, metric: str
                      ) -> dict | None:
    """The stored agreement of one (judge model, prompt versions, metric), or None."""
    rows = store.query(
        "SELECT judge_model, prompts, metric, n, exact, within_one, kappa, run_id, at"
        " FROM judge_calibration WHERE judge_model = ? AND prompts = ? AND metric = ?",
        (judge_model, prompts, metric))
    return rows[0] if rows else None
