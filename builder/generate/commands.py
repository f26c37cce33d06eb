"""`golden generate`: a thin shell over `builder.generate.runner.run_generate`."""

from __future__ import annotations

import click

from builder.llm.setup import batch_option, llm_options


@click.command()
@click.option("--n", "n", type=click.IntRange(1, 100_000), default=20, show_default=True,
              help="Target number of verified candidates (counting earlier runs).")
@click.option("--mix", default=None, metavar="TYPE=SHARE,...",
              help="Type shares, e.g. single_hop=0.4,multi_hop=0.2,unanswerable=0.2,temporal=0.2.")
@click.option("--types", default=None, metavar="TYPE,...",
              help="Only these types (single_hop, reasoning, multi_hop, comparative, temporal, "
                   "unanswerable, ambiguous).")
@click.option("--docs", default=None, metavar="GLOB",
              help="Only documents whose id or path matches this glob, e.g. 'returns*'.")
@click.option("--prompts", "prompts_dir", type=click.Path(file_okay=False, exists=True),
              default=None, help="Folder whose .prompt files override the bundled ones.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed for which chunks and facts are picked.")
@click.option("--facts", "facts_mode", type=click.Choice(["auto", "llm", "text"]), default="auto",
              show_default=True,
              help="Fact extractor: the LLM, or code that cuts sentences, list items and table "
                   "cells out of each chunk. auto = code for the embedded local model.")
@llm_options
@batch_option
@click.pass_obj
def generate(obj, n, mix, types, docs, prompts_dir, seed, facts_mode, llm_settings):
    """Generate question/answer candidates from the ingested knowledge base.

    \b
    Stages: facts -> questions -> evolutions -> verification -> dedup -> difficulty.
    Each step is saved as it finishes: run it again to resume after Ctrl-C, a crash or
    --budget; with nothing left to do it makes no LLM calls.

    \b
    Example:
      golden generate --n 50 --types single_hop,multi_hop,unanswerable --budget 2
    """
    from builder.errors import InputError
    from builder.generate.models import GenerateOptions
    from builder.generate.plan import parse_mix, parse_types

    try:
        options = GenerateOptions(
            n=n, mix=parse_mix(mix), types=parse_types(types), docs=docs,
            prompts_dir=prompts_dir, seed=seed, facts=facts_mode,
            concurrency=min(getattr(llm_settings, "concurrency", None) or 4, 256),
        )
    except ValueError as exc:
        raise InputError(str(exc)) from None
    with obj.open_store() as store:
        generate_with_progress(store, llm_settings, options)


def generate_with_progress(store, llm_settings, options, *, out=None, err=None):
    """Open the LLM (starting the local model if none is configured), run every stage with a
    progress bar per stage on stderr, print the summary table; returns the `GenerateSummary`.
    Shared by `golden generate` and `golden demo`."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from builder.generate.runner import run_generate
    from builder.generate.summary import render_summary
    from builder.llm.setup import open_llm

    out = out or Console()
    err = err or Console(stderr=True)
    with open_llm(store, llm_settings, job="generate") as llm:
        if err.is_terminal:
            with Progress(TextColumn("{task.description:<12}"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=err, transient=False) as progress:
                summary = run_generate(store, llm, options, progress=progress)
        else:
            summary = run_generate(store, llm, options, progress=LineProgress(err))
    render_summary(summary, out)
    return summary


class LineProgress:
    """Progress for a stderr that is not a terminal (CI logs, pipes): rich's live bars print
    nothing there until the end, so print a plain line per stage start, then at most every
    10 s, and when the stage completes: a slow local model never looks like a hang."""

    def __init__(self, console, every_s: float = 10.0):
        import time

        self._console = console
        self._clock = time.monotonic
        self._every = every_s
        self._tasks: dict[int, list] = {}

    def add_task(self, description: str, total: int | None = None) -> int:
        task_id = len(self._tasks)
        self._tasks[task_id] = [description, total or 0, 0, self._clock()]
        self._print(task_id)
        return task_id

    def advance(self, task_id: int, advance: int = 1) -> None:
        task = self._tasks[task_id]
        task[2] += advance
        if task[2] >= task[1] or self._clock() - task[3] >= self._every:
            task[3] = self._clock()
            self._print(task_id)

    def _print(self, task_id: int) -> None:
        description, total, done, _ = self._tasks[task_id]
        self._console.print(f"golden: {description}: {done}/{total}", markup=False,
                            highlight=False)
