"""`golden logs evaluate`: judge a deterministic sample of production records and report.

What is judged: the records of the window whose `sample_key` (a hash of the id) is below the
rate -- the same records however often it runs, and a higher rate keeps every record a lower
one picked -- plus every record flagged by feedback (thumbs down, re-asked, handed off).
Records without an answer are reported but not judged.

How: `builder.score.judge.judge_records` with the reference-free aspects (claim-level
faithfulness against the logged contexts, answer relevancy, context relevance, refusal; no
correctness: production has no reference). Every call goes through the LLM client's cache, and
each record's outcome is stored in `log_evaluations` under a key of the judge configuration
(model, prompt versions, aspects, contexts read): running again judges only records not judged
yet under that key (or not fully: an item the judge could not score is tried again), so an
interrupted run resumes, and a nightly run judges only the new day.

The report is `builder.score.scoring.build_records_report`'s layout, so every renderer and the
`--fail-under`/`--fail-over` gate of `golden score` apply. Its `summary` (what the gate reads)
is over the random sample only: flagged records are a biased sample and are reported under
`breakdowns.type.flagged` and in the bad cases. Added: `bad_cases` with cause and evidence
(`attribution`), `trends` (`trends`), and `logs` (rate, window, counts).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from builder.errors import InputError
from builder.llm.prompts import load_prompt
from builder.logs.attribution import RULE, bad_case, sort_cases
from builder.logs.trends import build_trends
from builder.score.directions import JUDGE_METRICS
from builder.score.judge import (
    PROMPTS, Judge, JudgeInput, JudgeOutcome, JudgeProgress, judge_records,
)
from builder.score.scoring import build_records_report
from builder.score.signals import SIGNALS_VERSION
from builder.store import Store
from builder.store.documents import chunks_by_id
from builder.store.logs import (
    context_texts, count_records, evaluations, sample_records, save_evaluations,
)

ASPECTS = ("refusal", "faithfulness", "answer_relevancy", "context_relevance")
METRICS = tuple(m for m in JUDGE_METRICS if m not in ("correctness", "correct_refusal_rate"))
"""The judge metrics a production report can hold (no reference answers: no correctness)."""

_RELATIVE = re.compile(r"^\s*(\d+)\s*([hdw])\s*$")


@dataclass(frozen=True)
class EvaluateOptions:
    rate: float = 0.05
    since: str | None = None        # ISO-8601 UTC, inclusive
    until: str | None = None        # exclusive
    period: str = "day"
    periods: int = 30
    max_contexts: int = 10
    prompts_dir: str | None = None


def parse_time(text: str, option: str, now: datetime | None = None) -> str:
    """`--since`/`--until` as ISO-8601 UTC text: a date, a date and time (no zone = UTC), or
    a span back from now: `24h`, `7d`, `2w`."""
    now = now or datetime.now(timezone.utc)
    m = _RELATIVE.match(text)
    if m:
        amount, unit = int(m.group(1)), m.group(2)
        delta = {"h": timedelta(hours=amount), "d": timedelta(days=amount),
                 "w": timedelta(weeks=amount)}[unit]
        moment = now - delta
    else:
        try:
            moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InputError(f"{option}: {text!r} is not a date (2025-03-01), a time "
                             "(2025-03-01T12:00) or a span back from now (24h, 7d, 2w)") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def judge_key(model: str, prompts_dir: str | None, max_contexts: int) -> tuple[str, dict]:
    """(key, prompt versions) of a judge configuration: evaluations under one key compare."""
    versions = {name: load_prompt(name, prompts_dir).version for name in PROMPTS}
    blob = json.dumps({"model": model, "prompts": versions, "aspects": ASPECTS,
                       "max_contexts": max_contexts}, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16], versions


def _judge_input(store: Store, record: dict, max_contexts: int,
                 texts: dict[str, str]) -> JudgeInput:
    """The judge's view of one record: the logged contexts, else the ingested chunks of the
    retrieved ids (as `golden score` reads a run without contexts)."""
    hashes = record.get("context_hashes")
    if hashes is not None:
        contexts = [texts[h] for h in hashes[:max_contexts] if h in texts]
    else:
        ids = (record.get("retrieved_ids") or [])[:max_contexts]
        found = chunks_by_id(store, ids)
        contexts = [found[i]["text"] for i in ids if i in found]
    return JudgeInput(query_id=record["id"], question=record["query"], reference="",
                      answer=record["answer"], contexts=contexts, answerable=True)


def evaluate_logs(store: Store, options: EvaluateOptions, *, judge_model: str | None,
                  open_judge: Callable[[], contextlib.AbstractContextManager] | None,
                  concurrency: int = 4, progress: Callable[[str], None] | None = None,
                  dry_run: bool = False) -> dict[str, Any]:
    """Judge what the sample still needs and return the report (see the module docstring).
    `open_judge()` yields the LLM client; it is only called when something needs judging.
    `judge_model=None` (`--no-judge`): nothing is judged or read from earlier judging; the
    report has the operations, feedback and trend figures only."""
    emit = progress or (lambda _message: None)
    records = sample_records(store, options.rate, options.since, options.until)
    in_window = count_records(store, options.since, options.until)
    if not in_window:
        raise InputError(f"no log records {_window_text(options)}: import some with "
                         "`golden logs import FILE`")
    ids = [r["id"] for r in records]
    if judge_model is None:
        key, versions, done = "", {}, {}
    else:
        key, versions = judge_key(judge_model, options.prompts_dir, options.max_contexts)
        done = evaluations(store, key, ids)
    todo = [r for r in records if judge_model is not None and r.get("answer")
            and (r["id"] not in done or done[r["id"]]["unscored"])]
    emit(f"{len(records):,} of {in_window:,} records {_window_text(options)} in the sample "
         f"(rate {options.rate:g}, plus those flagged by feedback): "
         + (f"{len(todo):,} to judge, {len(records) - len(todo):,} judged before or without an "
            "answer" if judge_model is not None else "not judged (--no-judge)"))
    stopped = calls = None
    if todo and open_judge is not None:
        with open_judge() as llm:
            texts = context_texts(store, (h for r in todo for h in r.get("context_hashes") or []))
            inputs = [_judge_input(store, r, options.max_contexts, texts) for r in todo]
            if dry_run:
                planner = Judge(llm, prompts_dir=options.prompts_dir,
                                max_contexts=options.max_contexts, metrics=ASPECTS)
                return {"dry_run": True, "to_judge": len(todo), "judge_model": judge_model,
                        "planned_calls": sum(map(planner.planned_calls, inputs))}
            judged, judge = judge_records(
                llm, inputs, prompts_dir=options.prompts_dir, max_contexts=options.max_contexts,
                concurrency=concurrency, progress=JudgeProgress(emit), metrics=ASPECTS)
            save_evaluations(store, key, judge.model, (
                (qid, o.metrics, o.details, o.unscored) for qid, o in judged.items()))
            stopped = judge.stopped
            summary = getattr(llm, "summary", None)
            calls = summary() if callable(summary) else None
        done = evaluations(store, key, ids)
    report = _report(records, done, options, judge_model=judge_model, versions=versions)
    report["logs"].update(judge_key=key, records_in_window=in_window, judged_now=len(todo))
    report["subtitle"] = describe(report)
    report["trends"] = build_trends(store, judge_key=key, rate=options.rate,
                                    period=options.period, periods=options.periods,
                                    until=options.until)
    if calls is not None:
        report["judge"]["calls"] = calls
    if judge_model is not None:
        from builder.score.trust import judge_agreement

        report["judge"]["calibration"] = judge_agreement(store, judge_model, {
            **versions, "signals": SIGNALS_VERSION}, report["summary"])
    if stopped:
        report["judge"]["stopped"] = stopped
        report["warnings"].append(f"judging stopped early: {stopped}")
    return report


def describe(report: dict[str, Any]) -> str:
    """One line on what a production report covers."""
    logs = report["logs"]
    causes: dict[str, int] = {}
    for case in report["bad_cases"]:
        causes[case["attribution"]] = causes.get(case["attribution"], 0) + 1
    cause_text = ", ".join(f"{k} {v}" for k, v in sorted(causes.items(), key=lambda kv: -kv[1]))
    return (f"{logs['records_in_window']:,} records; {logs['sampled']:,} in the random sample "
            f"(rate {logs['rate']:g}) and {logs['flagged_only']:,} more flagged by feedback; "
            + (f"{report['counts']['judged']:,} judged ({logs['judged_now']:,} in this run) by "
               f"{report['judge']['model']}; " if report["judge"]["model"] else
               "not judged (--no-judge); ")
            + f"{len(report['bad_cases']):,} bad cases"
            + (f" ({cause_text})" if cause_text else "")
            + ". Summary and gate: the random sample only.")


def _window_text(options: EvaluateOptions) -> str:
    if options.since and options.until:
        return f"from {options.since[:19]} to {options.until[:19]}"
    if options.since:
        return f"since {options.since[:19]}"
    if options.until:
        return f"before {options.until[:19]}"
    return "in the database"


def _report(records: list[dict], done: dict[str, dict], options: EvaluateOptions, *,
            judge_model: str, versions: dict[str, str]) -> dict[str, Any]:
    rows, judged, cases = [], {}, []
    sampled = set()
    for r in records:
        rows.append({"query_id": r["id"], "question": r["query"],
                     "type": "sample" if r["sampled"] else "flagged",
                     "latency_ms": r["latency_ms"], "cost": r["cost"],
                     "prompt_tokens": r["prompt_tokens"],
                     "completion_tokens": r["completion_tokens"]})
        if r["sampled"]:
            sampled.add(r["id"])
        ev = done.get(r["id"])
        if ev is not None:
            judged[r["id"]] = JudgeOutcome(metrics=ev["metrics"], details=ev["details"],
                                           unscored=ev["unscored"])
        case = bad_case(r, ev["metrics"] if ev else {}, ev["details"] if ev else {})
        if case is not None:
            cases.append(case)
    report = build_records_report(rows, source="production logs", judged=judged,
                                  judge_model=judge_model, judge_prompts=versions,
                                  summary_of=sampled)
    report["title"] = f"golden logs: {_window_text(options)}"
    report["bad_cases"] = sort_cases(cases)
    report["bad_case_rule"] = RULE
    for r in records:
        entry = report["per_query"][r["id"]]
        entry["at"] = r["at"]
    report["logs"] = {"rate": options.rate, "since": options.since, "until": options.until,
                      "sampled": len(sampled), "flagged_only": len(records) - len(sampled),
                      "not_answered": sum(1 for r in records if not r.get("answer"))}
    if not sampled:
        report["warnings"].append(
            f"no record of the window is in the random sample at rate {options.rate:g}: the "
            "summary (and a gate on it) has no figures; raise --rate or widen the window")
    return report
