"""`golden demo`: the whole loop on the bundled sample knowledge base, on a fresh machine.

Ingests samples/ (a fictional retailer's support handbook), generates about 20 candidates with
the embedded local model (or the endpoint you configured), prints the generation summary and the
commands that take the set through review, export and scoring. Everything lands in the normal
`--db` file, so those next commands work on it as they are printed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from builder.llm.setup import llm_options


def samples_dir() -> Path:
    """The sample knowledge base: inside the wheel (`builder/samples`) or the source checkout."""
    import builder

    package_dir = Path(builder.__file__).resolve().parent
    for candidate in (package_dir / "samples", package_dir.parent / "samples"):
        if (candidate / "handbook").is_dir():
            return candidate
    raise click.ClickException("the bundled samples/ folder is missing from this installation")


@click.command()
@click.option("--n", "n", type=click.IntRange(1, 500), default=12, show_default=True,
              help="How many verified candidates to aim for (a dozen: a few minutes on a laptop).")
@click.option("--kb", "kb", type=click.Path(exists=True), default=None,
              help="Knowledge base to use instead of the bundled samples.")
@llm_options
@click.pass_obj
def demo(obj, n, kb, llm_settings):
    """Ingest the sample knowledge base, generate candidates, and show the next steps.

    With no endpoint configured this starts the bundled local model (first run: fetches and
    checks it, a progress line per step). Demo items are labelled with the model that wrote
    them, so they are never mistaken for a curated set.

    \b
    Example:
      golden demo                      # embedded model, golden.db in this folder
      golden --db demo.db demo --n 10 --base-url http://localhost:11434/v1 --model qwen2.5:7b
    """
    from rich.console import Console

    from builder.generate.commands import generate_with_progress
    from builder.generate.models import GenerateOptions
    from builder.ingest.pipeline import ingest_paths

    out = Console()
    err = Console(stderr=True)
    kb_path = Path(kb) if kb else samples_dir()
    with obj.open_store(create=True) as store:
        err.print(f"golden: ingesting {kb_path}", markup=False, highlight=False)
        report = ingest_paths(store, [str(kb_path)], warn=lambda m: err.print(m, markup=False))
        for line in report.lines():
            err.print(line, markup=False, highlight=False)
        options = GenerateOptions(n=n, concurrency=llm_settings.concurrency or 2)
        summary = generate_with_progress(store, llm_settings, options, out=out, err=err,
                                         show_items=True)
    db = obj.db_path
    db_flag = "" if db == "golden.db" else f" --db {db}"
    out.print()
    out.print("Next steps:", style="bold")
    steps = [
        ("review the candidates (a accept, r reject, e edit, ? help)", f"golden{db_flag} review"),
        ("export what you accepted (pending too, for a first look)",
         f"golden{db_flag} export --out golden.jsonl --status accepted,pending"),
        ("make a run with the built-in BM25 retriever",
         f"golden{db_flag} baseline-run --golden golden.jsonl --out run.jsonl"),
        ("score it", f"golden{db_flag} score --golden golden.jsonl --run run.jsonl --no-judge "
                     "--out report.html"),
    ]
    for what, command in steps:
        out.print(f"  {what}:", markup=False, highlight=False)
        out.print(f"    {command}", markup=False, highlight=False)
    if summary.stopped:
        out.print(f"Stopped early: {summary.stopped}; run `golden{db_flag} demo` again to resume.",
                  markup=False, highlight=False)
        sys.exit(1)
