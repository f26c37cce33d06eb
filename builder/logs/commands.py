"""`golden logs import | evaluate | promote`: thin click shells over the modules beside this one."""

from __future__ import annotations

import click

from builder.llm.setup import llm_options, progress_line


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
