"""`golden ingest`: a thin shell over `pipeline.ingest_paths`."""

from __future__ import annotations

import click

from builder.cli_context import CliContext
from builder.text.terminal import one_line


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--include", multiple=True, metavar="GLOB",
              help="Only files whose path (relative to the folder given) matches; repeatable.")
@click.option("--exclude", multiple=True, metavar="GLOB",
              help="Skip matching files or folders; repeatable; wins over --include.")
@click.option("--chunk-tokens", type=int, default=400, show_default=True,
              help="Largest chunk, in o200k_base tokens (code blocks and tables may exceed it).")
@click.option("--overlap", type=int, default=50, show_default=True,
              help="Prose repeated from the end of one chunk at the start of the next, in tokens.")
@click.pass_obj
def ingest(obj: CliContext, paths: tuple[str, ...], include: tuple[str, ...],
           exclude: tuple[str, ...], chunk_tokens: int, overlap: int) -> None:
    """Load Markdown, text, HTML, PDF, Word (.docx), reStructuredText, MDX and pre-chunked
    JSONL files into the database.

    \b
    PATHS are files or folders (searched recursively; hidden files and other file types
    are skipped). Re-running is cheap: unchanged files are skipped, changed ones replaced,
    and files deleted from a folder given here are removed. Any bad file stops the command
    before anything is written. PDF and .docx need: pip install 'golden[documents]'.

    \b
    Example:
      golden ingest samples/ --exclude 'drafts/*'
      golden ingest kb.jsonl       # ids in the file are kept as chunk ids
    """
    from builder.ingest.pipeline import ingest_paths

    store = obj.open_store(create=True)
    try:
        report = ingest_paths(
            store, list(paths), include=include, exclude=exclude, chunk_tokens=chunk_tokens,
            overlap=overlap,
            warn=lambda m: click.echo(f"golden: warning: {one_line(m)}", err=True),
        )
    finally:
        store.close()
    for line in report.lines():
        click.echo(line)
