"""The SQLite store: the only package that writes SQL.

`Store` opens and migrates a database file; the modules beside it hold the functions each part
of golden calls (`documents`, `candidates`, `review_queue`, `review_log`, `calibration`,
`llm_calls`, `runs`). Everything outside this package goes through those functions.
"""

from builder.store.db import Store
from builder.store.timeutil import utcnow

__all__ = ["Store", "utcnow"]
