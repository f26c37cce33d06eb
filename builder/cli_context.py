"""What every `golden` subcommand receives from the command group (`click.pass_obj`): the
database it works on.

Its own module so that the command modules (`ingest/commands.py`, `stats.py`,
`review/commands.py`, ...) depend on it and not on `builder.cli`: the entry point sits above
the areas it dispatches to and nothing below imports it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass
class CliContext:
    """What every subcommand gets through `click.pass_obj`."""

    db_path: str

    def open_store(self, *, create: bool = False):
        """Open (and migrate) the database. Only commands that fill it (`ingest`, `demo`,
        `score`) may create a new file; the others say plainly that there is none yet."""
        from builder.errors import InputError
        from builder.store import Store

        if not create and self.db_path != ":memory:" and not os.path.exists(self.db_path):
            raise InputError("no golden database here yet; run `golden ingest` first "
                             "(or pass --db / set GOLDEN_DB)", path=self.db_path)
        return Store(self.db_path)
