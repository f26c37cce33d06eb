"""Find the files to ingest under the paths given on the command line.

Folders are walked recursively in sorted order, without following symlinked folders. Hidden
files and folders (name starting with ".") and files with an unsupported extension are skipped
and counted, so `golden ingest samples/` ignores `samples/features.toml`. So is anything with a
supported extension that is not a regular file (a FIFO, a socket, a device): it is never
opened, since reading a FIFO would wait forever (`builder.text.input_files`, the check every
reader of a user's file goes through). (A file that cannot be stat'ed, such as a broken
symlink, is kept, so that reading it fails with a message naming it.) A path named on the
command line must be a regular file or a folder.

A folder that cannot be read (no permission) is an input error naming it (exit 2), on a
first ingest as on a re-ingest: skipping it would silently leave its files out (or, on a
re-ingest, look as if they had been deleted). A file or folder whose name is not valid UTF-8
(`caf\\xe9.md` from an old archive) cannot be stored or shown as text: it is skipped with a
warning naming it, escaped, and counted ("name not UTF-8"); named on the command line, it is
an input error.

`--include` / `--exclude` globs are matched against the path relative to the folder given
(`*` also matches "/"; a pattern without "/" also matches the file name alone; `--exclude`
also matches a folder, e.g. `--exclude drafts`). They apply to files found in folders; a file
named on the command line is always taken (it must have a supported extension).

The document id of a file is its path relative to the folder given, in POSIX form (for a file
named directly: its file name), so ingesting `kb/` twice gives the same ids from any working
directory.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from builder.errors import InputError
from builder.ingest.loaders import FORMATS
from builder.text.input_files import is_special


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
    warnings: list[str] = field(default_factory=list)


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
        if not _utf8(given):
            raise InputError("the path is not valid UTF-8; rename it to ingest it",
                             path=escaped(given))
        try:
            exists = p.exists()
        except OSError as exc:
            raise InputError(f"cannot read ({exc.strerror or exc})", path=given) from None
        if not exists:
            raise InputError("no such file or folder", path=given)
        if is_special(p):
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
        if not _utf8(str(root)):
            raise InputError("the folder's full path is not valid UTF-8; move or rename it",
                             path=escaped(str(root)))
        found.roots.append(root)
        for dirpath, dirnames, filenames in os.walk(root, onerror=_refuse(root, given)):
            keep = []
            for d in sorted(dirnames):
                if d.startswith("."):
                    skip("hidden")
                elif not _utf8(d):
                    skip("name not UTF-8")
                    found.warnings.append(_bad_name(Path(given, Path(dirpath, d).relative_to(root))))
                else:
                    keep.append(d)
            dirnames[:] = keep
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
                if not _utf8(name):
                    skip("name not UTF-8")
                    found.warnings.append(_bad_name(Path(given, rel)))
                    continue
                if include and not any(_matches(rel, g, folders=False) for g in include):
                    skip("not included")
                    continue
                if any(_matches(rel, g, folders=True) for g in exclude):
                    skip("excluded")
                    continue
                if is_special(full):
                    skip("not a regular file")
                    continue
                add(full, rel, str(Path(given, rel)), fmt)
    return found


def _refuse(root: Path, given: str) -> Callable[[OSError], None]:
    """`os.walk`'s error callback: a folder it cannot list is an InputError naming it."""

    def unreadable(exc: OSError) -> None:
        folder = Path(exc.filename or root)
        shown = given if folder == root else str(Path(given, folder.relative_to(root)))
        raise InputError(f"cannot read this folder ({exc.strerror or exc})", path=shown)

    return unreadable


def _utf8(name: str) -> bool:
    """False for a name holding bytes that are not UTF-8 (Python keeps them as lone
    surrogates, which SQLite, JSON and the terminal all refuse)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escaped(name: str | Path) -> str:
    """A name that may hold bytes that are not UTF-8, printable: those bytes as `\\xNN`."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _bad_name(path: Path) -> str:
    return f"{escaped(path)}: skipped: its name is not valid UTF-8; rename it to ingest it"
