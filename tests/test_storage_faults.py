"""Storage faults for every command (issue 14): a read-only database, a database written by a
newer golden, a full disk (a real 1 MB tmpfs), an unwritable output folder. Each is one line on
stderr naming the path, exit 1, no traceback, and nothing half-written.

Read-only and full file systems are made with real mounts when the suite runs as root (CI and
the dev machines do); as another user, a read-only folder is made with chmod instead, and the
tmpfs tests are skipped. A full disk is also simulated portably with SQLite's max_page_count.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from builder import __version__
from builder.cli import main
from builder.errors import JobError
from builder.store import Store
from builder.store.documents import save_document
from builder.store.migrations import known_migrations
from tests.support.rows import add_candidates
from tests.stub_endpoint import StubEndpoint

KB_PAGE = "# Returns\n\nItems can be returned within {n} days with the receipt.\n"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> dict[str, Path]:
    """A database that has been through every stage (ingest, candidates, export, baseline
    run, scored run), plus the files the commands read."""
    root = tmp_path_factory.mktemp("template")
    kb = root / "kb"
    kb.mkdir()
    for n in range(3):
        (kb / f"page{n}.md").write_text(KB_PAGE.format(n=30 + n), encoding="utf-8")
    db = root / "golden.db"
    files = {"root": root, "kb": kb, "db": db, "golden": root / "golden.jsonl",
             "run": root / "run.jsonl", "report": root / "report.json"}
    with pytest.raises(SystemExit):
        main(["--db", str(db), "ingest", str(kb)])
    with Store(db) as store:
        chunk_ids = [r["id"] for r in store.query("SELECT id FROM chunks ORDER BY id")]
        add_candidates(store, 300, chunk_ids=chunk_ids, status="accepted")
    for args in (["export", "--out", str(files["golden"])],
                 ["baseline-run", "--golden", str(files["golden"]), "--out", str(files["run"])],
                 ["score", "--golden", str(files["golden"]), "--run", str(files["run"]),
                  "--no-judge", "--out", str(files["report"])]):
        with pytest.raises(SystemExit) as done:
            main(["--db", str(db), *args])
        assert done.value.code == 0, args
    scores = root / "scores.jsonl"
    scores.write_text(json.dumps({"query_id": json.loads(
        files["golden"].read_text().splitlines()[0])["id"], "metric": "correctness",
        "score": 4}) + "\n", encoding="utf-8")
    files["scores"] = scores
    return files


def command_lines(t: dict[str, Path], out_dir: Path) -> dict[str, list[str]]:
    """Every command that opens the database, with arguments that make it do real work."""
    return {
        "ingest": ["ingest", str(t["kb"])],
        "stats": ["stats"],
        "generate": ["generate", "--n", "2", "--base-url", "http://127.0.0.1:9/v1",
                     "--model", "m"],
        "review": ["review"],
        "export": ["export", "--out", str(out_dir / "out.jsonl")],
        "score": ["score", "--golden", str(t["golden"]), "--run", str(t["run"]), "--no-judge"],
        "calibrate": ["calibrate", "--import", str(t["scores"])],
        "baseline-run": ["baseline-run", "--golden", str(t["golden"]), "--out",
                         str(out_dir / "run2.jsonl")],
        "demo": ["demo", "--n", "1"],
    }


def assert_one_line(err: str, *needles: str) -> None:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("golden: error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


# -- mounts -----------------------------------------------------------------------------------

def _mount(target: Path, options: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)],
                          capture_output=True)
    return done.returncode == 0


def _unmount(target: Path) -> None:
    subprocess.run(["umount", "-l", str(target)], capture_output=True)


@contextlib.contextmanager
def read_only_folder(base: Path, files: list[Path]):
    """A folder holding copies of `files` that nobody may write to: a tmpfs remounted
    read-only as root, else a chmod'ed folder (root ignores chmod, hence the mount)."""
    folder = base / "ro"
    folder.mkdir()
    if _mount(folder, "size=8m"):
        try:
            for f in files:
                shutil.copy(f, folder / f.name)
            subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True,
                           capture_output=True)
            yield folder
        finally:
            _unmount(folder)
        return
    if os.geteuid() == 0:
        pytest.skip("running as root without permission to mount a tmpfs")
    for f in files:
        shutil.copy(f, folder / f.name)
        (folder / f.name).chmod(0o444)
    folder.chmod(0o555)
    try:
        yield folder
    finally:
        folder.chmod(0o755)


