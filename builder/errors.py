"""Project exceptions. The CLI turns each into one line on stderr and an exit code.

Raise `InputError` for anything the user can fix in their input or command line (exit 2),
`JobError` when a job ran and failed (exit 1). Messages name the file (and line) involved
and must never contain secrets.
"""

from __future__ import annotations


class GoldenError(Exception):
    """Base class: a failure with a message a user can act on, optionally naming the file
    (and line) it is about: "path:line: message"."""

    exit_code = 1

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{message}")
        self.path = path
        self.line = line


class InputError(GoldenError):
    """Bad input or usage: a file that cannot be read, a malformed line, a bad option."""

    exit_code = 2


class ReviewError(InputError):
    """A review action or filter that cannot apply (unknown candidate, bad reason, bad value)."""


class JobStopped(GoldenError):
    """Not a failure: the job stopped where it was asked to, with a message saying what to do
    next (exit 0; the CLI prints it without "error:"). `--batch` raises it after writing the
    requests a batch engine is to run."""

    exit_code = 0


class JobError(GoldenError):
    """A job ran but could not finish (endpoint unreachable, budget exhausted before any work...)."""

    exit_code = 1
