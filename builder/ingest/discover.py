"""Find the files to ingest under the paths given on the command line.

Folders are walked recursively in sorted order, without following symlinked folders. Hidden
files and folders (name starting with ".") and files with an unsupported extension are skipped
and counted, so `golden ingest samples/` ignores `samples/features.toml`. So is anything with a
supported extension that is not a regular file (a FIFO, a socket, a device): it is never
opened, since reading a FIFO would wait forever. (A file that cannot be stat'ed, such as a
broken symlink, is kept, so that reading it fails with a message naming it.) A path named on
the command line must be a regular file or a folder. `--include` /
`--exclude` globs are matched against the path relative to the folder given (`*` also matches
"/"; a pattern without "/" also matches the file name alone; `--exclude` also matches a
folder, e.g. `--exclude drafts`). They apply to files found in folders; a file named on the
command line is always taken (it must have a supported extension).

The document id of a file is its path relative to the folder given, in POSIX form (for a file
named directly: its file name), so ingesting `kb/` twice gives the same ids from any working
directory.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from builder.errors import InputError
from builder.ingest.loaders import FORMATS


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute
    doc_id: str
    display: str
    format: str


@dataclass
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    roots: list[Path] = field(default_factory=list)  # absolute folders walked
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count


def _matches(rel: str, pattern: str, *, folders: bool) -> bool:
    if fnmatchcase(rel, pattern) or (pattern.startswith("**/") and fnmatchcase(rel, pattern[3:])):
        return True
    parts = PurePosixPath(rel).parts
    if "/" not in pattern and fnmatchcase(parts[-1], pattern):
        return True
    if folders:
        for k in range(1, len(parts)):
            folder = "/".join(parts[:k])
            if fnmatchcase(folder, pattern.rstrip("/")) or (
                    "/" not in pattern and fnmatchcase(parts[k - 1], pattern.rstrip("/"))):
                return True
    return False


def discover(paths: list[str], include: tuple[str, ...] = (),
             exclude: tuple[str, ...] = ()) -> Discovery:
    """Files to ingest, in a stable order, with what was skipped and why."""
    found = Discovery()
    seen: set[Path] = set()

    def skip(reason: str) -> None:
        found.skipped[reason] = found.skipped.get(reason, 0) + 1

    def add(path: Path, doc_id: str, display: str, fmt: str) -> None:
        if path not in seen:
            seen.add(path)
            found.files.append(SourceFile(path, doc_id, display, fmt))

    for given in paths:
        p = Path(given)
        if not p.exists():
            raise InputError("no such file or folder", path=given)
        if not p.is_file() and not p.is_dir():
            raise InputError("not a regular file or a folder (a FIFO, socket or device?)",
                             path=given)
        if p.is_file():
            fmt = FORMATS.get(p.suffix.lower())
            if fmt is None:
                raise InputError(f"unsupported file type {p.suffix or '(none)'!r}; expected one "
                                 f"of {', '.join(sorted(FORMATS))}", path=given)
            add(p.resolve(), p.name, given, fmt)
            continue
        root = p.resolve()
        found.roots.append(root)
        for dirpath, dirnames, filenames in os.walk(root):
            hidden = [d for d in dirnames if d.startswith(".")]
            for _ in hidden:
                skip("hidden")
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if name.startswith("."):
                    skip("hidden")
                    continue
                full = Path(dirpath, name)
                rel = full.relative_to(root).as_posix()
                fmt = FORMATS.get(full.suffix.lower())
                if fmt is None:
                    skip("unsupported type")
                    continue
                if include and not any(_matches(rel, g, folders=False) for g in include):
                    skip("not included")
                    continue
                if any(_matches(rel, g, folders=True) for g in exclude):
                    skip("excluded")
                    continue
                if not _is_regular(full):
                    skip("not a regular file")
                    continue
                add(full, rel, str(Path(given, rel)), fmt)
    return found


def _is_regular(path: Path) -> bool:
    """A regular file through any symlink, or a path that cannot be stat'ed; never opens it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True