@contextlib.contextmanager
def full_disk(base: Path, files: list[Path], free: int):
    """A 1 MB tmpfs holding copies of `files`, filled up to `free` bytes left."""
    folder = base / "full"
    folder.mkdir()
    if not _mount(folder, "size=1m"):
        pytest.skip("a 1 MB tmpfs needs root and permission to mount")
    try:
        for f in files:
            shutil.copy(f, folder / f.name)
        left = shutil.disk_usage(folder).free - free
        if left > 0:
            (folder / "filler").write_bytes(b"\0" * left)
        yield folder
    finally:
        _unmount(folder)


# -- read-only database -----------------------------------------------------------------------

def test_a_read_only_database_is_reported_as_read_only_by_every_command(template, tmp_path,
                                                                         golden_cli):
    with read_only_folder(tmp_path, [template["db"]]) as folder:
        db = folder / "golden.db"
        before = digest(db)
        for name, args in command_lines(template, tmp_path).items():
            code, _, err = golden_cli("--db", str(db), *args)
            assert code == 1, (name, err)
            assert_one_line(err, str(db), "read-only")
            assert "not a golden database" not in err
        assert digest(db) == before
        assert sorted(p.name for p in folder.iterdir()) == ["golden.db"]


# -- a database from a newer golden -----------------------------------------------------------

@pytest.mark.parametrize("how", ["unknown migration", "higher schema version"])
def test_a_database_from_a_newer_golden_is_refused_before_anything_is_written(
        template, tmp_path, golden_cli, how):
    db = tmp_path / "newer.db"
    shutil.copy(template["db"], db)
    ours = len(known_migrations())
    conn = sqlite3.connect(db)
    if how == "unknown migration":
        conn.execute("INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES "
                     "('golden', 'm099_from_the_future', '2030-01-01')")
        theirs = ours + 1
    else:
        theirs = ours + 3
    conn.execute(f"PRAGMA user_version = {theirs}")
    conn.commit()
    conn.execute("PRAGMA journal_mode=DELETE")  # one file: nothing beside it to compare
    conn.close()
    before = digest(db)
    for name, args in command_lines(template, tmp_path).items():
        code, _, err = golden_cli("--db", str(db), *args)
        assert code == 1, (name, err)
        assert_one_line(err, str(db), "newer golden", f"schema version {theirs}",
                        f"golden {__version__} reads schema version {ours}")
        assert digest(db) == before, name
        assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists(), name
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "run2.jsonl").exists()


def test_this_goldens_database_records_its_schema_version(tmp_path):
    with Store(tmp_path / "g.db") as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == len(known_migrations())


# -- disk full --------------------------------------------------------------------------------

def _counts(db: Path) -> tuple:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return tuple(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                     for t in ("documents", "chunks", "candidates", "runs", "llm_calls"))
    finally:
        conn.close()


def test_disk_full_is_one_line_and_leaves_the_database_whole(template, tmp_path, golden_cli):
    """On a 1 MB tmpfs with ~48 KB left: each command either works or stops with one line
    naming the database or output file; the database stays whole (the failed transaction is
    rolled back) and no output file is left half-written."""
    big = tmp_path / "bigkb"
    big.mkdir()
    words = " ".join(f"word{k}" for k in range(4000))
    for n in range(30):
        (big / f"doc{n}.md").write_text(f"# Doc {n}\n\n{words}\n", encoding="utf-8")
    with full_disk(tmp_path, [template["db"]], free=48_000) as folder:
        db = folder / "golden.db"
        before = _counts(db)
        lines = command_lines(template, folder)
        lines["ingest"] = ["ingest", str(big)]
        lines["score"] += ["--out", str(folder / "report.html")]
        failed = {}
        with StubEndpoint(seed=1) as stub:
            lines["generate"] = ["generate", "--n", "4", "--base-url", stub.url, "--model",
                                 "stub-model"]
            for name in ("ingest", "stats", "generate", "export", "score", "calibrate",
                         "baseline-run"):
                code, _, err = golden_cli("--db", str(db), *lines[name])
                assert code in (0, 1), (name, err)
                if code == 1:
                    assert_one_line(err)
                    assert str(folder) in err and ("disk full" in err or "No space" in err
                                                   or "I/O error" in err), (name, err)
                    failed[name] = err
                assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")], name
        (folder / "filler").unlink()  # reading a WAL database needs room for its -shm file
        after = _counts(db)
    assert "ingest" in failed and after[:2] == before[:2]  # no half-ingested document
    assert {"export", "baseline-run"} & set(failed), failed  # outputs larger than the space


