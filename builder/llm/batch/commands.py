"""`golden batch submit | status | fetch | import`: thin shells over remote.py and importer.py."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

import click

from builder.config import load_config
from builder.llm.settings import resolve_settings
from builder.llm.setup import progress_line


def _endpoint_options(f: Callable) -> Callable:
    """--base-url / --api-key / --config for the Batch API commands, as `llm_settings`."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        cli = {"base_url": kwargs.pop("base_url"), "api_key": kwargs.pop("api_key")}
        config = load_config(kwargs.pop("config_path"))
        kwargs["llm_settings"] = resolve_settings(cli, os.environ, config)
        return f(*args, **kwargs)

    for option in reversed([
        click.option("--base-url", default=None,
                     help="Batch API endpoint [OPENAI_BASE_URL, else the openai SDK's default: "
                          "OpenAI]."),
        click.option("--api-key", default=None, help="API key (env OPENAI_API_KEY). Never "
                                                     "stored or printed."),
        click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
                     help="Config file [./golden.toml if present]: prices, max_retries."),
    ]):
        wrapper = option(wrapper)
    return wrapper


_DIR = click.argument("batch_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))


@click.group()
def batch():
    """Run staged LLM requests on a batch engine and bring the results back.

    \b
    `golden generate --batch DIR` (or `golden score ... --batch DIR`) writes the requests
    the cache cannot answer to DIR as OpenAI Batch API files and stops. Run them with
    `golden batch submit DIR` (OpenAI), `vllm run-batch` or Ray Data, import the results
    with `golden batch import`, and run the same command again: it goes on from the
    imported replies and stages the next step, until the job finishes.

    \b
    Example:
      golden generate --n 500 --model gpt-4o-mini --batch jobs/
      golden batch submit jobs/ && golden batch status jobs/
      golden batch fetch jobs/ && golden batch import jobs/
      golden generate --n 500 --model gpt-4o-mini --batch jobs/
    """


@batch.command()
@_DIR
@_endpoint_options
def submit(batch_dir, llm_settings):
    """Upload DIR's request files not submitted yet and create a batch for each (a second
    submit creates no second batch)."""
    from builder.llm.batch import remote

    client = remote.sdk_client(llm_settings)
    created = remote.submit(batch_dir, client, progress=progress_line)
    progress_line(f"{len(created)} batch(es) submitted; next: `golden batch status {batch_dir}` "
                  f"until they end, then `golden batch fetch {batch_dir}`")


@batch.command()
@_DIR
@_endpoint_options
@click.pass_obj
def status(obj, batch_dir, llm_settings):
    """Each request file of DIR: lines, batch, status, request counts; then what the
    database holds for DIR's requests."""
    from builder.llm.batch import manifest as manifest_mod
    from builder.llm.batch import remote
    from builder.store import batch as batch_store

    manifest = manifest_mod.load(batch_dir)
    if any(f.remote.batch_id for f in manifest.files):
        files = remote.refresh(batch_dir, remote.sdk_client(llm_settings))
    else:
        files = manifest.files
    for f in files:
        r = f.remote
        counts = ", ".join(f"{k} {v}" for k, v in r.request_counts.items()) or "-"
        state = (f"{r.batch_id} {r.status} ({counts})" + (" fetched" if r.fetched else "")
                 if r.batch_id else "not submitted")
        click.echo(f"{f.name}\t{f.lines} requests\t{f.model}\t{state}")
    with obj.open_store() as store:
        held = batch_store.counts(store, str(Path(batch_dir).resolve()))
    words = {"staged": "awaiting results", "failed": "to stage again", "pending":
             "follow-ups to stage", "continued": "followed up", "done": "answered"}
    click.echo("requests: " + (", ".join(f"{n} {words.get(s, s)}" for s, n in sorted(held.items()))
                               or "none recorded"))
    for job, when in manifest.finished.items():
        click.echo(f"{job}: finished {when}")


@batch.command()
@_DIR
@_endpoint_options
@click.pass_obj
def fetch(obj, batch_dir, llm_settings):
    """Download the output and error files of DIR's batches that ended."""
    from builder.llm.batch import remote

    client = remote.sdk_client(llm_settings)
    with obj.open_store() as store:
        written = remote.fetch(batch_dir, client, store, progress=progress_line)
    if written:
        progress_line(f"fetched {len(written)} file(s); next: `golden batch import {batch_dir}`")
    else:
        progress_line("nothing to fetch yet")


@batch.command(name="import")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Config file [./golden.toml if present]: prices, max_retries.")
@click.pass_obj
def import_(obj, files, config_path):
    """Import output and error files of a batch engine (OpenAI Batch API, vllm run-batch,
    the Ray example): FILE..., or a folder for its *.results.jsonl and *.errors.jsonl.

    \b
    Every reply is read as the live client reads it; importing a file twice stores nothing
    twice; lines whose custom_id golden never staged are reported and ignored.
    """
    from builder.llm.batch.importer import import_results, result_files

    settings = resolve_settings({}, os.environ, load_config(config_path))
    with obj.open_store() as store:
        report = import_results(store, result_files(list(files)), settings)
    progress_line(report.line())
    progress_line("next: run the job's command again (same --batch DIR) to go on")
