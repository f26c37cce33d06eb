"""`golden logs import | evaluate | promote`: thin click shells over the modules beside this one."""

from __future__ import annotations

import click

from builder.llm.setup import llm_options, progress_line
from builder.score.gate import report_and_gate_options


@click.group()
def logs() -> None:
    """Production logs: import them (scrubbed of personal data), judge a sample, see trends and
    bad cases, and promote bad cases and good answers into review as golden items.

    \b
    Example:
      golden logs import requests.jsonl traces.otlp.jsonl
      golden logs evaluate --rate 0.05 --since 7d --out logs.html --fail-over hallucination_rate=10%
      golden logs promote --cause retrieval --limit 20 && golden review
    """


@logs.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Config file with [logs.scrub] patterns [./golden.toml if present].")
@click.pass_obj
def import_(obj, files, config_path):
    """Import production records: golden's JSONL (builder/schemas/log.schema.json), or
    OpenTelemetry spans as JSON lines (OTLP/JSON from a collector's file exporter, or one span
    per line as Phoenix exports them; GenAI and OpenInference attributes), gzip or not.

    E-mail addresses, phone numbers, card numbers and the patterns of [logs.scrub] in
    golden.toml are replaced before anything is written. A bad line stops the import with its
    line number and nothing is imported; records already imported (same id) are left as they are.

    \b
    Example:
      golden logs import logs/2025-03-*.jsonl.gz
    """
    from builder.config import load_config
    from builder.logs.importer import describe, import_logs
    from builder.logs.scrub import load_scrubber
    from builder.store.logs import pseudonym_key

    config = load_config(config_path)
    with obj.open_store(create=True) as store:
        scrubber = load_scrubber(config, pseudonym_key(store))
        report = import_logs(store, list(files), scrubber, progress=progress_line)
    for line in describe(report, scrubber):
        click.echo(line)


def _rate(text: str) -> float:
    from builder.errors import InputError
    from builder.score.gate import parse_value

    value = parse_value(text, text, "--rate")
    if not 0 < value <= 1:
        raise InputError(f"--rate: {text!r} is not a share in (0, 1] (0.05 or 5%)")
    return value


@logs.command()
@click.option("--rate", "rate_text", default="0.05", show_default=True,
              help="Share of records judged: a deterministic sample by a hash of the record id "
                   "(0.05 or 5%). Records flagged by feedback are always judged.")
@click.option("--since", default=None, help="Records from this time: 2025-03-01, "
              "2025-03-01T12:00 (UTC unless a zone is given), or back from now: 24h, 7d, 2w.")
@click.option("--until", default=None, help="Records before this time (same forms).")
@click.option("--trend", "period", type=click.Choice(["day", "week"]), default="day",
              show_default=True, help="Trend periods (UTC days, ISO weeks).")
@click.option("--periods", type=click.IntRange(1, 520), default=30, show_default=True,
              help="How many periods the trends show, ending with the newest record (or --until).")
@click.option("--max-contexts", type=click.IntRange(1, 100), default=10, show_default=True,
              help="Contexts per record the judge reads.")
@click.option("--judge/--no-judge", default=True, show_default=True,
              help="LLM-judge the sample. --no-judge needs no LLM: operations, feedback and "
                   "trends only.")
@report_and_gate_options(
    under_help="Exit 1 when a higher-is-better figure of the sample is below VALUE, e.g. "
               "faithfulness=4.0, context_relevance=70%.",
    over_help="Exit 1 when a lower-is-better figure is above VALUE, e.g. "
              "hallucination_rate=10%, wrong_refusal_rate=5%, latency_p95_ms=3000.")
@click.option("--prompts", "prompts_dir", type=click.Path(file_okay=False), default=None,
              help="Folder of prompt files overriding the bundled judge prompts.")