def test_a_full_disk_mid_transaction_rolls_back_with_one_line(tmp_path):
    """Portable (no mount): SQLite's page limit makes the write fail as a full disk does."""
    with Store(tmp_path / "g.db") as store:
        store.conn.execute("PRAGMA max_page_count = 60")
        doc = {"id": "big.md", "path": "big.md", "format": "markdown", "content_hash": "h",
               "n_chars": 1, "n_tokens": 1}
        chunks = [{"id": f"big.md#{k}", "seq": k, "text": "x " * 2000, "n_tokens": 2000}
                  for k in range(200)]
        with pytest.raises(JobError, match=r"g\.db: disk full"):
            save_document(store, doc, chunks)
        assert store.query("SELECT COUNT(*) AS n FROM chunks") == [{"n": 0}]
        assert store.query("SELECT COUNT(*) AS n FROM documents") == [{"n": 0}]


def test_a_full_disk_under_generate_batch_names_the_folder_and_leaves_no_staging_files(
        tmp_path, golden_cli):
    """`generate --batch DIR` with DIR on a full disk (the database elsewhere): one line naming
    the folder, not the database, and no `.staging-*` file left behind (the last flush fails
    on close: the temporary files are deleted all the same). With room, the same command
    stages the requests."""
    from tests.support.scripted_kb import build_kb

    db = tmp_path / "g.db"
    build_kb(db).close()
    with full_disk(tmp_path, [], free=6000) as folder:
        jobs = folder / "jobs"
        args = ["--db", str(db), "generate", "--n", "6", "--base-url", "http://127.0.0.1:9/v1",
                "--model", "stub-model", "--batch", str(jobs)]
        code, _, err = golden_cli(*args)
        errors = [line for line in err.splitlines() if not line.startswith("golden: facts:")]
        assert code == 1, err
        assert_one_line("\n".join(errors), f"{jobs}: No space left on device")
        assert str(db) not in err
        assert [p.name for p in jobs.iterdir()] == []  # no .staging-* file, no manifest
        with Store(db) as store:
            assert store.query("SELECT count(*) AS n FROM batch_requests") == [{"n": 0}]
        (folder / "filler").unlink()
        code, _, err = golden_cli(*args)
        assert code == 0, err
        assert [p.name for p in jobs.iterdir() if p.name.startswith(".staging-")] == []
        assert any(p.name.startswith("requests-r001-") for p in jobs.iterdir())


# -- unwritable output folder -----------------------------------------------------------------

def test_an_unwritable_output_folder_is_one_line_naming_the_file(template, tmp_path, golden_cli):
    with read_only_folder(tmp_path, []) as folder:
        db = tmp_path / "golden.db"
        shutil.copy(template["db"], db)
        before = _counts(db)
        outputs = {
            "export": ["export", "--out", str(folder / "golden.jsonl")],
            "baseline-run": ["baseline-run", "--golden", str(template["golden"]), "--out",
                             str(folder / "run.jsonl")],
            "score": ["score", "--golden", str(template["golden"]), "--run",
                      str(template["run"]), "--no-judge", "--out", str(folder / "r.html")],
            "compare": ["compare", str(template["report"]), str(template["report"]), "--out",
                        str(folder / "diff.md")],
        }
        for name, args in outputs.items():
            code, _, err = golden_cli("--db", str(db), *args)
            assert code == 1, (name, err)
            assert_one_line(err, str(folder / args[args.index("--out") + 1].split("/")[-1]),
                            "cannot write")
            assert list(folder.iterdir()) == [], name
        assert _counts(db)[:3] == before[:3]
