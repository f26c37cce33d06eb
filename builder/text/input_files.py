"""Opening a file a user hands golden as input: the one check every input reader goes through.

Why one place: reading a FIFO waits for a writer that never comes, so a command given one
(`score --run`, `compare`, `batch import`...) hung forever, while `ingest` and `logs import`
refused it, each with its own check. Every reader of a user's file now opens it here:

- a missing path, a folder, and anything that is not a regular file (a FIFO, a socket, a
  device) is an `InputError` naming the path (exit 2), and is never waited on: the file is
  opened non-blocking and checked with `fstat` on the open descriptor, so a path swapped for a
  FIFO between the check and the open is refused too;
- an OS error while opening or reading (permissions, I/O) is an `InputError` naming the path;
- text that is not UTF-8 is an `InputError` naming the line of the first bad byte
  (`decode_text`).

Symlinks are followed: a link to a regular file is a regular file.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from builder.errors import InputError

try:
    import fcntl
except ImportError:  # not POSIX: no FIFOs to guard against, no O_NONBLOCK to clear
    fcntl = None  # type: ignore[assignment]

def special_kind(mode: int) -> str | None:
    """"a FIFO", "a socket", "a device" for a file mode that is none of a regular file or a
    folder; None for those two."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def is_special(path: str | Path) -> bool:
    """True when `path` exists (through any symlink) and is neither a regular file nor a
    folder, so must never be opened. A path that cannot be stat'ed is not special: opening it
    fails with a message naming it."""
    try:
        return special_kind(os.stat(path).st_mode) is not None
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def reading(path: str | Path, shown: str | None = None) -> Iterator[None]:
    """Turn the OS's errors while opening or reading `path` into one-line InputErrors naming
    it (as `shown`, when the user wrote it otherwise)."""
    name = shown if shown is not None else str(path)
    try:
        yield
    except FileNotFoundError:
        raise InputError("file not found", path=name) from None
    except IsADirectoryError:
        raise InputError("is a folder, expected a file", path=name) from None
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", path=name) from None


def open_input(path: str | Path, shown: str | None = None) -> BinaryIO:
    """`path` opened for reading in binary, after the checks of the module docstring."""
    with reading(path, shown):
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError
            kind = special_kind(mode)
            if kind is not None:
                raise InputError(f"not a regular file ({kind}); golden reads only regular files",
                                 path=shown if shown is not None else str(path))
            if fcntl is not None:
                flags = fcntl.fcntl(fd, fcntl.F_GETFL)
                fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise


def read_input_bytes(path: str | Path, shown: str | None = None) -> bytes:
    """The whole file (see `open_input`)."""
    with reading(path, shown), open_input(path, shown) as handle:
        return handle.read()


def decode_text(data: bytes, path: str | Path) -> str:
    """`data` as UTF-8 text, a byte-order mark dropped. Bytes that are not UTF-8 are an
    InputError naming the line and the byte within it."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start - line_start + 1} "
                         "of the line)", path=str(path),
                         line=data.count(b"\n", 0, exc.start) + 1) from None


def input_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """The file's non-blank lines as UTF-8 text with 1-based numbers, streamed (see
    `open_input`); a byte-order mark is dropped, and a line that is not UTF-8 is an InputError
    naming it. Lines end at "\\n" only: a U+2028 inside a JSON string does not split its line."""
    with reading(path), open_input(path) as handle:
        for n, raw in enumerate(handle, 1):
            if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start + 1} of "
                                 "the line)", path=str(path), line=n) from None
            if line.strip():
                yield n, line


def read_input_text(path: str | Path) -> str:
    """The file's UTF-8 text (see `open_input` and `decode_text`)."""
    return decode_text(read_input_bytes(path), path)
