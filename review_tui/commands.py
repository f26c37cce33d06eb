"""`golden review`: open the review UI (or judge calibration) on the database."""

from __future__ import annotations

import getpass
import os
from pathlib import Path

import click

from builder.errors import InputError


def default_annotator() -> str:
    try:
        return os.environ.get("USER") or getpass.getuser() or "annotator"
    except Exception:  # getpass raises when no user name can be found at all
        return "annotator"


@click.command()
@click.option("--annotator", default=None,
              help="Name recorded with each decision [default: $USER].")
@click.option("--keymap", "keymap_file", type=click.Path(dir_okay=False), default=None,
              help="TOML file with [review.keys] (binding id = key); default: golden.toml.")
@click.option("--calibrate", is_flag=True, help="Score judged answers 1-5 (judge calibration).")
@click.option("--run", "run_id", default=None, help="With --calibrate: only this scored run.")
@click.pass_obj
def review(obj, annotator: str | None, keymap_file: str | None, calibrate: bool,
           run_id: str | None) -> None:
    """Review generated candidates: accept, reject with a reason, edit, tag, undo.

    Every decision is saved at once; quit any time and run it again to carry on. Several
    annotators can review the same database at the same time (--annotator NAME).

    \b
    Keys: a accept · r reject · s skip · e edit · t tag · u undo · n/p next/prev
          / search · f filter · o sort · A/R/T bulk · ? help · q quit
    """
    from review_tui.keymap import load_keymap

    if run_id is not None and not calibrate:
        raise InputError("--run only applies with --calibrate")
    db_path = obj.db_path
    if not Path(db_path).is_file():
        raise InputError("no database here; run `golden ingest` and `golden generate` first",
                         path=db_path)
    annotator = (annotator or default_annotator()).strip()
    if not annotator or not annotator.isprintable():
        raise InputError(f"bad annotator name {annotator!r}")
    keymap = load_keymap(keymap_file)

    from review_tui.app import ReviewApp

    ReviewApp(db_path, annotator, keymap=keymap, calibrate=calibrate, run_id=run_id).run()