@llm_options(lazy=True)
@click.pass_obj
def evaluate(obj, rate_text, since, until, period, periods, max_contexts, judge, outs,
             fail_under, fail_over, trust_judge, min_judge_kappa, prompts_dir, llm_settings):
    """Judge a deterministic sample of production records with the reference-free judge
    metrics (claim-level faithfulness against the logged contexts, answer relevancy, context
    relevance, refusal) and report them as `golden score` does, with trends per day or week,
    bad cases with their likely cause, and a gate for a nightly job. Cached and resumable:
    records judged before (same judge) are not judged again.

    \b
    Examples:
      golden logs evaluate --rate 0.05 --out logs.html
      golden logs evaluate --since 1d --rate 2% --out nightly.json \\
          --fail-under faithfulness=4 --fail-over hallucination_rate=10%
      golden logs evaluate --trend week --periods 12 --out weekly.md
    """
    from builder.errors import InputError, JobError
    from builder.llm.setup import open_llm
    from builder.logs.evaluate import EvaluateOptions, METRICS, evaluate_logs, parse_time
    from builder.score import report as report_mod
    from builder.score.directions import OPERATIONS
    from builder.score.gate import check_gate, parse_thresholds, report_figures

    rate = _rate(rate_text)
    options = EvaluateOptions(
        rate=rate, since=parse_time(since, "--since") if since else None,
        until=parse_time(until, "--until") if until else None, period=period,
        periods=periods, max_contexts=max_contexts, prompts_dir=prompts_dir)
    if options.since and options.until and options.since >= options.until:
        raise InputError("--since must be before --until")
    for out in outs:
        report_mod.format_for(out)
        report_mod.check_not_an_input(out, {"database": obj.db_path})
    thresholds = parse_thresholds(fail_under, fail_over, known=[*METRICS, *OPERATIONS],
                                  judge=judge)
    settings = llm_settings() if judge else None
    model = _judge_model(settings) if settings else None
    with obj.open_store() as store:
        if model and not trust_judge:
            from builder.logs.evaluate import judge_key
            from builder.score.signals import SIGNALS_VERSION
            from builder.score.trust import check_trust, judge_agreement

            versions = {**judge_key(model, prompts_dir, max_contexts)[1],
                        "signals": SIGNALS_VERSION}
            check_trust(thresholds, judge_agreement(store, model, versions,
                                                    [t.metric for t in thresholds]),
                        judge_model=model, min_kappa=min_judge_kappa)
        report = evaluate_logs(
            store, options, judge_model=model,
            open_judge=(lambda: open_llm(store, settings, job="logs-evaluate")) if settings
            else None, concurrency=settings.concurrency if settings else 1,
            progress=progress_line, dry_run=bool(settings and settings.dry_run))
    if report.get("dry_run"):
        click.echo(f"dry run: {report['to_judge']:,} records to judge with "
                   f"{report['judge_model']}, about {report['planned_calls']:,} LLM calls; "
                   "nothing was called or stored")
        return
    report_mod.write_outputs({out: report_mod.render(report, report_mod.format_for(out))
                              for out in outs})
    for out in outs:
        progress_line(f"wrote {out}")
    report_mod.print_terminal(report)
    click.echo(report["subtitle"])
    stopped = report["judge"].get("stopped")
    if stopped and stopped != "budget exhausted":
        raise JobError(f"{stopped} (the report lists the records not judged)")
    check_gate(report_figures(report), thresholds)


def _judge_model(settings) -> str:
    """The model(s) the judge role will call, known before any client is opened (so a run
    with nothing new to judge needs no endpoint at all)."""
    from builder.errors import InputError
    from builder.score.judge import PROMPTS

    if settings.base_url is None:
        from builder.llm.local_models import resolve_local_model

        return resolve_local_model(settings.local_model).record_name
    models = sorted({settings.params_for("judge", name).model or "" for name in PROMPTS})
    if "" in models:
        raise InputError("no model configured: pass --model, set GOLDEN_MODEL or "
                         "add `model = ...` under [llm] in golden.toml")
    return ",".join(models)


@logs.command()
@click.option("--cause", "causes", multiple=True,
              type=click.Choice(["generation", "retrieval", "knowledge-base", "unknown"]),
              help="Only bad cases of this cause (repeatable) [every cause].")
@click.option("--bad-cases/--no-bad-cases", default=True, show_default=True,
              help="Promote bad cases (their reference is written in review).")
@click.option("--thumbs-up/--no-thumbs-up", default=True, show_default=True,
              help="Promote thumbs-up answers (proposed as the reference, accepted or "
                   "rewritten in review).")
@click.option("--record", "record_ids", multiple=True, metavar="ID",
              help="Promote exactly these log records (repeatable); the other filters are ignored.")
@click.option("--since", default=None, help="Records from this time (2025-03-01, 7d, ...).")
@click.option("--until", default=None, help="Records before this time.")
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True,
              help="At most this many records promoted per run (bad cases with the most "
                   "signals first, then thumbs-up answers, newest first).")
@click.option("--dry-run", is_flag=True, help="Say what would be promoted; write nothing.")
@click.pass_obj
def promote(obj, causes, bad_cases, thumbs_up, record_ids, since, until, limit, dry_run):
    """Turn bad cases and thumbs-up records into review candidates of type `production`, with
    their provenance (log record id, date, the signals that picked them). A question that is a
    near-duplicate of an existing item is linked to it, not added twice. In `golden review` a
    reviewer writes or accepts the reference answer and marks the relevant chunks; only then
    can the item be accepted and exported.

    \b
    Examples:
      golden logs promote --cause knowledge-base --since 7d
      golden logs promote --no-bad-cases --limit 20
      golden logs promote --record req-81 --record req-90
    """
    from builder.errors import InputError
    from builder.logs.evaluate import parse_time
    from builder.logs.promote import PromoteOptions, describe, promote as run_promote

    if not (bad_cases or thumbs_up or record_ids):
        raise InputError("--no-bad-cases and --no-thumbs-up leave nothing to promote")
    options = PromoteOptions(
        causes=frozenset(c.replace("-", " ") for c in causes) or None, bad_cases=bad_cases,
        thumbs_up=thumbs_up, record_ids=tuple(record_ids),
        since=parse_time(since, "--since") if since else None,
        until=parse_time(until, "--until") if until else None, limit=limit, dry_run=dry_run)
    with obj.open_store() as store:
        report = run_promote(store, options)
    for row in report.created if dry_run else []:
        prov = row["provenance"]
        click.echo(f"  {prov['record_id']}  {prov['at'][:10]}  {prov['cause'] or prov['picked_as']}"
                   f"  {_one_line(row['question'])}")
    for line in describe(report, options):
        click.echo(line)
    if report.missing and not (report.created or report.linked):
        raise InputError(f"no log record {report.missing[0]!r}")


def _one_line(text: str, limit: int = 80) -> str:
    from builder.text.terminal import visible

    return visible(text, multiline=False, limit=limit)
