"""`golden batch submit / status / fetch`: a `--batch` folder's request files on the OpenAI
Batch API (or any endpoint that implements it), through the openai SDK.

- submit: `files.create(purpose="batch")`, then `batches.create(endpoint=
  "/v1/chat/completions", completion_window="24h")` for every request file not submitted yet.
  Each id is saved in the manifest as soon as it exists, so a second submit (or one after a
  crash) never uploads a submitted file again nor creates a second batch: a file uploaded
  whose batch id was not saved is looked up among the account's batches by its input file id
  before a batch is created for it.
- status: `batches.retrieve` for every submitted file; the manifest keeps the last status and
  request counts.
- fetch: for every batch that ended, the output and error files are downloaded beside the
  request file (`<name>.results.jsonl`, `<name>.errors.jsonl`, written to a temporary name and
  renamed); a batch that ended without running some requests (failed, expired, cancelled)
  releases them, so the next pass stages them again.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from builder.errors import InputError, JobError
from builder.llm.batch import manifest as manifest_mod
from builder.llm.batch.formats import ENDPOINT
from builder.llm.client import safe_url
from builder.llm.settings import LLMSettings
from builder.store import batch as batch_store
from builder.store.db import Store

ENDED = ("completed", "failed", "expired", "cancelled")
LOOKUP_LIMIT = 1000  # batches scanned when looking for one created by a submit that crashed


def sdk_client(settings: LLMSettings, http_client: Any = None):
    """A synchronous openai client for the Batch API endpoints (files, batches)."""
    import openai

    key = settings.api_key.get_secret_value() if settings.api_key else None
    if not key:
        raise InputError("no API key for the Batch API: set OPENAI_API_KEY or pass --api-key")
    return openai.OpenAI(base_url=settings.base_url, api_key=key, timeout=settings.timeout,
                         max_retries=settings.max_retries, http_client=http_client)


def _calling(client, what: str) -> Callable:
    """Run one SDK call, turning its failures into one-line job errors (the key never shown)."""
    import openai

    def run(fn: Callable, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except openai.AuthenticationError:
            raise JobError("the Batch API endpoint rejected the API key (HTTP 401): check "
                           "--api-key / OPENAI_API_KEY") from None
        except openai.APIStatusError as exc:
            body = exc.body if isinstance(exc.body, dict) else {}
            message = str(body.get("message") or exc.message)[:300]
            raise JobError(f"{what}: HTTP {exc.status_code} from "
                           f"{safe_url(str(client.base_url))}: {message}") from None
        except openai.APIConnectionError:
            raise JobError(f"{what}: cannot reach {safe_url(str(client.base_url))} "
                           "(check --base-url)") from None
    return run


def submit(batch_dir: str | Path, client, *, progress: Callable[[str], None]) -> list[str]:
    """Submit every request file of the folder that has no batch yet; returns the batch ids
    created or found. Resumable at every step (see the module doc)."""
    folder = Path(batch_dir)
    manifest = manifest_mod.load(folder)
    call = _calling(client, "submit")
    done: list[str] = []
    for entry in manifest.files:
        remote = entry.remote
        path = folder / entry.name
        if remote.batch_id:
            progress(f"{entry.name}: already submitted as {remote.batch_id} ({remote.status})")
            continue
        if not path.exists():
            progress(f"{entry.name}: not in the folder any more, skipped (its requests are "
                     "staged again by the next pass)")
            continue
        if remote.input_file_id:
            found = _batch_for(client, remote.input_file_id)
            if found is not None:
                remote.batch_id, remote.status = found.id, found.status
                manifest_mod.save(folder, manifest)
                progress(f"{entry.name}: found its batch {found.id} ({found.status})")
                done.append(found.id)
                continue
        else:
            with open(path, "rb") as handle:
                uploaded = call(client.files.create, file=handle, purpose="batch")
            remote.input_file_id = uploaded.id
            manifest_mod.save(folder, manifest)
        batch = call(client.batches.create, input_file_id=remote.input_file_id,
                     endpoint=ENDPOINT, completion_window="24h",
                     metadata={"golden_file": entry.name[:500], "golden_sha256": entry.sha256})
        remote.batch_id, remote.status = batch.id, batch.status
        manifest_mod.save(folder, manifest)
        progress(f"{entry.name}: {entry.lines} requests submitted as {batch.id}")
        done.append(batch.id)
    return done


def _batch_for(client, input_file_id: str):
    """The account's batch over this uploaded file that has not failed, if any."""
    seen = 0
    for batch in client.batches.list(limit=100):
        if batch.input_file_id == input_file_id and batch.status not in ("failed", "cancelled",
                                                                         "expired"):
            return batch
        seen += 1
        if seen >= LOOKUP_LIMIT:
            break
    return None


def refresh(batch_dir: str | Path, client) -> list[manifest_mod.RequestFile]:
    """Retrieve every submitted batch that has not ended; save statuses; return the entries."""
    folder = Path(batch_dir)
    manifest = manifest_mod.load(folder)
    call = _calling(client, "status")
    for entry in manifest.files:
        remote = entry.remote
        if remote.batch_id and not remote.fetched and remote.status not in ENDED:
            batch = call(client.batches.retrieve, remote.batch_id)
            remote.status = batch.status
            if batch.request_counts is not None:
                remote.request_counts = batch.request_counts.model_dump()
            manifest_mod.save(folder, manifest)
    return manifest.files


def fetch(batch_dir: str | Path, client, store: Store, *,
          progress: Callable[[str], None]) -> list[Path]:
    """Download the output and error files of every batch that ended (see the module doc);
    returns the local files written."""
    folder = Path(batch_dir)
    refresh(folder, client)
    manifest = manifest_mod.load(folder)
    call = _calling(client, "fetch")
    written: list[Path] = []
    for entry in manifest.files:
        remote = entry.remote
        if not remote.batch_id or remote.fetched:
            continue
        if remote.status not in ENDED:
            progress(f"{entry.name}: batch {remote.batch_id} is {remote.status}, not ended yet")
            continue
        batch = call(client.batches.retrieve, remote.batch_id)
        stem = entry.name.removesuffix(".jsonl")
        for file_id, suffix in ((batch.output_file_id, "results"), (batch.error_file_id, "errors")):
            if not file_id:
                continue
            target = folder / f"{stem}.{suffix}.jsonl"
            _download(call, client, file_id, target)
            remote.results.append(target.name)
            written.append(target)
        if batch.status != "completed":
            batch_store.release_file(store, str((folder / entry.name).resolve()))
            progress(f"{entry.name}: batch {batch.status}; the requests it did not run are "
                     "staged again by the next pass")
        remote.fetched = True
        manifest_mod.save(folder, manifest)
    return written


def _download(call, client, file_id: str, target: Path) -> None:
    """Stream a file's content to `target` (temporary name, fsync, rename)."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")

    def stream() -> None:
        with client.files.with_streaming_response.content(file_id) as response:
            with open(tmp, "wb") as handle:
                for chunk in response.iter_bytes():
                    handle.write(chunk)
                handle.flush()
                os.fsync(handle.fileno())

    try:
        call(stream)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
