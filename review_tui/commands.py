"""`golden review`: open the review UI (or judge calibration) on the database; its subcommands
`export-log` and `import-log` move decisions between copies of a database."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import click

from builder.errors import InputError, JobError
from builder.review.commands import export_log, import_log


def default_annotator() -> str:
    if os.environ.get("USER"):
        return os.environ["USER"]
    import getpass  # only without $USER: not on every start

    try:
        return getpass.getuser() or "annotator"
    except Exception:  # getpass raises when no user name can be found at all
        return "annotator"


@click.group(invoke_without_command=True)
@click.option("--annotator", default=None,
              help="Name recorded with each decision [default: $USER].")
@click.option("--keymap", "keymap_file", type=click.Path(dir_okay=False), default=None,
              help="TOML file with [review.keys] (binding id = key); default: golden.toml.")
@click.option("--overlap", type=click.IntRange(1, 20), default=None,
              help="Route a share of the items to this many annotators, for agreement "
                   "(stored in the database for every session; 1 turns it off).")
@click.option("--overlap-share", type=click.FloatRange(0.0, 1.0), default=None,
              help="The share of items --overlap applies to [default: 0.1].")
@click.option("--calibrate", is_flag=True, help="Score judged answers 1-5 (judge calibration).")
@click.option("--run", "run_id", default=None, help="With --calibrate: only this scored run.")
@click.pass_context
def review(ctx: click.Context, annotator: str | None, keymap_file: str | None,
           overlap: int | None, overlap_share: float | None, calibrate: bool,
           run_id: str | None) -> None:
    """Review generated candidates: accept, reject with a reason, edit, tag, undo.

    Every decision is saved at once; quit any time and run it again to carry on. Several
    annotators can review one database at once (--annotator NAME): each is offered items
    no one else holds. With --overlap 2 a share of the items goes to two annotators;
    where they disagree the item waits in the adjudication queue (key c).

    \b
    Keys: a accept · r reject · s skip · e edit · t tag · u undo · n/p next/prev
          v evidence · K search the knowledge base · / search · f filter · o sort
          c conflicts (adjudication) · A/R/T bulk · S agreement · ? help · q quit
    \b
    Subcommands: golden review export-log FILE · golden review import-log FILE
    """
    if ctx.invoked_subcommand is not None:
        return
    # Start-up allocates some hundred thousand objects (Textual's classes, CSS, the first
    # screen) and keeps nearly all of them: the cyclic GC's ~100 passes over them before the
    # first frame freed next to nothing and cost ~10% of its CPU. Off until the first frame is
    # on screen (ReviewApp turns it back on then), and on again here whatever happens.
    gc.disable()
    try:
        app = run_review(ctx.obj.db_path, annotator, keymap_file, overlap, overlap_share,
                         calibrate, run_id)
    finally:
        gc.enable()
    unsaved = app.unsaved()
    if unsaved:
        for line in unsaved:
            click.echo(f"golden: not saved: {line}", err=True)
        raise JobError(f"{len(unsaved)} decision(s) could not be saved (see above); the "
                       f"database stayed unavailable", path=ctx.obj.db_path)
    if app.return_code:
        sys.exit(app.return_code)


def run_review(db_path: str, annotator: str | None, keymap_file: str | None,
               overlap: int | None, overlap_share: float | None, calibrate: bool,
               run_id: str | None):
    """Check the options, then run the review UI (or calibration) until it quits; the app."""
    from builder.review.settings import overlap_setting
    from review_tui.keymap import load_keymap

    if run_id is not None and not calibrate:
        raise InputError("--run only applies with --calibrate")
    if not Path(db_path).is_file():
        raise InputError("no database here; run `golden ingest` and `golden generate` first",
                         path=db_path)
    annotator = (annotator or default_annotator()).strip()
    if not annotator or not annotator.isprintable():
        raise InputError(f"bad annotator name {annotator!r}")
    keymap = load_keymap(keymap_file)
    wanted_overlap = overlap_setting(overlap, overlap_share)
    if calibrate:
        from builder.store import Store
        from builder.store.runs import require_run

        with Store(db_path) as store:
            run_id = require_run(store, run_id)["id"]

    from review_tui.app import ReviewApp

    app = ReviewApp(db_path, annotator, keymap=keymap, calibrate=calibrate, run_id=run_id,
                    overlap=wanted_overlap)
    app.run()
    return app


review.add_command(export_log)
review.add_command(import_log)
