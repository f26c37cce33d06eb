"""Turning a golden set, a run and (optionally) judge outcomes into the report: one dict that
every renderer, `compare` and the `--fail-under` gate read.

Report layout (names are stable; `compare` and CI gates depend on them):

- `summary`: metric -> mean over the queries that have the metric. Retrieval keys
  `hit_rate@k`, `mrr@k`, `recall@k`, `precision@k`, `ndcg@k`, `mrr`, `map`; judge keys
  `faithfulness`, `faithfulness_supported`, `hallucination_rate`, `answer_relevancy`,
  `correctness`, `context_relevance`, `wrong_refusal_rate`, `correct_refusal_rate`.
- `per_query`: query id -> {type, difficulty, answerable, question, metrics, judge,
  attribution}; `metrics` uses the summary's keys, so every summary figure is the plain mean
  of the per-query figures.
- `breakdowns`: {"type": {value: {"n": items, metric: mean}}, "difficulty": {...}}.
- `operations`: latency p50/p95/p99 (linear interpolation), mean cost and tokens per query,
  over the run lines that report them.
- `bad_cases`: correctness < 4 (and unanswerable items answered) with the likely cause
  (judge needed).
- `retrieval_misses`: answerable items whose gold chunks are not all in the top k (k the
  largest cutoff), worst first (no gold found at all first, then by recall@k, reciprocal rank
  and nDCG@k), at most `MISS_LIMIT`, each with the gold ids, the missing ones and the top k
  retrieved; `counts.retrieval_misses` is the full count. Needs no judge.
- `judge`: model, prompt versions, `unscored` (each item/metric the judge could not score),
  `stopped` (why judging stopped early, when it did), `calls` (the LLM client's totals).
- `counts` (`unknown_in_run`: run queries the golden file lacks, skipped),
  `missing_query_ids` and `missing_queries` ({query_id, question}), `unknown_run_queries`
  (the first `LIST_LIMIT`), `warnings`, `options`.
- Breakdown groups are in natural order: difficulty easy, medium, hard, then others; types in
  the generator's order, then others by name.

Retrieval follows trec_eval (see `retrieval`): unanswerable items are left out of retrieval
means; golden items missing from the run are left out unless `complete`, and then score 0.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from typing import TYPE_CHECKING

from builder.score.directions import JUDGE_METRICS
from builder.vocabulary import DIFFICULTIES, ITEM_TYPES
from builder.score.retrieval import (
    DEFAULT_KS, evaluate, mean_metrics, metric_names, ranked_ids,
)

BAD_CORRECTNESS = 4   # correctness below this is a bad case
FAITHFUL = 4          # faithfulness at or above this counts as faithful for attribution
REPORT_VERSION = 2
MISS_LIMIT = 100      # retrieval misses listed in a report (all are counted)
LIST_LIMIT = 50       # unknown run queries listed (all are counted)

if TYPE_CHECKING:  # the TREC path never loads pydantic or the judge
    from builder.score.inputs import GoldenSet, RunItem, UnknownQuery
    from builder.score.judge import JudgeOutcome


_NATURAL_ORDER = {"difficulty": {d: i for i, d in enumerate(DIFFICULTIES)},
                  "type": {t: i for i, t in enumerate(ITEM_TYPES)}}


@dataclass(frozen=True)
class ScoreOptions:
    ks: tuple[int, ...] = DEFAULT_KS
    gain: str = "linear"
    complete: bool = False
    level: int = 1
    dedupe: bool = False


def summary_order(ks: Sequence[int]) -> list[str]:
    """Every summary key golden can report for these cutoffs, in display order."""
    return metric_names(sorted(set(ks))) + list(JUDGE_METRICS)


def _ordered_means(per_query: Sequence[Mapping[str, float]], ks: Sequence[int]) -> dict:
    means = mean_metrics(per_query)
    order = summary_order(ks)
    known = {k: means[k] for k in order if k in means}
    known.update({k: v for k, v in means.items() if k not in known})
    return known


def build_report(
    golden: GoldenSet, run: Mapping[str, RunItem], options: ScoreOptions, *,
    judged: Mapping[str, JudgeOutcome] | None = None, judge_model: str | None = None,
    judge_prompts: Mapping[str, str] | None = None, run_path: str | None = None,
    unknown_in_run: Sequence[UnknownQuery] = (),
) -> dict[str, Any]:
    """The full report for a JSONL run scored against a golden file. `unknown_in_run` are the
    run lines `read_run` skipped (their queries are not in the golden file)."""
    rankings = {qid: item.ranking for qid, item in run.items()}
    retrieval = evaluate(golden.judgments(), rankings, options.ks, level=options.level,
                         gain=options.gain, complete=options.complete)
    judged = judged or {}
    per_query: dict[str, dict[str, Any]] = {}
    missing: list[str] = []
    for qid, item in golden.items.items():
        run_item = run.get(qid)
        if run_item is None:
            missing.append(qid)
            if qid not in retrieval:
                continue
        outcome = judged.get(qid)
        metrics = dict(retrieval.get(qid, {}))
        if outcome is not None:
            metrics.update(outcome.metrics)
        entry = {
            "type": item.type, "difficulty": item.difficulty, "answerable": item.answerable,
            "question": item.query, "in_run": run_item is not None, "metrics": metrics,
            "judge": outcome.details if outcome is not None else None,
        }
        entry["attribution"] = (_attribution(item.relevance, run_item, metrics)
                                if _is_bad(entry) else None)
        per_query[qid] = entry

    unscored = [u for o in judged.values() for u in o.unscored]
    warnings = _missing_warning(len(missing), options.complete, "golden item(s)")
    warnings += unknown_warning([u.label for u in unknown_in_run])
    if unscored:
        items = len({u["query_id"] for u in unscored})
        warnings.append(f"the judge could not score {items} item(s) ({len(unscored)} metric(s)); "
                        "they are listed under judge.unscored and left out of the means.")
    answerable = sum(1 for i in golden.items.values() if i.answerable)
    return _assemble(
        golden_path=golden.path, run_path=run_path, options=options, per_query=per_query,
        counts={"golden_items": len(golden.items), "answerable": answerable,
                "unanswerable": len(golden.items) - answerable, "in_run": len(run),
                "missing_from_run": len(missing), "unknown_in_run": len(unknown_in_run),
                "retrieval_scored": len(retrieval), "judged": len(judged),
                "judge_unscored": len(unscored),
                "judge_unscored_items": len({u["query_id"] for u in unscored})},
        operations=operations(list(run.values())),
        judge={"model": judge_model, "prompts": dict(judge_prompts or {}), "unscored": unscored},
        missing={q: golden.items[q].query for q in missing}, warnings=warnings,
        misses=retrieval_misses(golden.judgments(), rankings, retrieval, options),
        unknown=[{"line": u.line, "query": u.label} for u in unknown_in_run[:LIST_LIMIT]],
    )


def build_trec_report(
    judgments: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Sequence[str] | Mapping[str, float]], options: ScoreOptions, *,
    qrels_path: str, run_path: str,
) -> dict[str, Any]:
    """The report for TREC qrels + run files: retrieval metrics only, same layout."""
    per_query_metrics = evaluate(judgments, rankings, options.ks, level=options.level,
                                 gain=options.gain, complete=options.complete)
    answerable = has_gold(judgments, options.level)
    per_query = {
        qid: {"type": "unknown", "difficulty": "unknown",
              "answerable": answerable[qid], "question": None,
              "in_run": qid in rankings, "metrics": m, "judge": None, "attribution": None}
        for qid, m in per_query_metrics.items()
    }
    missing = [q for q in judgments if q not in rankings]
    warnings = _missing_warning(len(missing), options.complete, "judged queries")
    unknown = [q for q in rankings if q not in judgments]
    warnings += unknown_warning(unknown, "the qrels")
    no_gold = [q for q, yes in answerable.items() if not yes]
    if no_gold:
        warnings.append(
            f"{len(no_gold)} queries have no judgment of grade {options.level} or more (e.g. "
            f"{no_gold[0]!r}): nothing is relevant, so they score 0 on recall, nDCG, MAP and "
            "MRR (as trec_eval counts them), are not answerable and are not retrieval misses.")
    return _assemble(
        golden_path=qrels_path, run_path=run_path, options=options, per_query=per_query,
        counts={"golden_items": len(judgments), "answerable": len(judgments) - len(no_gold),
                "unanswerable": len(no_gold), "in_run": len(rankings) - len(unknown),
                "missing_from_run": len(missing), "unknown_in_run": len(unknown),
                "retrieval_scored": len(per_query), "judged": 0, "judge_unscored": 0,
                "judge_unscored_items": 0},
        operations={}, judge={"model": None, "prompts": {}, "unscored": []},
        missing=dict.fromkeys(missing), warnings=warnings, breakdowns=False,
        misses=retrieval_misses(judgments, rankings, per_query_metrics, options,
                                answerable=answerable),
        unknown=[{"line": None, "query": q} for q in unknown[:LIST_LIMIT]],
    )


def _missing_warning(n_missing: int, complete: bool, what: str) -> list[str]:
    if not n_missing:
        return []
    return [f"{n_missing} {what} are not in the run; "
            + ("they score 0 (--complete)." if complete
               else "they are left out of the means (trec_eval's default; --complete counts "
                    "them as 0).")]


def unknown_warning(labels: Sequence[str], where: str = "the golden file") -> list[str]:
    if not labels:
        return []
    shown = "; ".join(repr(label) for label in labels[:3])
    more = f" and {len(labels) - 3} more" if len(labels) > 3 else ""
    return [f"{len(labels)} run queries are not in {where} and are ignored: {shown}{more}."]


def has_gold(judgments: Mapping[str, Mapping[str, int]], level: int) -> dict[str, bool]:
    """{qid: some judgment reaches `level`}: the query has gold, so it is answerable and can
    be a retrieval miss (one max() in C per query)."""
    return {qid: bool(judged) and max(judged.values()) >= level
            for qid, judged in judgments.items()}


def retrieval_misses(judgments: Mapping[str, Mapping[str, int]],
                     rankings: Mapping[str, Sequence[str] | Mapping[str, float]],
                     per_query: Mapping[str, Mapping[str, float]], options: ScoreOptions,
                     limit: int = MISS_LIMIT, *, answerable: Mapping[str, bool] | None = None
                     ) -> dict[str, Any]:
    """Answerable queries in the run whose relevant chunks are not all in the top k (the
    largest cutoff), worst first; the first `limit` with their ids, and the total count.
    Ordered by the metrics already computed, so only the listed rankings are sorted.
    `answerable` ({qid: has a judgment at --level}) is computed here when not given."""
    k = max(options.ks)
    recall_name, ndcg_name = f"recall@{k}", f"ndcg@{k}"
    if answerable is None:
        answerable = has_gold(judgments, options.level)
    found = []
    for pos, (qid, metrics) in enumerate(per_query.items()):
        if (qid in rankings and metrics.get(recall_name, 1.0) < 1.0
                and answerable.get(qid)):
            # a query with no judgment at --level or above has no gold to miss
            found.append(((metrics[recall_name], metrics["mrr"], metrics[ndcg_name], pos), qid))
    listed = []
    for _, qid in heapq.nsmallest(limit, found):
        gold = [d for d, g in judgments[qid].items() if g >= options.level]
        top = ranked_ids(rankings[qid], k)
        in_top = set(top)
        listed.append({
            "query_id": qid, "gold_ids": gold,
            "missing_ids": [d for d in gold if d not in in_top], "retrieved_ids": top,
            recall_name: per_query[qid][recall_name], "mrr": per_query[qid]["mrr"],
        })
    return {"k": k, "total": len(found), "items": listed}


def _assemble(*, golden_path: str, run_path: str | None, options: ScoreOptions,
              per_query: dict[str, dict[str, Any]], counts: dict[str, int],
              operations: dict[str, Any], judge: dict[str, Any],
              missing: Mapping[str, str | None], warnings: list[str], misses: dict[str, Any],
              unknown: list[dict[str, Any]], breakdowns: bool = True,
              summary_of: Collection[str] | None = None) -> dict[str, Any]:
    """The report dict in its stable layout; summary and breakdowns derive from per_query (the
    summary from the `summary_of` entries only, when given)."""
    for miss in misses["items"]:
        entry = per_query[miss["query_id"]]
        miss.update(question=entry["question"], type=entry["type"],
                    difficulty=entry["difficulty"])
    counts["retrieval_misses"] = misses["total"]
    return {
        "report_version": REPORT_VERSION,
        "golden": golden_path,
        "run": run_path,
        "options": asdict(options) | {"judge": judge["model"] is not None},
        "counts": counts,
        "summary": _ordered_means([e["metrics"] for q, e in per_query.items()
                                   if summary_of is None or q in summary_of], options.ks),
        "per_query": per_query,
        "breakdowns": {field: _breakdown(per_query, field, options.ks) if breakdowns else {}
                       for field in ("type", "difficulty")},
        "operations": operations,
        "bad_cases": _bad_cases(per_query),
        "retrieval_misses": misses["items"],
        "retrieval_miss_k": misses["k"],
        "judge": judge,
        "missing_query_ids": list(missing),
        "missing_queries": [{"query_id": q, "question": text} for q, text in missing.items()],
        "unknown_run_queries": unknown,
        "warnings": warnings,
    }


def _breakdown(per_query: Mapping[str, dict], field: str, ks: Sequence[int]) -> dict:
    groups: dict[str, list[dict]] = {}
    for entry in per_query.values():
        groups.setdefault(str(entry[field]), []).append(entry["metrics"])
    rank = _NATURAL_ORDER.get(field, {})
    return {
        value: {"n": len(rows), **_ordered_means(rows, ks)}
        for value, rows in sorted(groups.items(), key=lambda kv: (rank.get(kv[0], len(rank)),
                                                                   kv[0]))
    }


def percentile(values: Sequence[float], p: float) -> float:
    """Linear-interpolation percentile (numpy's default), `p` in [0, 100]."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * p / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def operations(items: Sequence[RunItem]) -> dict[str, Any]:
    """Latency percentiles and per-query cost/tokens over the run lines that report them."""
    return operations_of([vars(i.record) for i in items])


def operations_of(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The operations figures of plain records (`latency_ms`, `cost`, `prompt_tokens`,
    `completion_tokens`, each optional): p50/p95/p99 latency, mean and total of the rest, and
    how many records had each."""
    out: dict[str, Any] = {}
    latency = [r["latency_ms"] for r in records if r.get("latency_ms") is not None]
    if latency:
        out["latency_n"] = len(latency)
        for p in (50, 95, 99):
            out[f"latency_p{p}_ms"] = percentile(latency, p)
    for name in ("cost", "prompt_tokens", "completion_tokens"):
        values = [r[name] for r in records if r.get(name) is not None]
        if values:
            out[f"mean_{name}"] = sum(values) / len(values)
            out[f"total_{name}"] = sum(values)
            out[f"{name}_n"] = len(values)
    return out


def build_records_report(records: Sequence[Mapping[str, Any]], *, source: str,
                         judged: Mapping[str, JudgeOutcome] | None = None,
                         judge_model: str | None = None,
                         judge_prompts: Mapping[str, str] | None = None,
                         summary_of: Collection[str] | None = None) -> dict[str, Any]:
    """A report in the standard layout from plain records, for answers that have no golden
    item (production logs, a chat export): each record a mapping with `query_id`, `question`
    and optionally `type`, `difficulty`, `latency_ms`, `cost`, `prompt_tokens`,
    `completion_tokens`; `judged` the judge's outcomes by query id (`judge.judge_records`).
    No retrieval metrics (there is no gold), so every renderer, `compare` and the gate work on
    the judge and operations figures alone. `summary_of` limits the summary means (what the
    gate reads) to those query ids, e.g. the random part of a sample; breakdowns and per-query
    figures still cover every record."""
    judged = judged or {}
    per_query: dict[str, dict[str, Any]] = {}
    for r in records:
        qid = str(r["query_id"])
        outcome = judged.get(qid)
        per_query[qid] = {
            "type": r.get("type") or "unknown", "difficulty": r.get("difficulty") or "unknown",
            "answerable": True, "question": r.get("question"), "in_run": True,
            "metrics": dict(outcome.metrics) if outcome else {},
            "judge": outcome.details if outcome else None, "attribution": None,
        }
    unscored = [u for o in judged.values() for u in o.unscored]
    warnings = []
    if unscored:
        items = len({u["query_id"] for u in unscored})
        warnings.append(f"the judge could not score {items} item(s) ({len(unscored)} metric(s)); "
                        "they are listed under judge.unscored and left out of the means.")
    report = _assemble(
        golden_path=source, run_path=source, options=ScoreOptions(ks=()), per_query=per_query,
        counts={"golden_items": len(per_query), "answerable": len(per_query), "unanswerable": 0,
                "in_run": len(per_query), "missing_from_run": 0, "unknown_in_run": 0,
                "retrieval_scored": 0, "judged": len(judged), "judge_unscored": len(unscored),
                "judge_unscored_items": len({u["query_id"] for u in unscored})},
        operations=operations_of(records),
        judge={"model": judge_model, "prompts": dict(judge_prompts or {}), "unscored": unscored},
        missing={}, warnings=warnings, misses={"k": None, "total": 0, "items": []}, unknown=[],
        summary_of=summary_of,
    )
    for field, groups in report["breakdowns"].items():  # records without labels: no breakdown
        if set(groups) == {"unknown"}:
            report["breakdowns"][field] = {}
    return report


def _attribution(relevance: Mapping[str, int], run_item: RunItem | None,
                 metrics: Mapping[str, float]) -> str | None:
    """Likely cause when an answer is wrong: a gold chunk missing from the retrieved ids ->
    retrieval; all retrieved but the answer unfaithful (or a refusal) -> generation;
    retrieved and faithful but wrong -> knowledge base; unknown when faithfulness is unknown."""
    if run_item is None:
        return "retrieval"
    gold = [cid for cid, g in relevance.items() if g > 0]
    if not gold:
        return "generation"  # unanswerable: nothing to retrieve, the answer is the problem
    retrieved = set(run_item.ranking)
    if any(cid not in retrieved for cid in gold):
        return "retrieval"
    if metrics.get("wrong_refusal_rate") == 1.0:
        return "generation"
    faithfulness = metrics.get("faithfulness")
    if faithfulness is None:
        return "unknown"
    return "generation" if faithfulness < FAITHFUL else "knowledge base"


def _is_bad(entry: Mapping[str, Any]) -> bool:
    """Wrong answer (correctness < 4), or an answer to an unanswerable question."""
    m = entry["metrics"]
    if entry["answerable"]:
        return m.get("correctness", BAD_CORRECTNESS) < BAD_CORRECTNESS
    return m.get("correct_refusal_rate") == 0.0


def _bad_cases(per_query: Mapping[str, dict]) -> list[dict]:
    """The bad items (see `_is_bad`) with their attribution, worst first."""
    cases = []
    for qid, entry in per_query.items():
        if not _is_bad(entry):
            continue
        m = entry["metrics"]
        judge = entry["judge"] or {}
        if entry["answerable"]:
            reason = (judge.get("correctness") or {}).get("reason", "")
            cases.append({"query_id": qid, "question": entry["question"],
                          "type": entry["type"], "correctness": m["correctness"],
                          "faithfulness": m.get("faithfulness"),
                          "attribution": entry["attribution"], "reason": reason})
        else:
            reason = (judge.get("refusal") or {}).get("reason", "")
            cases.append({"query_id": qid, "question": entry["question"],
                          "type": entry["type"], "correctness": None, "faithfulness": None,
                          "attribution": "generation",
                          "reason": "answered an unanswerable question. " + reason})
    cases.sort(key=lambda c: (c["correctness"] if c["correctness"] is not None else 0,
                              c["query_id"]))
    return cases
