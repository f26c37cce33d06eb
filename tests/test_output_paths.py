"""Every command that writes a file the user names treats its path alike (issue 33): a missing
folder is created (as `--batch DIR` creates its folder), a file in the way of the folder or a
folder given as the file is refused before any work (one line, exit 2), and a folder that
cannot be made while writing is one line, exit 1, with nothing written and no folder left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.export import atomic
from builder.store.review_log import record_decision
from tests.support.rows import accepted_candidate, export_store, insert_rows
from tests.support.scoring import GOLDEN, RUN, write_jsonl

LOG_LINE = {"id": "a", "timestamp": "2025-03-01T00:00:00Z", "query": "Q?", "answer": "A."}


@pytest.fixture
def work(tmp_path, golden_cli) -> Path:
    """A database with chunks, accepted candidates, a decision and a production log; a golden
    file, a run file and a score report beside it."""
    db = tmp_path / "g.db"
    store = export_store(db)
    insert_rows(store, "candidates", [accepted_candidate("c1"), accepted_candidate("c2")])
    record_decision(store, "c1", "ann", "accept")
    store.close()
    write_jsonl(tmp_path / "golden.jsonl", GOLDEN)
    write_jsonl(tmp_path / "run.jsonl", RUN)
    write_jsonl(tmp_path / "logs.jsonl", [LOG_LINE])
    assert golden_cli("--db", str(db), "logs", "import", str(tmp_path / "logs.jsonl"))[0] == 0
    code, _, err = golden_cli("--db", str(db), "score", *_score_inputs(tmp_path),
                              "--out", str(tmp_path / "base.json"))
    assert code == 0, err
    return tmp_path


def _score_inputs(work: Path) -> list[str]:
    return ["--golden", str(work / "golden.jsonl"), "--run", str(work / "run.jsonl"),
            "--no-judge", "--no-save"]


COMMANDS = {  # command -> (arguments writing to OUT, the file name to write)
    "export": (lambda w, out: ["export", "--out", out], "golden.jsonl"),
    "score": (lambda w, out: ["score", *_score_inputs(w), "--out", out], "report.json"),
    "logs evaluate": (lambda w, out: ["logs", "evaluate", "--no-judge", "--rate", "1",
                                      "--out", out], "logs.md"),
    "compare": (lambda w, out: ["compare", str(w / "base.json"), str(w / "base.json"),
                                "--out", out], "compare.html"),
    "baseline-run": (lambda w, out: ["baseline-run", "--golden", str(w / "golden.jsonl"),
                                     "--out", out], "run.jsonl"),
    "review export-log": (lambda w, out: ["review", "export-log", out], "log.jsonl"),
}


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize("command", COMMANDS)
def test_out_into_a_missing_folder_creates_it(work, golden_cli, command):
    args, name = COMMANDS[command]
    out = work / "reports" / "2025" / name
    code, _, err = golden_cli("--db", str(work / "g.db"), *args(work, str(out)))
    assert code == 0, err
    assert out.stat().st_size > 0
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".")] == []  # no temp


@pytest.mark.parametrize("command", COMMANDS)
def test_a_file_in_the_way_of_the_folder_is_refused_before_any_work(work, golden_cli,
                                                                     command):
    args, name = COMMANDS[command]
    (work / "notes").write_text("a file, not a folder")
    before = _files(work)
    code, _, err = golden_cli("--db", str(work / "g.db"),
                              *args(work, str(work / "notes" / "sub" / name)))
    assert code == 2
    assert err.strip().splitlines() == [f"golden: error: {work / 'notes'}: is a file, not a "
                                        "folder"]
    assert _files(work) == before


@pytest.mark.parametrize("command", COMMANDS)
def test_a_folder_given_as_the_file_is_refused(work, golden_cli, command):
    args, name = COMMANDS[command]
    folder = work / "given" / name
    folder.mkdir(parents=True)
    code, _, err = golden_cli("--db", str(work / "g.db"), *args(work, str(folder)))
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "is a folder" in err or "is a directory" in err, err


@pytest.mark.parametrize("command", COMMANDS)
def test_a_folder_that_cannot_be_made_leaves_nothing(work, golden_cli, command, monkeypatch):
    """The check before the work passes (the parent is writable), then making the folder
    fails (a full disk, a permission taken away meanwhile): one line naming the folder,
    exit 1, and the folders made before the failure are removed again."""
    args, name = COMMANDS[command]
    real_mkdir = Path.mkdir

    def mkdir(self, *a, **kw):
        if self.name == "day":
            raise PermissionError(13, "Permission denied", str(self))
        return real_mkdir(self, *a, **kw)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    before = _files(work)
    code, _, err = golden_cli("--db", str(work / "g.db"),
                              *args(work, str(work / "month" / "day" / name)))
    assert code == 1
    errors = [line for line in err.splitlines() if line.startswith("golden: error:")]
    assert errors == err.strip().splitlines()[-1:] == [
        f"golden: error: {work / 'month' / 'day'}: cannot create the output's folder "
        "(Permission denied); nothing was written"]  # after progress lines, if any
    assert _files(work) == before  # `month`, made first, is gone again


def test_a_failed_write_removes_the_folders_it_made(tmp_path):
    outputs = atomic.AtomicOutputs()
    with pytest.raises(RuntimeError), outputs:
        outputs.open(tmp_path / "a" / "b" / "one.json").write(b"{}")
        (tmp_path / "a" / "keep.txt").write_text("someone else's file")
        raise RuntimeError("the job failed")
    assert _files(tmp_path) == {"a", "a/keep.txt"}  # b removed; a holds a file, so it stays


def test_a_name_too_long_is_one_line(work, golden_cli):
    code, _, err = golden_cli("--db", str(work / "g.db"), "score", *_score_inputs(work),
                              "--out", str(work / ("x" * 300) / "r.json"))
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "r.json" in err, err


def test_the_exported_files_and_manifest_land_in_the_new_folder(work, golden_cli):
    out = work / "datasets" / "v1" / "golden.jsonl"
    code, _, err = golden_cli("--db", str(work / "g.db"), "export", "--out", str(out),
                              "--split", "train=0.5,test=0.5")
    assert code == 0, err
    assert sorted(p.name for p in out.parent.iterdir()) == [
        "golden.jsonl.manifest.json", "golden.test.jsonl", "golden.train.jsonl"]
    assert json.loads((out.parent / "golden.jsonl.manifest.json").read_text())["records"] == 2
