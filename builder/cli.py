"""The `golden` command: one click group; each subcommand is a thin shell in `<area>/commands.py`.

Subcommands are imported lazily (only the one you run), so `golden --help` stays fast and the
Textual app is loaded only by `golden review`.

Exit codes: 0 success, 1 the job failed, 2 usage or input error. Errors are one line on stderr,
never a traceback (set GOLDEN_DEBUG=1 to see one), a bug in golden included ("internal error",
exit 1, naming golden's innermost line). That includes storage faults that escape a
command: an SQLite error is reported against the database (`storage_error`: read-only, disk
full, I/O error), an OSError against the file it names (an unwritable output folder), exit 1.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from builder import __version__
from builder.cli_context import CliContext
from builder.errors import GoldenError
from builder.text.terminal import one_line

# name -> "module:attribute"; the order here is the order in `golden --help`.
COMMANDS: dict[str, str] = {
    "ingest": "builder.ingest.commands:ingest",
    "stats": "builder.stats:stats",
    "generate": "builder.generate.commands:generate",
    "review": "review_tui.commands:review",
    "review-stats": "builder.review.commands:review_stats",
    "export": "builder.export.commands:export",
    "score": "builder.score.commands:score",
    "compare": "builder.score.commands:compare",
    "calibrate": "builder.score.commands:calibrate",
    "baseline-run": "builder.score.commands:baseline_run",
    "batch": "builder.llm.batch.commands:batch",
    "logs": "builder.logs.commands:logs",
    "demo": "builder.demo:demo",
}


class LazyGroup(click.Group):
    db_path: str = "golden.db"  # of the command being run, for storage errors

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        self.db_path = ctx.params.get("db_path") or self.db_path
        return super().invoke(ctx)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)

    def main(self, args=None, prog_name=None, **extra):  # type: ignore[override]
        """Run the group, mapping failures to one line on stderr and an exit code.

        Done here rather than in the console-script function so that `CliRunner.invoke(golden)`
        in tests sees exactly what a user sees.
        """
        try:
            rv = super().main(args=args, prog_name=prog_name, standalone_mode=False, **extra)
        except click.exceptions.Abort:
            click.echo("golden: aborted", err=True)
            sys.exit(130)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            click.echo(f"golden: error: {one_line(exc.format_message())}{hint}", err=True)
            sys.exit(2)
        except click.ClickException as exc:
            click.echo(f"golden: error: {one_line(exc.format_message())}", err=True)
            sys.exit(2 if isinstance(exc, click.FileError) else exc.exit_code)
        except KeyboardInterrupt:
            click.echo("golden: interrupted; finished work is saved, run the command again to "
                       "resume", err=True)
            sys.exit(130)
        except Exception as exc:  # golden's own errors, and storage faults (SQLite, the disk)
            if os.environ.get("GOLDEN_DEBUG"):
                raise
            error = exc if isinstance(exc, GoldenError) else _storage_error(exc, self.db_path)
            if error is None:  # a bug in golden: still one line, and what to report
                click.echo(f"golden: internal error: {_where(exc)}{type(exc).__name__}: "
                           f"{one_line(str(exc))} (a bug in golden; finished work is saved; "
                           "GOLDEN_DEBUG=1 shows the traceback)", err=True)
                sys.exit(1)
            label = "error: " if error.exit_code else ""  # exit 0: stopped on purpose (JobStopped)
            click.echo(f"golden: {label}{one_line(str(error))}", err=True)
            sys.exit(error.exit_code)
        sys.exit(rv if isinstance(rv, int) else 0)


def _where(exc: BaseException) -> str:
    """"builder/generate/terms.py:170: " -- the innermost of golden's own frames."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f"{os.sep}builder{os.sep}" in f.filename]
    if not frames:
        return ""
    path = frames[-1].filename
    return f"{path[path.rindex(f'{os.sep}builder{os.sep}') + 1:]}:{frames[-1].lineno}: "


def _storage_error(exc: BaseException, db_path: str) -> GoldenError | None:
    from builder.store.db import storage_error

    return storage_error(exc, db_path)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="golden")
@click.option(
    "--db", "db_path", envvar="GOLDEN_DB", default="golden.db", show_default=True,
    help="SQLite database file (env GOLDEN_DB).",
)
@click.pass_context
def golden(ctx: click.Context, db_path: str) -> None:
    """Build golden evaluation datasets for RAG systems and score RAG runs against them.

    \b
    Example:
      golden ingest samples/ && golden generate --n 20 && golden review
      golden export --out golden.jsonl && golden score --golden golden.jsonl --run run.jsonl
    """
    ctx.obj = CliContext(db_path=db_path)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    golden.main(args=argv, prog_name="golden")


if __name__ == "__main__":
    main()
