"""`DIR/manifest.json`: what each request file of a `--batch` folder holds, and what `golden
batch submit / status / fetch` did with it.

Written whole to a temporary name and renamed, so a reader (or a crash) only ever sees the
previous or the new manifest. Request files are immutable once listed; results files are
written beside them by `golden batch fetch` (or by vllm run-batch / the Ray example).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from builder import __version__
from builder.errors import InputError
from builder.llm.batch.formats import ENDPOINT

NAME = "manifest.json"


class RemoteBatch(BaseModel):
    """A request file's life on the OpenAI Batch API (or any endpoint that speaks it)."""

    input_file_id: str | None = None
    batch_id: str | None = None
    status: str | None = None            # validating | in_progress | ... | completed | failed
    request_counts: dict[str, int] = Field(default_factory=dict)
    results: list[str] = Field(default_factory=list)   # local files fetched: output, errors
    fetched: bool = False


class RequestFile(BaseModel):
    name: str                        # file name inside the folder
    round: int                       # the staging pass that wrote it
    job: str                         # generate | score
    model: str                       # every line asks this model (one model per batch)
    lines: int
    bytes: int
    sha256: str
    stages: dict[str, int] = Field(default_factory=dict)   # requests per stage
    created_at: str
    remote: RemoteBatch = Field(default_factory=RemoteBatch)


class Manifest(BaseModel):
    format: str = "openai-batch-jsonl"
    endpoint: str = ENDPOINT
    golden_version: str = __version__
    rounds: int = 0
    files: list[RequestFile] = Field(default_factory=list)
    finished: dict[str, str] = Field(
        default_factory=dict, description="job -> when a pass found nothing left to stage")

    def file(self, name: str) -> RequestFile:
        for entry in self.files:
            if entry.name == name:
                return entry
        raise KeyError(name)


def load(batch_dir: str | Path, *, required: bool = True) -> Manifest:
    """The folder's manifest; an empty one for a new folder unless `required`."""
    path = Path(batch_dir) / NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if required:
            raise InputError("no golden batch manifest here: stage requests first with "
                             "`golden generate --batch DIR` (or `golden score ... --batch DIR`)",
                             path=str(batch_dir)) from None
        return Manifest()
    try:
        return Manifest.model_validate(json.loads(text))
    except (ValueError, ValidationError) as exc:
        raise InputError(f"not a golden batch manifest ({str(exc).splitlines()[0]})",
                         path=str(path)) from None


def save(batch_dir: str | Path, manifest: Manifest) -> None:
    """Replace the manifest atomically (temporary file, fsync, rename)."""
    path = Path(batch_dir) / NAME
    tmp = path.with_name(f".{NAME}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(manifest.model_dump_json(indent=2))
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
