"""`golden review-stats`, `golden review export-log FILE`, `golden review import-log FILE`:
thin shells over builder/review/summary.py, logfile.py and builder/store/review_sync.py.

Annotator names are untrusted text (typed by anyone, or imported): shown as `Text`, with
control characters shown as escapes (`builder.text.terminal.one_line`), never as markup.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from builder.cli_context import CliContext
from builder.review.summary import review_summary
from builder.text.terminal import one_line


def _fmt(value, pct: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.0%}" if pct else f"{value:.3f}"


@click.command("review-stats")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.pass_obj
def review_stats(obj: CliContext, as_json: bool) -> None:
    """Agreement between annotators and their throughput.

    \b
    Per pair: the candidates both accepted or rejected, observed agreement and
    Cohen's kappa; overall: Krippendorff's alpha (nominal; any number of
    annotators); agreement on reject reasons where both rejected; open and
    settled adjudications; per annotator: decisions, active time (gaps of at
    most 5 minutes between decisions), decisions per hour, seconds per decision.
    Run `golden review --overlap 2` to route a share of items to two annotators.
    """
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    with obj.open_store() as store:
        summary = review_summary(store)
    if as_json:
        click.echo(json.dumps(summary, indent=2, ensure_ascii=False))
        return
    console = Console(highlight=False, soft_wrap=False)
    agree = summary["agreement"]
    overlap = summary["overlap"]
    head = Text(f"overlap: {overlap['k']} annotators on {overlap['share']:.0%} of the items"
                if overlap["k"] > 1 else "overlap: off (golden review --overlap 2 turns it on)")
    console.print(head)
    overall = agree["overall"]
    console.print(Text(f"agreement (accept/reject): Krippendorff's alpha "
                       f"{_fmt(overall['alpha'])} over {overall['items']} items decided by 2+ "
                       f"annotators ({overall['values']} decisions)"))
    if agree["pairs"]:
        table = Table(title=Text("Pairs"))
        for name in ("annotator", "annotator", "items", "agree", "observed", "Cohen's kappa"):
            table.add_column(Text(name), justify="left" if name == "annotator" else "right")
        for p in agree["pairs"]:
            table.add_row(Text(one_line(p["a"])), Text(one_line(p["b"])), str(p["n"]),
                          str(p["agree"]), _fmt(p["observed"], pct=True), _fmt(p["kappa"]))
        console.print(table)
    reasons = agree["reasons"]
    console.print(Text(f"reject reasons: {reasons['n']} items rejected by two annotators, same "
                       f"reason {reasons['agree']} ({_fmt(reasons['observed'], pct=True)}), "
                       f"Cohen's kappa {_fmt(reasons['kappa'])}"))
    adj = summary["adjudication"]
    console.print(Text(f"adjudication: {adj['open']} waiting (golden review, key c), "
                       f"{adj['settled']} settled"))
    if summary["annotators"]:
        table = Table(title=Text("Annotators"))
        for name in ("annotator", "accepted", "rejected", "skipped", "final", "active",
                     "per hour", "s/decision"):
            table.add_column(Text(name), justify="left" if name == "annotator" else "right")
        for name, a in summary["annotators"].items():
            minutes = a["active_seconds"] / 60
            table.add_row(Text(one_line(name)), str(a["accept"]), str(a["reject"]),
                          str(a["skip"]), str(a["final"]), f"{minutes:.0f} min",
                          "-" if a["per_hour"] is None else f"{a['per_hour']:.0f}",
                          "-" if a["median_seconds"] is None else f"{a['median_seconds']:.1f}")
        console.print(table)
    else:
        console.print(Text("no decisions yet: golden review"))


@click.command("export-log")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.pass_obj
def export_log(obj: CliContext, out: Path) -> None:
    """Write every review decision (the whole review log) to OUT as JSONL.

    Each row keeps its stable uid, annotator and time, so `golden review import-log`
    on another copy of the database merges it without duplicates. Written to a
    temporary file and renamed: nothing is left behind on failure.
    """
    from builder.export.atomic import AtomicOutputs, check_output_path
    from builder.review.logfile import record_line
    from builder.store.exports import read_snapshot
    from builder.store.review_sync import iter_log_records

    check_output_path(out)
    outputs = AtomicOutputs()
    with obj.open_store() as store, outputs:
        writer = outputs.open(out)
        with read_snapshot(store):
            for record in iter_log_records(store):
                writer.write_line(record_line(record))
        outputs.commit()
    click.echo(f"wrote {writer.records} review log rows to {one_line(str(out))}")


@click.command("import-log")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.pass_obj
def import_log(obj: CliContext, path: Path) -> None:
    """Merge review decisions exported from another copy of this database.

    \b
    Rows already here (same uid) are passed over: importing twice changes nothing.
    New rows are appended to the log (never rewriting it) and applied: a decision
    is its annotator's vote, so one that disagrees with a decision here sends the
    item to the adjudication queue (golden review, key c). The whole file is
    checked first; a bad line stops the import with nothing written.
    """
    from builder.review.logfile import read_log_file
    from builder.store.review_sync import check_import, import_log_records

    records, lines = read_log_file(path)
    with obj.open_store() as store:
        check_import(store, records, str(path), lines)
        result = import_log_records(store, records)
    click.echo(f"imported {result.added} new review log rows ({result.already} already here) "
               f"touching {len(result.candidate_ids)} candidates; {result.conflicts_opened} "
               f"new conflicts for adjudication, {result.edit_conflicts} conflicting edits "
               f"not applied (tagged edit-conflict)")
