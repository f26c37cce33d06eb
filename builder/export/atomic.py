"""All-or-nothing output files: written to temporary files beside the targets, renamed at the end.

Guarantee: if anything fails before `commit()`, no target is created or changed and every
temporary file is removed. A failure to write (an unwritable or read-only folder, a full disk)
is a `JobError` naming the target, so the CLI prints one line and exits 1. Each file is
renamed with `os.replace` (atomic on one filesystem, which holds because the temporary file
sits in the target's own folder); a set of files is renamed one after the other, data files
first and the manifest last.

Every command that writes a file the user names (`export --out`, `score`/`logs evaluate`/
`compare --out`, `baseline-run --out`, `review export-log OUT`) goes through here:
`check_output_path` before any work, then `AtomicOutputs`. An output's folder may be missing:
it is created when the first file is opened in it (as `--batch DIR` creates its folder) and
removed again if the write fails, so a failed command leaves no empty folder behind either.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import BinaryIO

from builder.errors import InputError, JobError


class HashingWriter:
    """A binary file that counts its lines and hashes what is written (sha256)."""

    def __init__(self, fh: BinaryIO, path: str):
        self._fh = fh
        self.path = path  # the temporary file until committed
        self.sha256 = hashlib.sha256()
        self.records = 0

    def write_line(self, data: bytes) -> None:
        self._fh.write(data)
        self.sha256.update(data)
        self.records += 1

    def write(self, data: bytes) -> None:
        self._fh.write(data)
        self.sha256.update(data)

    def flush(self) -> None:
        self._fh.flush()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_output_path(out: str | Path) -> None:
    """Refuse, before any work, an output path that cannot be written (InputError: one line,
    exit 2): the path is a folder, a file stands where one of its folders should be, or its
    folder is missing and the nearest existing one is not writable. A missing folder is
    otherwise fine: `AtomicOutputs.open` creates it."""
    target = Path(out)
    try:
        if target.is_dir():
            raise InputError("is a folder; give a file name", path=str(out))
        folder = target.resolve().parent
        existing = folder
        while not existing.exists():
            existing = existing.parent
    except OSError as exc:  # a name too long, a loop of links
        raise InputError(f"cannot use this output path ({exc.strerror or exc})",
                         path=str(out)) from None
    if not existing.is_dir():
        raise InputError("is a file, not a folder", path=str(existing))
    if existing != folder and not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"cannot create the output's folder {folder}: {existing} is not "
                         "writable", path=str(out))


class AtomicOutputs:
    """Temporary files for a set of targets; `commit()` renames them into place, in order.
    A target's missing folder is created on `open` and removed by `discard` (if still empty)."""

    def __init__(self) -> None:
        self._pending: list[tuple[Path, str, BinaryIO]] = []
        self._targets: dict[str, Path] = {}  # temporary and target path -> target
        self._created: list[Path] = []  # folders made for the targets, outermost first
        self._done = False

    def _make_folder(self, target: Path) -> None:
        missing = []
        folder = target.absolute().parent
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except FileExistsError:
                if not folder.is_dir():  # a file made in the meantime
                    raise JobError("is a file, not a folder; nothing was written",
                                   path=str(folder)) from None
                continue
            except OSError as exc:
                raise JobError(f"cannot create the output's folder ({exc.strerror or exc}); "
                               "nothing was written", path=str(folder)) from None
            self._created.append(folder)

    def open(self, target: Path) -> HashingWriter:
        self._make_folder(target)
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                       dir=target.parent)
        except OSError as exc:
            raise _write_error(exc, target) from exc
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
        fh = os.fdopen(fd, "wb", buffering=1 << 20)
        self._pending.append((target, tmp, fh))
        self._targets[tmp] = self._targets[str(target)] = target
        return HashingWriter(fh, tmp)

    def commit(self) -> None:
        for _target, _tmp, fh in self._pending:
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
        for target, tmp, _fh in self._pending:
            os.replace(tmp, target)
        self._done = True

    def discard(self) -> None:
        for _target, tmp, fh in self._pending:
            try:
                fh.close()
            except OSError:
                pass
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        self._pending.clear()
        for folder in reversed(self._created):  # innermost first; never a folder with files
            try:
                folder.rmdir()
            except OSError:
                pass
        self._created.clear()

    def __enter__(self) -> "AtomicOutputs":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None or not self._done:
            self.discard()
        if isinstance(exc, OSError):  # a write, fsync or rename failed: name the output
            target = self._targets.get(str(exc.filename)) or next(
                iter(self._targets.values()), None)
            raise _write_error(exc, target) from exc


def _write_error(exc: OSError, target: Path | None) -> JobError:
    where = str(target) if target is not None else exc.filename
    return JobError(f"cannot write this output file ({exc.strerror or exc}); nothing was "
                    f"written", path=where)
