"""`golden logs promote`: bad cases and thumbs-up records become review candidates of type
`production`, with their provenance.

What is picked (in the window, oldest records first, then ordered as below):
- bad cases (`attribution.bad_case` over the newest evaluation and the feedback), optionally
  only of some causes, most signals first; their candidate has NO answer: the reviewer writes
  the reference (a thumbs-down answer is never a reference);
- thumbs-up records that are not bad cases, newest first; their answer is proposed as the
  reference, which the reviewer accepts or rewrites;
- or exactly the records named with `--record` (a bad case among them gets no answer, any
  other its production answer as the proposed reference).
Records already promoted (or linked) are left out; `--limit` caps the new ones.

Each picked record is compared with the existing items (candidates not rejected and not
duplicates, and those this promotion just added): a question whose character 5-gram shingles
overlap an item's by at least the generator's near-duplicate threshold
(`builder.generate.dedup.QUESTION_THRESHOLD`, Jaccard 0.8) is linked to that item instead of
being added twice. Neighbours come from the trigram index (BM25, 20 per question), so the check
costs a few index lookups whatever the size of the pool.

Provenance kept on the candidate (and in the export): the log record id, its date, session,
the signals that picked it, the cause and evidence, the production answer, the retrieved ids
and those the judge found useful (suggested chunks for the reviewer), and the judge model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from builder.generate.dedup import QUESTION_THRESHOLD, shingles
from builder.generate.terms import jaccard
from builder.logs.attribution import bad_case, sort_cases, useful_chunk_ids
from builder.store import Store
from builder.store.logs import (
    linked_candidates, newest_evaluations, promotable_records, records_by_id,
)
from builder.store.production import promote_records, question_neighbours
from builder.text.language import detect_language
from builder.vocabulary import PRODUCTION

VERIFICATION = [{"check": "production", "passed": True, "source": "code",
                 "reason": "a real user question from production logs (golden logs promote); "
                           "the reference and relevant chunks come from the reviewer"}]


@dataclass(frozen=True)
class PromoteOptions:
    causes: frozenset[str] | None = None     # None: every cause
    bad_cases: bool = True
    thumbs_up: bool = True
    record_ids: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    limit: int | None = 50
    dry_run: bool = False


@dataclass
class PromoteReport:
    created: list[dict[str, Any]] = field(default_factory=list)   # new candidates
    linked: list[tuple[str, str, float]] = field(default_factory=list)  # record, item, sim
    already: int = 0          # picked records promoted before
    left: int = 0             # picked but over --limit
    missing: list[str] = field(default_factory=list)  # --record ids not in the database


def candidate_id(record_id: str) -> str:
    return "prod-" + hashlib.sha256(record_id.encode("utf-8")).hexdigest()[:16]


def _picked(store: Store, options: PromoteOptions, report: PromoteReport
            ) -> list[tuple[dict, dict | None, str]]:
    """(record, bad case or None, why) for the records to promote, in promotion order."""
    if options.record_ids:
        found = records_by_id(store, options.record_ids)
        report.missing = [r for r in options.record_ids if r not in found]
        evals = newest_evaluations(store, found)
        linked = linked_candidates(store, found)
        out = []
        for rid in dict.fromkeys(options.record_ids):
            if rid not in found:
                continue
            record = found[rid]
            ev = evals.get(rid) or {}
            record.update(metrics=ev.get("metrics") or {}, details=ev.get("details") or {},
                          judge_model=ev.get("judge_model"), linked_to=linked.get(rid))
            case = bad_case(record, record["metrics"], record["details"])
            why = ("bad case" if case else
                   "thumbs up" if record.get("thumbs") == "up" else "selected")
            out.append((record, case, why))
        return out
    bad, good = [], []
    for record in promotable_records(store, options.since, options.until):
        case = bad_case(record, record["metrics"], record["details"])
        if case is not None:
            if options.bad_cases and (options.causes is None
                                      or case["attribution"] in options.causes):
                case["record"] = record
                bad.append(case)
        elif options.thumbs_up and record.get("thumbs") == "up":
            good.append(record)
    good.sort(key=lambda r: (r["at"], r["id"]), reverse=True)
    return ([(c.pop("record"), c, "bad case") for c in sort_cases(bad)]
            + [(r, None, "thumbs up") for r in good])


def _provenance(record: dict, case: dict | None, why: str) -> dict[str, Any]:
    signals = list(case["signals"]) if case else (["thumbs_up"] if why == "thumbs up" else [])
    return {
        "source": "production_log", "record_id": record["id"], "at": record["at"],
        "session_id": record.get("session_id"), "picked_as": why, "signals": signals,
        "cause": case["attribution"] if case else None,
        "evidence": list(case["evidence"]) if case else [],
        "production_answer": record.get("answer"),
        "retrieved_ids": record.get("retrieved_ids") or [],
        "useful_chunk_ids": useful_chunk_ids(record, record.get("details") or {}),
        "feedback": {"thumbs": record.get("thumbs"), "reason": record.get("feedback_reason"),
                     "reasked": bool(record.get("reasked")),
                     "handed_off": bool(record.get("handed_off"))},
        "metrics": record.get("metrics") or {}, "judge_model": record.get("judge_model"),
    }


def promote(store: Store, options: PromoteOptions,
            progress: Callable[[str], None] | None = None) -> PromoteReport:
    """Pick, de-duplicate and write (see the module docstring); with `dry_run`, decide the
    same way and write nothing."""
    report = PromoteReport()
    new_rows: list[dict[str, Any]] = []
    links: list[tuple[str, str, float, dict]] = []
    fresh: list[tuple[str, set]] = []     # (candidate id, shingles) added by this run
    for record, case, why in _picked(store, options, report):
        if record.get("linked_to"):
            report.already += 1
            continue
        if options.limit is not None and len(new_rows) + len(report.linked) >= options.limit:
            report.left += 1
            continue
        provenance = _provenance(record, case, why)
        question = record["query"]
        mine = shingles(question)
        best: tuple[float, str] | None = None
        for other in question_neighbours(store, question):
            if other["status"] == "rejected" or other["duplicate_of"]:
                continue
            sim = jaccard(mine, shingles(other["question"]))
            if sim >= QUESTION_THRESHOLD and (best is None or sim > best[0]):
                best = (sim, other["id"])
        for cid, sh in fresh:
            sim = jaccard(mine, sh)
            if sim >= QUESTION_THRESHOLD and (best is None or sim > best[0]):
                best = (sim, cid)
        link_prov = {k: provenance[k] for k in ("at", "signals", "cause", "picked_as")}
        if best is not None:
            report.linked.append((record["id"], best[1], best[0]))
            links.append((best[1], record["id"], round(best[0], 4), link_prov))
            continue
        cid = candidate_id(record["id"])
        session = record.get("session_id")
        answer = "" if case is not None else (record.get("answer") or "")
        new_rows.append({
            "id": cid, "type": PRODUCTION, "question": question, "answer": answer,
            "language": detect_language(question), "chunk_ids": [], "evidence": [],
            "fact_ids": [], "seed_fact_id": f"session:{session}" if session else None,
            "verification": VERIFICATION, "verdict": "passed", "rejection_reasons": [],
            "provenance": provenance,
        })
        links.append((cid, record["id"], 1.0, link_prov))
        fresh.append((cid, mine))
    report.created = new_rows
    if not options.dry_run and (new_rows or links):
        promote_records(store, new_rows, links)
    return report


def describe(report: PromoteReport, options: PromoteOptions) -> list[str]:
    verb = "would add" if options.dry_run else "added"
    causes: dict[str, int] = {}
    for row in report.created:
        key = row["provenance"]["cause"] or row["provenance"]["picked_as"]
        causes[key] = causes.get(key, 0) + 1
    detail = ", ".join(f"{v} {k}" for k, v in sorted(causes.items(), key=lambda kv: -kv[1]))
    lines = [f"{verb} {len(report.created)} production candidates"
             + (f" ({detail})" if detail else "")
             + f"; {len(report.linked)} records linked to existing items as near-duplicates"]
    if report.already:
        lines.append(f"{report.already} picked records were promoted before (left as they are)")
    if report.left:
        lines.append(f"{report.left} more records were picked: raise --limit to promote them")
    if report.missing:
        shown = ", ".join(report.missing[:3]) + (" ..." if len(report.missing) > 3 else "")
        lines.append(f"not in the database: {shown}")
    if report.created and not options.dry_run:
        lines.append("review them: `golden review` (filter type=production); each needs a "
                     "reference answer and its relevant chunks before it can be accepted")
    return lines
