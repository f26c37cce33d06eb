"""`golden stats`: what the database holds, read across every stage's tables (documents and
chunks, verified items by type, candidates by verdict and review status, LLM calls by status and failure reason).

It reads ingest, generation, review and LLM tables alike, so it belongs to none of those areas;
all its SQL is in `builder.store.documents.document_summaries`, `builder.store.stats` and
`builder.store.logs.log_summary`.
Read-only. Document ids, formats, languages and error messages are untrusted text: control
characters (ESC included) are shown as visible glyphs, never sent to the terminal.
"""

from __future__ import annotations

import click

from builder.cli_context import CliContext
from builder.text.terminal import visible


def _visible(value: object) -> str:
    return visible(value, multiline=False)


@click.command()
@click.option("--top", type=int, default=50, show_default=True,
              help="Documents listed (largest first); 0 lists all.")
@click.pass_obj
def stats(obj: CliContext, top: int) -> None:
    """Show what the database holds: documents, chunks and tokens; verified items by type; candidates by verdict
    and review status; LLM calls by status with the most frequent errors; requests staged for
    batch engines (--batch) by status; production logs."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from builder.store.documents import document_summaries
    from builder.store.logs import log_summary
    from builder.store.stats import pipeline_counts

    store = obj.open_store()
    try:
        docs = document_summaries(store)
        counts = pipeline_counts(store)
        logs = log_summary(store)
    finally:
        store.close()
    console = Console(highlight=False, soft_wrap=False)

    table = Table(title=Text("Documents"), show_footer=True)
    shown = sorted(docs, key=lambda d: (-d["n_tokens"], d["id"]))
    if top:
        shown = shown[:top]
    total_chunks = sum(d["chunks"] for d in docs)
    total_tokens = sum(d["n_tokens"] for d in docs)
    for name, footer, justify in (
        ("document", f"{len(docs)} documents", "left"), ("format", "", "left"),
        ("chunks", str(total_chunks), "right"), ("tokens", str(total_tokens), "right"),
        ("language", "", "left"),
    ):
        table.add_column(Text(name), footer=Text(footer), justify=justify,  # type: ignore[arg-type]
                         overflow="fold")
    for d in shown:
        table.add_row(Text(_visible(d["id"])), Text(_visible(d["format"])),
                      Text(str(d["chunks"])), Text(str(d["n_tokens"])),
                      Text(_visible(d["language"])))
    console.print(table)
    if len(shown) < len(docs):
        console.print(Text(f"... and {len(docs) - len(shown)} more documents (--top 0 lists all)"))

    def counts_line(label: str, groups: dict[str, int]) -> Text:
        body = ", ".join(f"{_visible(k)} {n}" for k, n in groups.items()) or "none"
        return Text(f"{label}: {body}")

    console.print(counts_line("verified by type", counts["verified_by_type"]))
    console.print(counts_line("candidates by verdict", counts["candidates_by_verdict"]))
    console.print(counts_line("candidates by status", counts["candidates_by_status"]))
    console.print(counts_line("llm calls by status", counts["llm_calls_by_status"]))
    if counts["batch_requests_by_status"]:
        console.print(counts_line("batch requests by status", counts["batch_requests_by_status"]))
    if logs["records"]:
        console.print(Text(
            f"production logs: {logs['records']} records from {logs['first'][:10]} to "
            f"{logs['last'][:10]}; {logs['flagged']} flagged by feedback, {logs['thumbs_up']} "
            f"thumbs up; {logs['evaluated']} evaluated; {logs['promoted']} promoted or linked"))
    if counts["llm_top_errors"]:
        errors = Table(title=Text("Most frequent LLM errors"))
        errors.add_column(Text("calls"), justify="right")
        errors.add_column(Text("error"), overflow="fold")
        for row in counts["llm_top_errors"]:
            errors.add_row(Text(str(row["n"])), Text(_visible(row["reason"])))
        console.print(errors)
