"""`golden score`, `golden compare`, `golden calibrate`, `golden baseline-run`: thin click shells
over the modules beside this one."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from builder.errors import InputError, JobError
from builder.llm.setup import batch_option, llm_options, open_llm, progress_line
from builder.score import report as report_mod
from builder.score.gate import (
    check_gate, known_metrics, parse_thresholds, report_and_gate_options, report_figures)
from builder.score.retrieval import DEFAULT_KS
from builder.score.scoring import (
    ScoreOptions, build_report, build_trec_report, unknown_warning,
)
from builder.score.trec import read_qrels, read_trec_run

if TYPE_CHECKING:  # scoring a TREC run without the judge never loads pydantic or asyncio
    from builder.score.inputs import GoldenSet, RunItem, UnknownQuery


MAX_K = 1000  # as baseline-run's --k


def parse_ks(text: str) -> tuple[int, ...]:
    """`--k 1,3,5` -> (1, 3, 5): each cutoff a whole number from 1 to MAX_K (a larger one
    would only grow memory: no ranking is that long in practice)."""
    try:
        ks = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise InputError(f"--k expects comma-separated integers from 1 to {MAX_K}, "
                         f"got {text!r}") from None
    if not ks or ks[0] < 1 or ks[-1] > MAX_K:
        raise InputError(f"--k expects comma-separated integers from 1 to {MAX_K}, "
                         f"got {text!r}")
    return ks


def _run_id(golden_path: str, run_path: str) -> str:
    digest = hashlib.sha1(f"{Path(golden_path).resolve()}\0{Path(run_path).resolve()}".encode())
    return f"{Path(run_path).stem}-{digest.hexdigest()[:8]}"


@click.command()
@click.option("--golden", "golden_path", type=click.Path(dir_okay=False),
              help="Golden JSONL: golden's native export, or the seed format "
                   "(query, expectedAnswer, relevantChunkIds, intent; no ids: run lines are "
                   "then matched by their `query` text).")
@click.option("--run", "run_path", type=click.Path(dir_okay=False),
              help="Run JSONL, one line per query: query_id (or query), retrieved_ids in rank "
                   "order, optional scores, contexts, answer, latency_ms, prompt_tokens, "
                   "completion_tokens, cost. The list order is the ranking; scores never "
                   "re-sort it.")
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False),
              help="TREC qrels (qid iter docno rel) instead of --golden.")
@click.option("--trec-run", "trec_run_path", type=click.Path(dir_okay=False),
              help="TREC run (qid Q0 docno rank score tag) instead of --run; ranked by score, "
                   "ties by docno descending, the rank column ignored (as trec_eval).")
@click.option("--k", "k_text", default=",".join(map(str, DEFAULT_KS)), show_default=True,
              help="Cutoffs for the @k metrics.")
@click.option("--judge/--no-judge", default=True, show_default=True,
              help="LLM-judge the answers (faithfulness, relevancy, correctness, refusals, "
                   "context relevance). --no-judge needs no LLM.")
@report_and_gate_options(
    under_help="Exit 1 when a higher-is-better metric is below VALUE (repeatable), e.g. "
               "ndcg@10=0.5, faithfulness=4.0, hit_rate@10=85%.",
    over_help="Exit 1 when a lower-is-better metric is above VALUE (repeatable): "
              "hallucination_rate, wrong_refusal_rate, latency_p95_ms, mean_cost, ... "
              "e.g. hallucination_rate=15%.")
@click.option("--complete", "-c", is_flag=True,
              help="Count golden queries missing from the run as 0 (trec_eval -c). Default: "
                   "left out of the means, as trec_eval does.")
@click.option("--gain", type=click.Choice(["linear", "exp"]), default="linear",
              show_default=True, help="nDCG gain: the grade (trec_eval ndcg_cut) or 2^grade-1.")
@click.option("--level", type=int, default=1, show_default=True,
              help="Minimum grade that counts as relevant (trec_eval -l).")
@click.option("--dedupe", is_flag=True,
              help="Keep the first occurrence of a docno repeated in one ranking instead of "
                   "refusing the run (trec_eval refuses).")
@click.option("--max-contexts", type=int, default=None,
              help="Contexts per item the judge reads [the largest --k].")
@click.option("--name", default=None, help="Name of the stored run [run file name + hash].")
@click.option("--save/--no-save", default=True, show_default=True,
              help="Store the scored run in the database (runs, run_items).")
@click.option("--prompts", "prompts_dir", type=click.Path(file_okay=False), default=None,
              help="Folder of prompt files overriding the bundled judge prompts.")
@llm_options(lazy=True)
@batch_option
@click.pass_obj
def score(obj, golden_path, run_path, qrels_path, trec_run_path, k_text, judge, outs,
          fail_under, fail_over, trust_judge, min_judge_kappa, complete, gain, level, dedupe,
          max_contexts, name, save, prompts_dir, llm_settings):
    """Score a RAG run against a golden set: retrieval metrics equal to trec_eval's, LLM-judged
    answer metrics, per type and difficulty, with a bad-case list.

    \b
    Examples:
      golden score --golden golden.jsonl --run run.jsonl --out report.html
      golden score --golden golden.jsonl --run run.jsonl --no-judge --fail-under ndcg@10=0.5
      golden score --golden golden.jsonl --run run.jsonl --fail-under faithfulness=4.0 \\
          --fail-over hallucination_rate=15% --fail-under hit_rate@10=85%
      (a gate on a judged figure needs a judge calibrated with `golden calibrate`, kappa
      >= --min-judge-kappa, or --trust-judge)
      golden score --qrels qrels.txt --trec-run run.txt --k 5,10 -c
    """
    ks = parse_ks(k_text)
    trec = qrels_path is not None or trec_run_path is not None
    if trec and (golden_path or run_path):
        raise InputError("give either --golden/--run or --qrels/--trec-run, not both")
    if trec and not (qrels_path and trec_run_path):
        raise InputError("--qrels and --trec-run go together")
    if not trec and not (golden_path and run_path):
        raise InputError("--golden and --run are required (or --qrels and --trec-run)")
    for out in outs:
        report_mod.format_for(out)
        report_mod.check_not_an_input(out, {
            "golden file": golden_path, "run file": run_path, "qrels file": qrels_path,
            "TREC run": trec_run_path, "database": obj.db_path})
    options = ScoreOptions(ks=ks, gain=gain, complete=complete, level=level, dedupe=dedupe)
    thresholds = parse_thresholds(fail_under, fail_over, known=known_metrics(ks),
                                  judge=judge and not trec)
    # Read golden.toml now whenever the judge may run, so a bad config fails before any work;
    # --no-judge and TREC scoring never load the LLM settings.
    settings = llm_settings() if judge and not trec else None
    if settings is not None and not trust_judge:
        _check_judge_trust(obj, thresholds, settings, prompts_dir, min_judge_kappa)

    if trec:
        report = build_trec_report(read_qrels(qrels_path), read_trec_run(trec_run_path,
                                   dedupe=dedupe), options, qrels_path=qrels_path,
                                   run_path=trec_run_path)
        run_items: dict[str, RunItem] = {}
        golden = None
    else:
        from builder.score.inputs import read_golden, read_run

        golden = read_golden(golden_path)
        unknown: list[UnknownQuery] = []
        run_items = read_run(run_path, golden, dedupe=dedupe, unknown=unknown)
        for warning in unknown_warning([u.label for u in unknown], golden_path):
            progress_line(warning)
        answered = [q for q, item in run_items.items() if item.record.answer is not None]
        if judge and not answered:
            progress_line("no run line has an answer: judge metrics skipped")
            judge = False
        report = _score_jsonl(obj, golden, run_items, options, judge=judge,
                              llm_settings=settings,
                              run_path=run_path,
                              max_contexts=max_contexts or max(ks), prompts_dir=prompts_dir,
                              unknown=unknown)

    if save:
        _save(obj, report, golden, run_items, name=name,
              run_id=name or _run_id(report["golden"], report["run"]))
    report_mod.write_outputs({out: report_mod.render(report, report_mod.format_for(out))
                              for out in outs})
    for out in outs:
        progress_line(f"wrote {out}")
    report_mod.print_terminal(report)
    stopped = report["judge"].get("stopped")
    if stopped and stopped != "budget exhausted":
        raise JobError(f"{stopped} (the report lists the items not judged)")
    check_gate(report_figures(report), thresholds)


def _check_judge_trust(obj, thresholds, settings, prompts_dir: str | None,
                       min_kappa: float) -> None:
    """Refuse (exit 2, before any judging) a gate on a judged figure the judge is not trusted
    for (`trust.check_trust`)."""
    from builder.score.directions import JUDGE_METRICS
    from builder.score.judge import prompt_versions
    from builder.score.trust import check_trust, judge_agreement, judge_model_name

    gated = [t.metric for t in thresholds if t.metric in JUDGE_METRICS]
    if not gated:
        return
    model = judge_model_name(settings)
    with obj.open_store(create=True) as store:
        agreement = judge_agreement(store, model, prompt_versions(prompts_dir), gated)
    check_trust(thresholds, agreement, judge_model=model, min_kappa=min_kappa)


def _score_jsonl(obj, golden: GoldenSet, run: dict[str, RunItem], options: ScoreOptions, *,
                 judge: bool, llm_settings, run_path: str, max_contexts: int,
                 prompts_dir: str | None, unknown: list[UnknownQuery]) -> dict[str, Any]:
    if not judge:
        return build_report(golden, run, options, run_path=run_path, unknown_in_run=unknown)
    import asyncio

    from builder.score.judge import Judge, JudgeInput, JudgeProgress
    from builder.store.documents import chunks_by_id

    with obj.open_store(create=True) as store, open_llm(store, llm_settings, job="score") as llm:
        judge_obj = Judge(llm, prompts_dir=prompts_dir, max_contexts=max_contexts,
                          concurrency=llm_settings.concurrency,
                          progress=JudgeProgress(progress_line))
        inputs = []
        for qid, item in run.items():
            if item.record.answer is None:
                continue
            contexts = item.record.contexts
            if contexts is None:  # the ingested chunk texts; stored with the run as its contexts
                ids = item.ranking[:max_contexts]
                found = chunks_by_id(store, ids)
                contexts = item.record.contexts = [found[i]["text"] for i in ids if i in found]
            g = golden.items[qid]
            inputs.append(JudgeInput(query_id=qid, question=g.query, reference=g.reference,
                                     answer=item.record.answer, contexts=list(contexts),
                                     answerable=g.answerable))
        judged = asyncio.run(judge_obj.judge_all(inputs))
        report = build_report(golden, run, options, judged=judged, judge_model=judge_obj.model,
                              judge_prompts=judge_obj.prompt_versions(), run_path=run_path,
                              unknown_in_run=unknown)
        summary = getattr(llm, "summary", None)
        if callable(summary):
            report["judge"]["calls"] = summary()
        from builder.score.trust import judge_agreement

        report["judge"]["calibration"] = judge_agreement(
            store, judge_obj.model, judge_obj.prompt_versions(), report["summary"])
    if judge_obj.stopped:
        report["judge"]["stopped"] = judge_obj.stopped
        report["warnings"].append(f"judging stopped early: {judge_obj.stopped}")
    return report


def _save(obj, report: dict[str, Any], golden: GoldenSet | None, run: dict[str, RunItem], *,
          name: str | None, run_id: str) -> None:
    from builder.store.runs import save_run

    items = []
    for qid, entry in report["per_query"].items():
        rec = run[qid].record if qid in run else None
        items.append({
            "query_id": qid,
            "question": entry["question"],
            "reference": golden.items[qid].reference if golden else None,
            "answer": rec.answer if rec else None,
            "contexts": rec.contexts if rec else None,
            "retrieved_ids": run[qid].ranking if qid in run else None,
            "metrics": entry["metrics"],
            "judge": entry["judge"],
        })
    with obj.open_store(create=True) as store:
        save_run(store, run_id=run_id, name=name or Path(report["run"]).stem,
                 golden_path=report["golden"], run_path=report["run"],
                 judge_model=report["judge"]["model"],
                 options={**report["options"], "judge_prompts": report["judge"]["prompts"]},
                 summary=report["summary"], items=items)
    report["run_id"] = run_id


@click.command()
@click.argument("baseline", type=click.Path(dir_okay=False))
@click.argument("reports", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--labels", default=None, metavar="NAME,NAME,...",
              help="A short name per report, baseline first [the run file names].")
@click.option("--out", "outs", multiple=True, type=click.Path(dir_okay=False),
              help="Also write the comparison as .json, .md or .html (repeatable).")
@click.option("--resamples", type=click.IntRange(100, 100_000), default=1000, show_default=True,
              help="Paired bootstrap resamples behind each significance mark.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the bootstrap, so a comparison prints the same marks every time.")
def compare(baseline, reports, labels, outs, resamples, seed):
    """Compare score reports (JSON from `golden score --out`) against a baseline: every metric
    of every run side by side, deltas with paired bootstrap 95% CIs and arrows (better/worse in
    each metric's direction), per-type and per-difficulty breakdowns, and per run the queries
    that got worse. Exit 2 when a run shares no query with the baseline.

    \b
    Example:
      golden compare before.json topk5.json rerank.json --labels "before,top-k 5,+ reranker" \\
          --out compare.html --out compare.md
    """
    from builder.score.compare import (
        compare_reports, print_comparison, read_report, render_comparison_markdown,
    )
    from builder.score.html import render_comparison_html

    paths = [baseline, *reports]
    for out in outs:
        report_mod.format_for(out)
        report_mod.check_not_an_input(out, {f"report {p}": p for p in paths})
    names = [x.strip() for x in labels.split(",")] if labels else None
    result = compare_reports([read_report(p) for p in paths], labels=names,
                             resamples=resamples, seed=seed)
    renderers = {"json": report_mod.render_json, "md": render_comparison_markdown,
                 "html": render_comparison_html}
    report_mod.write_outputs({out: renderers[report_mod.format_for(out)](result)
                              for out in outs})
    print_comparison(result)


@click.command()
@click.option("--run", "run_id", default=None, help="Scored run id [the newest].")
@click.option("--import", "import_path", type=click.Path(dir_okay=False), default=None,
              help="Human scores from a CSV (header query_id,metric,score[,annotator]) or "
                   "JSONL file; they are stored in the calibration table with the run and "
                   "used for this report.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def calibrate(obj, run_id, import_path, as_json):
    """Agreement between human 1-5 scores and the LLM judge: exact, within-one and
    quadratic-weighted kappa, per metric; warns under 80% exact agreement. The figures are
    stored for the run's judge model and prompt versions: reports print them beside each
    judged figure, and a gate on a judged figure needs them (kappa >= --min-judge-kappa)."""
    from builder.score.calibrate import calibrate as agree, print_calibration, read_human_scores
    from builder.store.calibration import human_scores, import_calibration
    from builder.store.runs import list_run_items, require_run

    imported = [s.model_dump() for s in read_human_scores(import_path)] if import_path else None
    with obj.open_store() as store:
        run = require_run(store, run_id)
        if imported is not None:  # kept with the run, next to the review UI's scores
            import_calibration(store, run["id"], imported)
            human = imported
        else:
            human = human_scores(store, run["id"])
            if not human:
                raise InputError("no human scores: score items in `golden review` "
                                 "(calibration mode) or pass --import FILE")
        result = agree(human, list_run_items(store, run["id"]))
        versions = (run.get("options") or {}).get("judge_prompts")
        if run.get("judge_model") and versions:
            from builder.score.trust import calibration_entries
            from builder.store.calibration import save_judge_calibration

            save_judge_calibration(store, judge_model=run["judge_model"], run_id=run["id"],
                                   entries=calibration_entries(result, versions))
            result["stored_for"] = {"judge_model": run["judge_model"], "prompts": versions}
        else:
            result["warnings"].append(
                "this run does not record its judge prompt versions (scored before they were "
                "kept, or without the judge): the agreement is shown but not stored for gates; "
                "score the run again and calibrate it")
    result["run_id"] = run["id"]
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        print_calibration(result)


@click.command("baseline-run")
@click.option("--golden", "golden_path", required=True, type=click.Path(dir_okay=False),
              help="Golden JSONL (native or seed format).")
@click.option("--k", type=click.IntRange(1, MAX_K), default=10, show_default=True,
              help="Chunks retrieved per query.")
@click.option("--answer/--no-answer", default=False, show_default=True,
              help="Also generate answers from the retrieved chunks with the LLM.")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="Run JSONL to write.")
@click.option("--prompts", "prompts_dir", type=click.Path(file_okay=False), default=None,
              help="Folder of prompt files overriding the bundled answer prompt.")
@llm_options
@click.pass_obj
def baseline_run(obj, golden_path, k, answer, out_path, prompts_dir, llm_settings):
    """Write a run file from golden's built-in BM25 retriever over the ingested chunks, to
    score end to end before plugging in your own RAG system.

    \b
    Example:
      golden ingest samples/ && golden baseline-run --golden golden.jsonl --out run.jsonl
      golden score --golden golden.jsonl --run run.jsonl --no-judge
    """
    import asyncio

    from builder.export.atomic import check_output_path
    from builder.score.baseline import add_answers, retrieve, write_run
    from builder.score.inputs import read_golden

    report_mod.check_not_an_input(out_path, {"golden file": golden_path,
                                             "database": obj.db_path})
    golden = read_golden(golden_path)
    check_output_path(out_path)
    with obj.open_store() as store:
        records = retrieve(store, golden, k)
        if answer:
            with open_llm(store, llm_settings, job="baseline-run") as llm:
                asyncio.run(add_answers(records, golden, llm, prompts_dir=prompts_dir,
                                        concurrency=llm_settings.concurrency,
                                        progress=progress_line))
    write_run(out_path, records)
    progress_line(f"wrote {len(records)} lines to {out_path}")
