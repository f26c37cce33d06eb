"""`golden generate`: a thin shell over `builder.generate.runner.run_generate`."""

from __future__ import annotations

import click

from builder.llm.setup import batch_option, llm_options


@click.command()
@click.option("--n", "n", type=click.IntRange(1, 100_000), default=20, show_default=True,
              help="Target number of verified candidates (counting earlier runs).")
@click.option("--mix", default=None, metavar="TYPE=SHARE,...",
              help="Type shares, e.g. single_hop=0.4,multi_hop=0.2,comparative=0.2,unanswerable=0.2.")
@click.option("--types", default=None, metavar="TYPE,...",
              help="Only these types (single_hop, reasoning, multi_hop, comparative, temporal, "
                   "unanswerable, ambiguous).")
@click.option("--docs", default=None, metavar="GLOB",
              help="Only documents whose id or path matches this glob, e.g. 'returns*'.")
@click.option("--prompts", "prompts_dir", type=click.Path(file_okay=False, exists=True),
              default=None, help="Folder whose .prompt files override the bundled ones.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed for the order in which answer spans are asked about.")
@llm_options
@batch_option
@click.pass_obj
def generate(obj, n, mix, types, docs, prompts_dir, seed, llm_settings):
    """Generate question/answer candidates from the ingested knowledge base.

    \b
    Stages: answer spans (code) -> questions -> retrieval round trips -> harder items
    composed from verified ones -> dedup -> difficulty.
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
            prompts_dir=prompts_dir, seed=seed,
            concurrency=min(getattr(llm_settings, "concurrency", None) or 4, 256),
        )
    except ValueError as exc:
        raise InputError(str(exc)) from None
    with obj.open_store() as store:
        generate_with_progress(store, llm_settings, options)


def generate_with_progress(store, llm_settings, options, *, out=None, err=None,
                           show_items: bool = False):
    """Open the LLM (starting the local model if none is configured), run the pipeline with one
    progress display for the whole run on stderr (progress.py), print the summary table;
    returns the `GenerateSummary`. Shared by `golden generate` and `golden demo` (which shows
    each verified item as it lands)."""
    from rich.console import Console

    from builder.generate.progress import RunObserver
    from builder.generate.runner import run_generate
    from builder.generate.summary import render_summary
    from builder.llm.setup import open_llm

    out = out or Console()
    err = err or Console(stderr=True)
    with open_llm(store, llm_settings, job="generate") as llm:
        if getattr(llm, "dry_run", False):  # nothing runs: no progress to show
            summary = run_generate(store, llm, options)
        else:
            with RunObserver(err, options.n, show_items=show_items) as observer:
                summary = run_generate(store, llm, options, observer=observer)
            summary.first_item_seconds = observer.first_item_s
    render_summary(summary, out)
    return summary
