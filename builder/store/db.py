"""Opening the SQLite store: WAL, busy timeout, migrations, and write transactions.

Every process (generator, each review UI, scorer) opens its own `Store`. Concurrency rules,
measured on a 2-core machine with 2 writer processes x 500 transactions and 1 reader (WAL,
busy_timeout 5 s):

- WAL journal + `busy_timeout`, so readers never block writers and writers queue briefly.
- Every read-modify-write runs inside `Store.write()`, which is `BEGIN IMMEDIATE`: 0 lock errors
  in that test. A deferred `BEGIN` followed by SELECT then UPDATE fails with "database is
  locked" at once when another process writes, and busy_timeout does not help there (one
  writer lost all 500 of its transactions in 5 of 6 runs).
- `synchronous=NORMAL`: 5-21k transactions/s, against 0.5-4.7k with FULL (and stalls up to
  735 ms); WAL keeps the database consistent on a crash either way, a power cut may lose the
  last transactions. A new, empty file is switched to WAL unsynced: nothing is in it to lose.
- The connection runs in autocommit mode (`isolation_level=None`) so Python never opens a
  deferred transaction behind our back; sqlite-utils' own writes nest inside ours as savepoints.

Storage faults are one line naming the file, never a traceback (`storage_error`, also used by
the CLI for anything that escapes): a read-only file or folder, a full disk, an I/O error (the
transaction is rolled back, so nothing is half-written: exit 1), a file that is not a golden
database (exit 2), and a database written by a newer golden, refused on open, before anything
is written, naming its schema version and this golden's.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from builder import __version__
from builder.errors import GoldenError, InputError, JobError
from builder.store.review_overlap import register_functions

if TYPE_CHECKING:
    import sqlite_utils

BUSY_TIMEOUT_MS = 30_000
SCHEMA = ("m001_documents_and_chunks", "m002_generation_review_llm_runs", "m003_review_indexes",
          "m004_review_search_and_counts", "m005_fact_cells", "m006_review_team",
          "m007_production_logs", "m008_batch_requests", "m009_judge_calibration",
          "m010_run_item_metrics", "m011_candidate_parts")
"""The names of builder/store/migrations.py's migrations, in order (a test keeps the two
equal). A file that has applied exactly these is current: opening it then skips importing the
migration machinery (sqlite-utils, which imports numpy when present: 0.1-0.3 s of every
command's start, and of the review UI's first frame)."""


def _is_current(conn: sqlite3.Connection) -> bool:
    if conn.execute("PRAGMA user_version").fetchone()[0] != len(SCHEMA):
        return False
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name ="
                        " '_sqlite_migrations'").fetchone():
        return False
    return tuple(r[0] for r in conn.execute(
        "SELECT name FROM _sqlite_migrations WHERE migration_set = 'golden' ORDER BY rowid"
    )) == SCHEMA


def _refuse_foreign(conn: sqlite3.Connection, path: str | Path) -> None:
    """Another application's SQLite file (tables, but none of golden's migration records) is
    an input error: migrating it would add golden's tables to someone else's database."""
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    ours = "_sqlite_migrations" in tables and conn.execute(
        "SELECT 1 FROM _sqlite_migrations WHERE migration_set = 'golden' LIMIT 1").fetchone()
    if tables and not ours:
        conn.close()
        shown = ", ".join(tables[:3]) + (", ..." if len(tables) > 3 else "")
        raise InputError(f"not a golden database (it holds other tables: {shown})",
                         path=str(path))


def storage_error(exc: BaseException, path: str | Path) -> GoldenError | None:
    """The one-line error for a storage fault of the database at `path` (None: not one)."""
    where = str(path)
    if isinstance(exc, sqlite3.Error):
        name = getattr(exc, "sqlite_errorname", "") or ""
        text = str(exc)
        if name.startswith("SQLITE_READONLY") or "readonly" in text:
            return JobError(f"the database is read-only ({text}); golden writes to it on every "
                            f"command: make the file and its folder writable", path=where)
        if name.startswith("SQLITE_FULL") or "disk is full" in text:
            return JobError(f"disk full ({text}); the write in progress was rolled back, "
                            f"nothing is half-written: free some space and run the command "
                            f"again", path=where)
        if name.startswith("SQLITE_CANTOPEN") or "unable to open" in text:
            return JobError(f"cannot open the database ({text}); golden needs to read and "
                            f"write the file and to create its -wal and -shm files beside it",
                            path=where)
        if name.startswith("SQLITE_IOERR") or "disk I/O error" in text:
            return JobError(f"I/O error ({text}): the disk may be full or failing; the write "
                            f"in progress was rolled back", path=where)
        if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
            return InputError(f"not a golden database ({text})", path=where)
        if name.startswith("SQLITE_BUSY") or "locked" in text:
            return JobError(f"the database stayed locked by another process ({text})",
                            path=where)
        return None
    if isinstance(exc, OSError):
        return JobError(exc.strerror or str(exc), path=exc.filename or where)
    return None


def _refuse_newer(conn: sqlite3.Connection, path: str | Path) -> None:
    """A database migrated by a newer golden (a migration this golden does not know, or a
    higher schema version) is refused before anything is written: an older golden would
    misread it, and migrating it backwards is not possible."""
    stored = conn.execute("PRAGMA user_version").fetchone()[0]
    has_log = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                           "'_sqlite_migrations'").fetchone()
    applied = [r[0] for r in conn.execute(
        "SELECT name FROM _sqlite_migrations WHERE migration_set = 'golden' ORDER BY rowid")
    ] if has_log else []
    known = SCHEMA  # equal to the migrations' names (a test keeps them so)
    unknown = [name for name in applied if name not in known]
    if not unknown and stored <= len(known):
        return
    conn.close()
    theirs = max(stored, len(applied))
    extra = f" (migrations unknown here: {', '.join(unknown[:3])})" if unknown else ""
    raise JobError(f"written by a newer golden: database schema version {theirs}{extra}; this "
                   f"golden {__version__} reads schema version {len(known)} or older. Upgrade "
                   f"golden to use this database", path=str(path))


class Store:
    """One SQLite database file, migrated to the current schema on open.

    Not thread-safe: give each thread its own `Store` (Textual workers open their own).
    """

    def __init__(self, path: str | Path, *, migrate: bool = True, snapshot: bool = True):
        """Open (creating it when missing) and migrate the file. A new, empty file gets the
        current schema from `schema.sql` in one transaction (`schema.py`) unless `snapshot` is
        False; any other file not yet current is migrated step by step."""
        self.path = Path(path)
        if str(path) != ":memory:":
            parent = self.path.resolve().parent
            if not parent.is_dir():
                raise InputError("folder does not exist", path=str(parent))
            if self.path.exists() and not os.access(self.path, os.W_OK):
                raise JobError("the database is read-only; golden writes to it on every "
                               "command: make the file writable", path=str(path))
        try:
            conn = sqlite3.connect(
                str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            register_functions(conn)
            _refuse_foreign(conn, path)  # before WAL: that pragma alone would change the file
            current = _is_current(conn)
            if not current:
                _refuse_newer(conn, path)
            if conn.execute("PRAGMA page_count").fetchone()[0] == 0:
                # A new, empty file: switching it to WAL writes its first page through a
                # rollback journal, 3-4 fsyncs (12-20 ms here) on every first `golden score`
                # in a folder. Nothing is in the file for a crash to lose, so that one write
                # goes unsynced; every transaction after it runs with synchronous=NORMAL.
                conn.execute("PRAGMA synchronous=OFF")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.DatabaseError as exc:
            fault = storage_error(exc, path)
            if fault is not None and not isinstance(fault, InputError):
                raise fault from exc
            raise InputError(f"not a golden database ({exc})", path=str(path)) from exc
        self.conn = conn
        self._db: sqlite_utils.Database | None = None
        self._lock = threading.RLock()
        if migrate and not current and snapshot and not conn.execute(
                "SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
            from builder.store.schema import create_from_snapshot

            try:
                current = create_from_snapshot(conn, SCHEMA)
            except sqlite3.Error as exc:
                conn.close()
                fault = storage_error(exc, path)
                if fault is None:
                    raise
                raise fault from exc
        if migrate and not current:
            from builder.store.migrations import apply_migrations

            try:
                apply_migrations(self)
            except JobError:
                conn.close()
                raise

    @property
    def db(self) -> sqlite_utils.Database:
        """sqlite-utils' view of this connection, made on first use (its import is slow)."""
        if self._db is None:
            import sqlite_utils

            self._db = sqlite_utils.Database(self.conn)
        return self._db

    @contextlib.contextmanager
    def write(self) -> Iterator[Any]:
        """A write transaction taken with BEGIN IMMEDIATE; commits on success, rolls back on error.
        Yields the sqlite-utils Database (`db[table].insert_all(...)`), made only if used.

        Nested calls join the outer transaction (as a savepoint), so a function that writes can
        be called alone or as part of a larger all-or-nothing unit.
        """
        with self._lock:
            if self.conn.in_transaction:
                self.conn.execute("SAVEPOINT golden_nested")
                try:
                    yield _LazyDatabase(self)
                except BaseException:
                    if self.conn.in_transaction:  # SQLite may have rolled it all back
                        with contextlib.suppress(sqlite3.Error):
                            self.conn.execute("ROLLBACK TO golden_nested")
                            self.conn.execute("RELEASE golden_nested")
                    raise
                self.conn.execute("RELEASE golden_nested")
                return
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                try:
                    yield _LazyDatabase(self)
                except BaseException:
                    if self.conn.in_transaction:
                        self.conn.execute("ROLLBACK")
                    raise
                else:
                    self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                fault = storage_error(exc, self.path)
                if fault is None:
                    raise
                if self.conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self.conn.execute("ROLLBACK")
                raise fault from exc

    @contextlib.contextmanager
    def waiting_at_most(self, seconds: float) -> Iterator[None]:
        """Inside: a lock held by another process is waited for `seconds` at most (then the
        write fails with the usual "stayed locked" JobError) instead of BUSY_TIMEOUT_MS. For a
        caller that has a slower way round a busy database, such as the review UI's first
        claim (it falls back to its writer thread)."""
        self.conn.execute(f"PRAGMA busy_timeout={int(seconds * 1000)}")
        try:
            yield
        finally:
            self.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")

    def query(self, sql: str, params: tuple | list | dict = ()) -> list[dict]:
        """Run a read query and return rows as dicts (all rows: callers page with LIMIT)."""
        cur = self.conn.execute(sql, params)
        cols = [c[0] for c in cur.description]
        return [dict(zip(cols, row)) for row in cur.fetchall()]

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _LazyDatabase:
    """What `Store.write()` yields: the store's sqlite-utils Database, made on first use."""

    def __init__(self, store: Store):
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store.db, name)

    def __getitem__(self, table: str) -> Any:
        return self._store.db[table]
