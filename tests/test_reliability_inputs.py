"""Bad input through the real CLI: every case is one line on stderr naming the file (and line),
exit 2, and the database and output files exactly as they were -- or, where the documented
behaviour is to accept the input (invalid UTF-8, huge files, HTML with scripts, an unclosed
code fence, a BOM), exit 0 with nothing lost.

The small bad files live in tests/bad_inputs/ (named for what is wrong with them, and on which
line); binary, invalid-UTF-8 and huge files are generated in tmp_path.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from builder.cli import golden
from builder.store import Store
from tests.support.rows import add_candidates

BAD = Path(__file__).parent / "bad_inputs"


# ------------------------------------------------------------------------------- helpers

def invoke(db: Path, *args: str):
    return CliRunner().invoke(golden, ["--db", str(db), *map(str, args)], catch_exceptions=False)


def assert_input_error(result, *fragments: str, where: str | None = None) -> str:
    """Exit 2 and exactly one line on stderr, `golden: error: [where: ]...fragments`."""
    err = result.stderr
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), err
    line = lines[0]
    assert line.startswith("golden: error: "), line
    if where is not None:
        assert line.startswith(f"golden: error: {where}: "), line
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line


def db_dump(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def file_hashes(root: Path, skip: Path | None = None) -> dict[str, str]:
    """sha256 of every file under `root` (the database and its -wal/-shm excepted)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not (skip and p.name.startswith(skip.name)):
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


class Snapshot:
    """The database (as a logical dump) and every other file in the folder, to compare after."""

    def __init__(self, root: Path, db: Path):
        self.root, self.db = root, db
        self.dump = db_dump(db) if db.exists() else None
        self.files = file_hashes(root, db)

    def assert_unchanged(self) -> None:
        assert (db_dump(self.db) if self.db.exists() else None) == self.dump
        assert file_hashes(self.root, self.db) == self.files


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """Built once: the corpus copied to `in/` and a database holding the little good KB and
    12 accepted candidates (closed, so the copy below is the whole database)."""
    root = tmp_path_factory.mktemp("template")
    shutil.copytree(BAD, root / "in")
    db = root / "g.db"
    assert invoke(db, "ingest", root / "in" / "kb").exit_code == 0
    with Store(db) as store:
        add_candidates(store, 12, status="accepted")
    assert not Path(f"{db}-wal").exists()
    return root


@pytest.fixture
def work(template, tmp_path, monkeypatch):
    """A private copy of the template folder, as the working directory."""
    for item in template.iterdir():
        (shutil.copytree if item.is_dir() else shutil.copy2)(item, tmp_path / item.name)
    monkeypatch.chdir(tmp_path)  # no stray ./golden.toml; relative paths land here
    return tmp_path


def chunk_texts(db: Path, document_id: str) -> list[str]:
    with Store(db) as store:
        return [r["text"] for r in store.query(
            "SELECT text FROM chunks WHERE document_id = ? ORDER BY seq", (document_id,))]


# ------------------------------------------------------------------------------- ingest

def _binary(p: Path) -> None:
    p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))


def _utf16(p: Path) -> None:
    p.write_bytes("Returns are free.\n".encode("utf-16"))


def _empty(p: Path) -> None:
    p.write_bytes(b"")


def _blank(p: Path) -> None:
    p.write_text(" \n\n\t\n")


@pytest.mark.parametrize("name, make, message", [
    ("image.md", _binary, "binary file (NUL byte at offset 8)"),
    ("notes.txt", _utf16, "binary file"),
    ("empty.md", _empty, "file is empty"),
    ("blank.txt", _blank, "file is empty"),
])
def test_unreadable_files_are_refused_and_nothing_is_written(work, name, make, message):
    folder = work / "mixed"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nThis file alone would ingest fine.\n")
    make(folder / name)
    db = work / "g.db"
    before = Snapshot(work, db)
    assert_input_error(invoke(db, "ingest", folder), message, where=str(folder / name))
    before.assert_unchanged()  # the good file in the same folder was not written either


@pytest.mark.parametrize("name, line, message", [
    ("kb_bad_json_line3.jsonl", 3, "not valid JSON"),
    ("kb_array_line2.jsonl", 2, 'expected a JSON object with "id" and "text"'),
    ("kb_missing_text_line2.jsonl", 2, 'field "text": missing'),
    ("kb_bool_id_line1.jsonl", 1, 'field "id": must be a string or an integer'),
    ("kb_duplicate_id_line3.jsonl", 3, "duplicate chunk id 'a1' (first on line 1)"),
    ("kb_metadata_not_object_line2.jsonl", 2, 'field "metadata"'),
    ("kb_blank_text_line1.jsonl", 1, 'field "text": must not be empty'),
])
def test_bad_jsonl_lines_name_file_and_line(work, name, line, message):
    db = work / "g.db"
    before = Snapshot(work, db)
    path = work / "in" / name
    assert_input_error(invoke(db, "ingest", path), message, where=f"{path}:{line}")
    before.assert_unchanged()


def test_jsonl_without_records_and_hostile_nesting(work):
    db = work / "g.db"
    deep = work / "deep.jsonl"  # 100k nested arrays: json raises RecursionError, not ValueError
    deep.write_text('{"id": "a", "text": "t"}\n' + "[" * 100_000 + "\n")
    before = Snapshot(work, db)
    empty = work / "in" / "kb_no_records.jsonl"
    assert_input_error(invoke(db, "ingest", empty), "file is empty", where=str(empty))
    assert_input_error(invoke(db, "ingest", deep), "nested too deeply", where=f"{deep}:2")
    before.assert_unchanged()


def test_invalid_utf8_is_replaced_and_warned_not_refused(work):
    db = work / "g.db"
    path = work / "latin1.txt"
    path.write_bytes("Caf\xe9 cr\xe8me costs $4.\n\nThe second paragraph is clean.\n"
                     .encode("latin-1"))
    result = invoke(db, "ingest", path)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"golden: warning: {path}:1: invalid UTF-8; 2 bad byte sequence(s) replaced with U+FFFD"]
    text = "\n\n".join(chunk_texts(db, "latin1.txt"))
    assert "Caf\ufffd cr\ufffdme costs $4." in text and "second paragraph is clean" in text


def test_huge_file_ingests_whole(work):
    db = work / "g.db"
    path = work / "huge.txt"
    paragraphs = [f"Paragraph {i} says the part number NW-{i:06d} fits model {i % 97}."
                  for i in range(40_000)]  # ~2.6 MB
    path.write_text("\n\n".join(paragraphs))
    result = invoke(db, "ingest", path)
    assert result.exit_code == 0, result.output
    joined = "\n".join(chunk_texts(db, "huge.txt"))
    for i in (0, 1, 12_345, 39_999):  # nothing dropped, first to last
        assert f"NW-{i:06d}" in joined
    with Store(db) as store:
        (doc,) = store.query("SELECT n_chars FROM documents WHERE id = 'huge.txt'")
    assert doc["n_chars"] == len(path.read_text())


def test_html_ingests_only_visible_text(work):
    db = work / "g.db"
    result = invoke(db, "ingest", work / "in" / "scripts.html")
    assert result.exit_code == 0, result.output
    text = "\n".join(chunk_texts(db, "scripts.html"))
    assert "lifetime warranty" in text and "Claims need the original receipt." in text
    for hidden in ("document.cookie", "alert", "xss-in-script", "display: none", "steal()",
                   "NOSCRIPT-TEXT", "HIDDEN-TEXT", "TEMPLATE-TEXT", "<", "onerror"):
        assert hidden not in text, hidden
    with Store(db) as store:
        assert store.query("SELECT title FROM documents WHERE id = 'scripts.html'") == [
            {"title": "Warranty"}]
    before = Snapshot(work, db)
    only = work / "in" / "only_scripts.html"
    assert_input_error(invoke(db, "ingest", only), "no visible text", where=str(only))
    before.assert_unchanged()


def test_unclosed_code_fence_loses_no_text(work):
    db = work / "g.db"
    src = work / "in" / "unclosed_fence.md"
    result = invoke(db, "ingest", src, "--chunk-tokens", "32", "--overlap", "0")
    assert result.exit_code == 0, result.output
    chunks = chunk_texts(db, "unclosed_fence.md")
    joined = "\n".join(chunks)
    for line in src.read_text().splitlines():
        assert line.strip() in joined, line  # every line of the file is in some chunk
    assert "The end of the document is still here." in chunks[-1]


@pytest.mark.parametrize("args, message", [
    (["no-such-folder"], "no such file or folder"),
    (["in/README.md", "in/golden.jsonl", "in/config/unknown_key_line3.toml"],
     "unsupported file type '.toml'"),
    (["in/kb", "--chunk-tokens", "5"], "--chunk-tokens must be at least 16"),
    (["in/kb", "--overlap", "300"], "--overlap must be between 0 and half"),
    (["in/kb", "--chunk-tokens", "many"], "Invalid value for '--chunk-tokens'"),
])
def test_bad_ingest_arguments(work, args, message):
    db = work / "g.db"
    before = Snapshot(work, db)
    assert_input_error(invoke(db, "ingest", *args), message)
    before.assert_unchanged()


def test_database_that_is_not_a_database(work):
    not_db = work / "in" / "kb" / "returns.md"
    before = Snapshot(work, work / "g.db")
    for args in (["stats"], ["export", "--out", "x.jsonl"], ["ingest", "in/kb"]):
        assert_input_error(invoke(not_db, *args), "not a golden database", where=str(not_db))
    assert_input_error(invoke(work / "nothing.db", "stats"), "no golden database here yet")
    before.assert_unchanged()
    assert not (work / "nothing.db").exists()


def test_another_applications_sqlite_file_is_not_touched(work):
    other = work / "app.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE users (name TEXT)")
    conn.execute("INSERT INTO users VALUES ('ada')")
    conn.commit()
    conn.close()
    before = Snapshot(work, work / "g.db")
    raw = other.read_bytes()
    for args in (["stats"], ["ingest", "in/kb"], ["score", "--golden", "in/golden.jsonl",
                                                   "--run", "in/run.jsonl", "--no-judge"]):
        assert_input_error(invoke(other, *args), "not a golden database (it holds other "
                           "tables: users)", where=str(other))
    assert other.read_bytes() == raw  # not migrated, not even switched to WAL
    assert not Path(f"{other}-wal").exists()
    before.assert_unchanged()


def test_outputs_never_overwrite_inputs_or_the_database(work):
    db = work / "g.db"
    assert invoke(db, "score", "--golden", "in/golden.jsonl", "--run", "in/run.jsonl",
                  "--no-judge", "--out", "a.json").exit_code == 0
    shutil.copy(work / "in" / "golden.jsonl", work / "golden.json")
    before = Snapshot(work, db)
    cases = [
        (["baseline-run", "--golden", "in/golden.jsonl", "--out", "in/golden.jsonl"],
         "in/golden.jsonl", "would overwrite the golden file"),
        (["baseline-run", "--golden", "in/golden.jsonl", "--out", str(db)],
         str(db), "would overwrite the database"),
        (["baseline-run", "--golden", "in/golden.jsonl", "--out", f"{db}-wal"],
         f"{db}-wal", "would overwrite the database"),
        (["export", "--out", str(db)], str(db), "would overwrite the database"),
        (["score", "--golden", "golden.json", "--run", "in/run.jsonl", "--no-judge",
          "--out", "golden.json"], "golden.json", "would overwrite the golden file"),
        (["compare", "a.json", "a.json", "--out", "a.json"], "a.json",
         "would overwrite the report"),
    ]
    for args, where, message in cases:
        assert_input_error(invoke(db, *args), message, where=where)
    before.assert_unchanged()


# ------------------------------------------------------------------------------- export

@pytest.mark.parametrize("args, message", [
    (["--format", "csv"], "unknown format 'csv'"),
    (["--split", "train=0.5,test=0.6"], "--split: proportions sum to 1.1, not 1"),
    (["--split", "train=half"], "--split: cannot read 'train=half'"),
    (["--split", "train=0.5,train=0.5"], "split 'train' is named twice"),
    (["--split", "../../etc=1"], "--split: cannot read"),
    (["--balance", "difficulty=1:2"], "--balance: cannot read"),
    (["--balance", "difficulty=0:0:0"], "not all zero"),
    (["--balance", "size=1:1:1"], "--balance: cannot read"),
    (["--status", "approved"], "unknown status 'approved'"),
    (["--status", ","], "--status needs at least one"),
    (["--types", "trivia"], "unknown type 'trivia'"),
    (["--seed", "lucky"], "Invalid value for '--seed'"),
    (["--bogus"], "No such option '--bogus'"),
])
def test_wrong_export_options_write_nothing(work, args, message):
    db = work / "g.db"
    assert invoke(db, "export", "--out", "golden.jsonl").exit_code == 0
    before = Snapshot(work, db)
    assert_input_error(invoke(db, "export", "--out", "golden.jsonl", *args), message)
    before.assert_unchanged()  # the earlier export and its manifest untouched, no temp files


def test_export_to_a_bad_place_or_with_nothing_selected(work):
    db = work / "g.db"
    (work / "outdir").mkdir()
    (work / "afile").write_text("not a folder")
    before = Snapshot(work, db)
    assert_input_error(invoke(db, "export", "--out", "afile/dir/g.jsonl"),
                       "is a file, not a folder")
    assert_input_error(invoke(db, "export", "--out", "outdir"), "is a directory")
    assert_input_error(invoke(db, "export", "--out", "g.jsonl", "--status", "rejected"),
                       "nothing to export")
    before.assert_unchanged()


# ------------------------------------------------------------------------------- score

def score(work, *args):
    return invoke(work / "g.db", "score", "--no-judge", *args)


@pytest.mark.parametrize("run_name, line, message", [
    ("run_duplicate_query_line3.jsonl", 3,
     "duplicate query 'How long is the returns window?' (first on line 1)"),
    ("run_bad_json_line2.jsonl", 2, "malformed JSON"),
    ("run_ids_not_list_line1.jsonl", 1, "retrieved_ids: Input should be a valid list"),
    ("run_ids_not_strings_line1.jsonl", 1, "retrieved_ids"),
    ("run_docno_twice_line1.jsonl", 1, "'c1' appears twice in retrieved_ids"),
    ("run_scores_mismatch_line2.jsonl", 2, "scores has 1 values for 2 retrieved_ids"),
    ("run_no_query_line1.jsonl", 1, "each line needs query_id"),
    ("run_negative_latency_line1.jsonl", 1, "latency_ms"),
])
def test_bad_run_files(work, run_name, line, message):
    (work / "report.json").write_text("{}")
    before = Snapshot(work, work / "g.db")
    result = score(work, "--golden", "in/golden.jsonl", "--run", f"in/{run_name}",
                   "--out", "report.json", "--out", "report.html")
    assert_input_error(result, message, where=f"in/{run_name}:{line}")
    before.assert_unchanged()  # no run saved, old report kept, no html written


def test_run_queries_not_in_the_golden_file_are_counted_and_ignored(work):
    result = score(work, "--golden", "in/golden.jsonl", "--run", "in/run_unknown_id_line2.jsonl",
                   "--out", "report.json", "--no-save")
    assert result.exit_code == 0, result.output
    assert "1 run queries are not in" in result.stderr and "'q404'" in result.stderr
    report = json.loads((work / "report.json").read_text())
    assert report["counts"]["unknown_in_run"] == 1
    assert report["unknown_run_queries"] == [{"line": 2, "query": "q404"}]
    assert "q404" not in report["per_query"] and report["counts"]["in_run"] == 1


@pytest.mark.parametrize("golden_name, run_name, where, message", [
    ("golden_duplicate_id_line2.jsonl", "run.jsonl", "in/golden_duplicate_id_line2.jsonl:2",
     "duplicate id 'q1' (first on line 1)"),
    ("golden_missing_query_line1.jsonl", "run.jsonl", "in/golden_missing_query_line1.jsonl:1",
     "query: Field required"),
    ("golden.jsonl", "run_empty.jsonl", "in/run_empty.jsonl", "the run is empty"),
    ("golden.jsonl", "nope.jsonl", "nope.jsonl", "file not found"),
    ("golden.jsonl", "kb", "in/kb", "Invalid value for '--run'"),
])
def test_bad_golden_files_and_paths(work, golden_name, run_name, where, message):
    before = Snapshot(work, work / "g.db")
    run = "nope.jsonl" if run_name == "nope.jsonl" else f"in/{run_name}"
    result = score(work, "--golden", f"in/{golden_name}", "--run", run)
    if message.startswith("Invalid value"):
        assert_input_error(result, message)
    else:
        assert_input_error(result, message, where=where)
    before.assert_unchanged()


def test_run_file_encoding_problems(work):
    bad = work / "latin1.jsonl"
    bad.write_bytes(b'{"query_id": "q1", "retrieved_ids": ["c1"]}\n'
                    b'{"query_id": "q2", "retrieved_ids": ["caf\xe9"]}\n')
    deep = work / "deep.jsonl"
    deep.write_text("[" * 100_000 + "\n")
    binary = work / "run.bin.jsonl"
    binary.write_bytes(b"\x00\x01\x02PK\x03\x04")
    before = Snapshot(work, work / "g.db")
    assert_input_error(score(work, "--golden", "in/golden.jsonl", "--run", bad),
                       "not UTF-8 text", where=f"{bad}:2")
    assert_input_error(score(work, "--golden", "in/golden.jsonl", "--run", deep),
                       "nested too deeply", where=f"{deep}:1")
    assert_input_error(score(work, "--golden", deep, "--run", "in/run.jsonl"),
                       "nested too deeply", where=f"{deep}:1")
    assert_input_error(score(work, "--golden", "in/golden.jsonl", "--run", binary),
                       "malformed JSON", where=f"{binary}:1")
    before.assert_unchanged()
    # a byte-order mark (Windows tools) and CRLF line ends are fine
    bom = work / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + (work / "in" / "run.jsonl").read_bytes()
                    .replace(b"\n", b"\r\n"))
    result = score(work, "--golden", "in/golden.jsonl", "--run", bom, "--no-save")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("qrels, trec_run, where, message", [
    ("qrels_three_columns_line2.txt", "trec_run.txt", "qrels_three_columns_line2.txt:2",
     "expected 'qid iter docno rel', got 3 fields"),
    ("qrels_rel_not_int_line1.txt", "trec_run.txt", "qrels_rel_not_int_line1.txt:1",
     "relevance 'yes' is not an integer"),
    ("qrels_judged_twice_line3.txt", "trec_run.txt", "qrels_judged_twice_line3.txt:3",
     "'c1' judged twice for query 'q1'"),
    ("qrels.txt", "trec_run_five_columns_line2.txt", "trec_run_five_columns_line2.txt:2",
     "expected 'qid Q0 docno rank score tag', got 5 fields"),
    ("qrels.txt", "trec_run_score_text_line1.txt", "trec_run_score_text_line1.txt:1",
     "score 'high' is not a number"),
    ("qrels.txt", "trec_run_score_nan_line1.txt", "trec_run_score_nan_line1.txt:1",
     "score 'nan' is not a number"),
    ("qrels.txt", "trec_run_docno_twice_line2.txt", "trec_run_docno_twice_line2.txt:2",
     "'c1' retrieved twice for query 'q1'"),
    ("golden.jsonl", "trec_run.txt", "golden.jsonl:1", "expected 'qid iter docno rel'"),
])
def test_trec_files_with_wrong_columns(work, qrels, trec_run, where, message):
    before = Snapshot(work, work / "g.db")
    result = score(work, "--qrels", f"in/{qrels}", "--trec-run", f"in/{trec_run}")
    assert_input_error(result, message, where=f"in/{where}")
    before.assert_unchanged()


@pytest.mark.parametrize("args, message", [
    (["--golden", "in/golden.jsonl"], "--golden and --run are required"),
    (["--golden", "in/golden.jsonl", "--run", "in/run.jsonl", "--qrels", "in/qrels.txt"],
     "either --golden/--run or --qrels/--trec-run"),
    (["--qrels", "in/qrels.txt"], "--qrels and --trec-run go together"),
    (["--golden", "in/golden.jsonl", "--run", "in/run.jsonl", "--k", "0"], "--k expects"),
    (["--golden", "in/golden.jsonl", "--run", "in/run.jsonl", "--k", "ten"], "--k expects"),
    (["--golden", "in/golden.jsonl", "--run", "in/run.jsonl", "--out", "r.pdf"],
     "report file must end in .json, .md or .html"),
    (["--golden", "in/golden.jsonl", "--run", "in/run.jsonl", "--out", "in/run.jsonl/r.json"],
     "is a file, not a folder"),
    (["--golden", "in/golden.jsonl", "--run", "in/run.jsonl", "--fail-under", "ndcg@10"],
     "--fail-under"),
    (["--golden", "in/golden.jsonl", "--run", "in/run.jsonl", "--fail-under", "vibes=1"],
     "unknown metric 'vibes'"),
    (["--golden", "in/golden.jsonl", "--run", "in/run.jsonl", "--gain", "cubic"],
     "Invalid value for '--gain'"),
])
def test_wrong_score_options(work, args, message):
    before = Snapshot(work, work / "g.db")
    assert_input_error(score(work, *args), message)
    before.assert_unchanged()


# ------------------------------------------------------------------------------- compare, calibrate

def test_compare_refuses_what_is_not_a_report(work):
    db = work / "g.db"
    assert score(work, "--golden", "in/golden.jsonl", "--run", "in/run.jsonl",
                 "--out", "a.json").exit_code == 0
    (work / "deep.json").write_text("[" * 100_000)
    (work / "wrong.json").write_text(json.dumps({"summary": {"ndcg@10": "high"},
                                                 "per_query": {}}))
    before = Snapshot(work, db)
    for other, message in (("in/golden.jsonl", "not a golden score report JSON"),
                           ("deep.json", "not a golden score report JSON"),
                           ("wrong.json", "summary.ndcg@10"),
                           ("missing.json", "file not found")):
        assert_input_error(invoke(db, "compare", "a.json", other), message, where=other)
    assert_input_error(invoke(db, "compare", "a.json", "a.json", "--out", "c.txt"),
                       "report file must end in .json, .md or .html")
    assert_input_error(invoke(db, "compare", "a.json", "a.json", "--out", "a.json"),
                       "output would overwrite the report a.json")
    assert_input_error(invoke(db, "compare", "a.json", "a.json", "--resamples", "5"),
                       "Invalid value for '--resamples'")
    before.assert_unchanged()


def test_calibrate_import_errors(work):
    db = work / "g.db"
    files = {
        "no_header.csv": ("query_id,score\nq1,4\n", "CSV header needs metric", 1),
        "bad_score.csv": ("query_id,metric,score\nq1,faithfulness,4\nq2,correctness,9\n",
                          "score: Input should be less than or equal to 5", 3),
        "bad_metric.jsonl": ('{"query_id": "q1", "metric": "vibes", "score": 3}\n',
                             "metric must be one of", 1),
        "bad_line.jsonl": ('{"query_id": "q1", "metric": "faithfulness", "score": 3}\n{oops\n',
                           "malformed JSON", 2),
        "huge_field.csv": ("query_id,metric,score\nq1,faithfulness,\"" + "4" * 200_000 + "\"\n",
                           "malformed CSV", 2),
        "deep.jsonl": ("[" * 100_000 + "\n", "nested too deeply", 1),
    }
    for name, (text, _, _) in files.items():
        (work / name).write_text(text)
    before = Snapshot(work, db)
    for name, (_, message, line) in files.items():
        assert_input_error(invoke(db, "calibrate", "--import", name), message,
                           where=f"{name}:{line}")
    assert_input_error(invoke(db, "calibrate"), "no scored run")
    before.assert_unchanged()


# ------------------------------------------------------------------------------- generate, review

LLM = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--dry-run"]


@pytest.mark.parametrize("args, message", [
    (["generate", *LLM, "--mix", "trivia=1"], "--mix: expected TYPE=SHARE"),
    (["generate", *LLM, "--types", "trivia"], "--types: unknown type 'trivia'"),
    (["generate", *LLM, "--n", "0"], "Invalid value for '--n'"),
    (["generate", *LLM, "--docs", "nothing-like-this*"], "no chunks matching --docs"),
    (["generate", *LLM, "--temperature", "5"], "--temperature: Input should be less than"),
    (["generate", *LLM, "--concurrency", "0"], "--concurrency: Input should be greater"),
    (["generate", *LLM, "--prompts", "no-such-dir"], "Invalid value for '--prompts'"),
    (["generate", *LLM, "--prompts", "prompts"], "prompts/question.prompt:4: unknown placeholder "
                                                 "{{secret_plan}}; the question prompt is given"),
    (["generate", *LLM, "--prompts", "badheader"], "badheader/question.prompt:1: expected "
                                                   "'key: value' in the prompt header"),
    # a sentence file override whose threshold line never states the amount it asks about
    (["generate", *LLM, "--prompts", "badsentence"], "badsentence/threshold_floor.md:2: the fr "
                                                     "sentence must hold {amount} once"),
    (["review", "--annotator", "ann\nnext"], "bad annotator name 'ann\\nnext'"),
    (["review", "--run", "r1"], "--run only applies with --calibrate"),
])
def test_wrong_generate_and_review_options(work, args, message):
    (work / "prompts").mkdir()
    (work / "prompts" / "question.prompt").write_text(
        "name: question\nversion: 9\n--- system\nAsk {{secret_plan}}.\n--- user\n{{before}}\n")
    (work / "badheader").mkdir()
    (work / "badheader" / "question.prompt").write_text("question v9\n--- system\nx\n--- user\ny\n")
    (work / "badsentence").mkdir()
    (work / "badsentence" / "threshold_floor.md").write_text(
        "en: Does {amount} meet the minimum?\nfr: Est-ce assez ?\n")
    db = work / "g.db"
    before = Snapshot(work, db)
    assert_input_error(invoke(db, *args), message)
    before.assert_unchanged()


# ------------------------------------------------------------------------------- golden.toml

CONFIG = BAD / "config"


@pytest.mark.parametrize("name, message", [
    ("temperature_string_line3.toml", "llm.temperature: Input should be a valid number, got 'hot'"),
    ("concurrency_zero_line3.toml", "llm.concurrency: Input should be greater than or equal to 1"),
    ("stages_not_table_line2.toml", "llm.stages: Input should be a valid dictionary"),
    ("llm_not_table_line1.toml", "llm: expected a table"),
    ("invalid_toml_line1.toml", "invalid TOML"),
    ("unknown_key_line3.toml", "llm.bogus_option: Extra inputs are not permitted"),
    ("price_string_line2.toml", "prices.my-model.input_per_mtok: Input should be a valid number"),
    ("stage_temperature_range_line5.toml", "llm.stages.facts.temperature: Input should be less"),
    ("max_tokens_float_line2.toml", "llm.max_tokens: Input should be a valid integer"),
    ("role_model_int_line2.toml", "llm.roles.judge.model: Input should be a valid string"),
])
def test_config_with_wrong_types_names_file_line_and_key(work, name, message):
    db = work / "g.db"
    line = int(name.rsplit("_line", 1)[1].split(".")[0])
    before = Snapshot(work, db)
    # named with --config ...
    result = invoke(db, "generate", "--config", CONFIG / name, "--base-url",
                    "http://127.0.0.1:9/v1", "--model", "m", "--dry-run")
    assert_input_error(result, message, where=f"{CONFIG / name}:{line}")
    # ... or found as ./golden.toml by every command that reads it
    shutil.copy(CONFIG / name, work / "golden.toml")
    for args in (["generate", "--dry-run", "--base-url", "http://127.0.0.1:9/v1"],
                 ["score", "--golden", "in/golden.jsonl", "--run", "in/run.jsonl"],
                 ["baseline-run", "--golden", "in/golden.jsonl", "--out", "run.jsonl"]):
        assert_input_error(invoke(db, *args), message, where=f"golden.toml:{line}")
    (work / "golden.toml").unlink()
    before.assert_unchanged()


def test_config_file_missing_or_not_utf8(work):
    db = work / "g.db"
    before = Snapshot(work, db)
    assert_input_error(invoke(db, "generate", "--config", "nope.toml", "--dry-run"),
                       "config file not found", where="nope.toml")
    (work / "golden.toml").write_bytes(b'[llm]\nmodel = "caf\xe9"\n')
    assert_input_error(invoke(db, "generate", "--dry-run"), "cannot read config",
                       where="golden.toml")
    (work / "golden.toml").unlink()
    before.assert_unchanged()


@pytest.mark.parametrize("name, message", [
    ("keymap_not_string_line2.toml", "review.accept: expected a key string"),
    ("keymap_unknown_id_line3.toml", "unknown key binding id 'review.launch_missiles'"),
    ("keymap_bad_key_line2.toml", "unknown modifier 'hyperdrive'"),
])
def test_review_keymap_errors_before_the_ui_starts(work, name, message):
    db = work / "g.db"
    line = int(name.rsplit("_line", 1)[1].split(".")[0])
    before = Snapshot(work, db)
    assert_input_error(invoke(db, "review", "--keymap", CONFIG / name), message,
                       where=f"{CONFIG / name}:{line}")
    shutil.copy(CONFIG / name, work / "golden.toml")
    assert_input_error(invoke(db, "review"), message, where=f"golden.toml:{line}")
    (work / "golden.toml").unlink()
    before.assert_unchanged()


def test_error_lines_never_carry_control_characters(work):
    """A hostile file name (newline, ESC) cannot break the one-line error or drive the terminal."""
    db = work / "g.db"
    name = "evil\n\x1b]0;pwned\x07\x1b[31m.md"
    path = work / name
    path.write_bytes(b"\x00binary")
    line = assert_input_error(invoke(db, "ingest", path), "binary file")
    assert "\x1b" not in line and "\x07" not in line
    assert "evil\\n\\x1b]0;pwned\\x07\\x1b[31m.md" in line
    # the invalid-UTF-8 warning names the file the same way
    warned = work / "bad\x1b[2J.txt"
    warned.write_bytes(b"caf\xe9 au lait\n")
    result = invoke(db, "ingest", warned)
    assert result.exit_code == 0 and "\x1b" not in result.stderr
    assert "bad\\x1b[2J.txt:1: invalid UTF-8" in result.stderr


def test_a_real_process_prints_one_line_and_exits_2(work):
    """The same through `python -m builder.cli`: no traceback, no stray output."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("GOLDEN_DEBUG", None)
    db = work / "g.db"
    before = Snapshot(work, db)
    cases = [
        (["ingest", "in/kb_duplicate_id_line3.jsonl"], "in/kb_duplicate_id_line3.jsonl:3: "),
        (["score", "--no-judge", "--golden", "in/golden.jsonl", "--run",
          "in/run_duplicate_query_line3.jsonl"], "in/run_duplicate_query_line3.jsonl:3: "),
        (["export", "--out", "g.jsonl", "--split", "train=2"], "--split: proportions sum"),
    ]
    for args, fragment in cases:
        proc = subprocess.run([sys.executable, "-m", "builder.cli", "--db", str(db), *args],
                              cwd=work, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == ""
        assert len(proc.stderr.splitlines()) == 1 and fragment in proc.stderr, proc.stderr
    before.assert_unchanged()


@click.command("boom")
def _boom() -> None:
    """A command with a bug: what a user sees when golden itself fails."""
    from builder.generate.terms import numbers

    numbers(None)  # type: ignore[arg-type]


def test_a_bug_in_golden_is_one_line_naming_golden_s_own_line_and_exit_1(work, monkeypatch):
    from builder import cli

    monkeypatch.setitem(cli.COMMANDS, "boom", f"{__name__}:_boom")
    monkeypatch.delenv("GOLDEN_DEBUG", raising=False)
    result = invoke(work / "g.db", "boom")
    assert result.exit_code == 1 and "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("golden: internal error: builder/generate/terms.py:")
    assert "TypeError" in lines[0] and "GOLDEN_DEBUG=1" in lines[0]
    monkeypatch.setenv("GOLDEN_DEBUG", "1")
    with pytest.raises(TypeError):
        invoke(work / "g.db", "boom")


# ------------------------------------------------------------------------------- issue 32: crashes

def _pdf(page_count: int, kids: list[int]) -> bytes:
    """A one-page text PDF whose page tree lists `kids` (object numbers; 9 does not exist)
    and claims `page_count` pages."""
    content = b"BT /F1 12 Tf 72 720 Td (Returns are free within 45 days.) Tj ET"
    kid_refs = " ".join(f"{k} 0 R" for k in kids).encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kid_refs + b"] /Count " + str(page_count).encode() + b" >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    return out + (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n"
                  "%%EOF\n").encode()


@pytest.mark.parametrize("name, pdf, message", [
    ("missing_page.pdf", _pdf(2, [3, 9]), "damaged PDF: page 2 of the 2 it claims cannot be read"),
    ("million_pages.pdf", _pdf(1_000_000, [3, 3, 3, 9]),
     "damaged PDF: page 4 of the 1000000 it claims cannot be read"),
], ids=["missing-page", "million-pages"])
def test_a_damaged_pdf_stops_the_ingest_naming_the_file(work, name, pdf, message):
    """As for any damaged file (README: bad input): one line naming it, exit 2, nothing of
    the folder written. Was `internal error: ...pdf_text.py: PdfiumError`."""
    pytest.importorskip("pypdfium2")
    folder = work / "pdfs"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nThis file alone would ingest fine.\n")
    (folder / name).write_bytes(pdf)
    db = work / "g.db"
    before = Snapshot(work, db)
    assert_input_error(invoke(db, "ingest", folder), message, where=str(folder / name))
    before.assert_unchanged()


def test_a_pdf_whose_every_line_repeats_on_every_page_is_ingested(work):
    """Found with the page-count PDFs: four identical pages made every line a running header,
    all were dropped, and the heading pass failed on no lines (internal error, IndexError).
    When nothing but "running" lines is left, they are the text."""
    pytest.importorskip("pypdfium2")
    folder = work / "same"
    folder.mkdir()
    (folder / "four.pdf").write_bytes(_pdf(10**9, [3, 3, 3, 3]))  # claims 1e9, holds 4
    db = work / "g.db"
    result = invoke(db, "ingest", folder)
    assert result.exit_code == 0, result.output
    assert "Returns are free within 45 days." in "\n".join(chunk_texts(db, "four.pdf"))


HUGE = "9" * 5000  # past Python's 4300-digit limit for int(str): json.loads raised ValueError
RUN_LINE = '{"query_id": "q1", "retrieved_ids": ["c1"]}\n'


@pytest.mark.parametrize("command, name, text, line", [
    (["ingest"], "kb.jsonl", '{"id": "a", "text": "ok"}\n{"id": %s, "text": "t"}\n' % HUGE, 2),
    (["score", "--no-judge", "--golden", "in/golden.jsonl", "--run"], "run.jsonl",
     RUN_LINE + '{"query_id": "q2", "retrieved_ids": ["c2"], "latency_ms": %s}\n' % HUGE, 2),
    (["score", "--no-judge", "--run", "in/run.jsonl", "--golden"], "golden.jsonl",
     '{"id": %s, "query": "How long?"}\n' % HUGE, 1),
    (["calibrate", "--import"], "scores.jsonl",
     '{"query_id": %s, "metric": "faithfulness", "score": 3}\n' % HUGE, 1),
    (["logs", "import"], "logs.jsonl", '{"query": "q", "timestamp": "2025-01-01T00:00:00Z", '
                                       '"latency_ms": %s}\n' % HUGE, 1),
], ids=["ingest-id", "run-latency", "golden-id", "calibrate-query-id", "logs-latency"])
def test_integers_with_thousands_of_digits_are_one_input_error(work, command, name, text, line):
    path = work / name
    path.write_text(text)
    db = work / "g.db"
    before = Snapshot(work, db)
    assert_input_error(invoke(db, *command, path), "a number with more than 4300 digits",
                       where=f"{path}:{line}")
    if command[0] != "logs":  # logs import makes its pseudonym key first (not input related)
        before.assert_unchanged()


def test_a_lone_surrogate_is_refused_naming_file_line_and_field(work):
    """Refused (exit 2), as ingest refuses it, never stored: `\\ud800` alone is valid JSON but
    not Unicode text; replacing it would change the user's text without a word."""
    db = work / "g.db"
    logs = work / "logs.jsonl"
    logs.write_text('{"query": "fine", "timestamp": "2025-01-01T00:00:00Z"}\n'
                    '{"query": "q", "answer": "broken \\ud800 text", '
                    '"timestamp": "2025-01-01T00:00:00Z"}\n')
    assert_input_error(invoke(db, "logs", "import", logs), 'field "answer": lone surrogate',
                       where=f"{logs}:2")
    with Store(db) as store:
        assert store.query("SELECT count(*) AS n FROM log_records") == [{"n": 0}]
    run = work / "run.jsonl"
    run.write_text(RUN_LINE + '{"query_id": "q2", "retrieved_ids": ["c2"], '
                              '"answer": "x \\udc00"}\n')
    before = Snapshot(work, db)
    assert_input_error(score(work, "--golden", "in/golden.jsonl", "--run", run),
                       'field "answer": lone surrogate', where=f"{run}:2")
    before.assert_unchanged()


def test_a_file_name_that_is_not_utf8_is_skipped_with_a_warning(work):
    """Skipped, consistently (a file and a folder alike), with a warning naming it escaped;
    named on the command line it is an input error. Was an internal error at
    store/documents.py (a surrogate cannot be stored)."""
    import os

    folder = work / "names"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nThis one has a fine name.\n")
    latin1 = os.fsencode(folder) + b"/caf\xe9.md"
    with open(latin1, "w") as handle:
        handle.write("# Cafe\n\nOpen at nine.\n")
    os.mkdir(os.fsencode(folder) + b"/d\xefr")
    with open(os.fsencode(folder) + b"/d\xefr/inner.md", "w") as handle:
        handle.write("# Inner\n\nText.\n")
    db = work / "g.db"
    result = invoke(db, "ingest", folder)
    assert result.exit_code == 0, result.output
    assert sorted(result.stderr.splitlines()) == [
        f"golden: warning: {folder}/caf\\xe9.md: skipped: its name is not valid UTF-8; "
        "rename it to ingest it",
        f"golden: warning: {folder}/d\\xefr: skipped: its name is not valid UTF-8; "
        "rename it to ingest it"]
    assert "skipped 2 name not UTF-8" in result.stdout
    with Store(db) as store:
        ids = [r["id"] for r in store.query("SELECT id FROM documents WHERE path LIKE ?",
                                            (f"{folder}%",))]
    assert ids == ["good.md"]
    before = Snapshot(work, db)
    assert_input_error(invoke(db, "ingest", os.fsdecode(latin1)), "not valid UTF-8",
                       where=f"{folder}/caf\\xe9.md")
    before.assert_unchanged()


@pytest.mark.parametrize("field, value", [
    ("latency_ms", "Infinity"), ("latency_ms", "NaN"), ("cost", "1e308"),
    ("prompt_tokens", "1" + "0" * 400),
], ids=["latency-inf", "latency-nan", "cost-1e308", "tokens-400-digits"])
def test_infinite_or_huge_figures_in_a_run_are_refused_before_anything_is_saved(work, field,
                                                                                value):
    """Was an internal error at score/report.py AFTER the run was saved."""
    run = work / "run.jsonl"
    run.write_text(RUN_LINE + '{"query_id": "q2", "retrieved_ids": ["c2"], "%s": %s}\n'
                   % (field, value))
    db = work / "g.db"
    before = Snapshot(work, db)
    assert_input_error(score(work, "--golden", "in/golden.jsonl", "--run", run, "--out",
                             "report.json"), field, where=f"{run}:2")
    before.assert_unchanged()  # no run saved, no report written


@pytest.mark.parametrize("key, value", [("ndcg@10", "Infinity"), ("ndcg@10", "-1e308"),
                                        ("mean_cost", "1e308")])
def test_compare_refuses_a_report_holding_infinite_or_huge_figures(work, key, value):
    import re

    run = work / "run.jsonl"
    run.write_text(RUN_LINE.replace("}", ', "cost": 0.5}'))
    assert score(work, "--golden", "in/golden.jsonl", "--run", run, "--no-save", "--out",
                 "a.json").exit_code == 0
    text = (work / "a.json").read_text()
    edited, n = re.subn(rf'("{re.escape(key)}": )[-0-9.e]+', rf"\g<1>{value}", text, count=1)
    assert n == 1
    (work / "b.json").write_text(edited)
    db = work / "g.db"
    before = Snapshot(work, db)
    for args in (["b.json", "a.json"], ["a.json", "b.json", "--out", "c.json"]):
        assert_input_error(invoke(db, "compare", *args), key, where="b.json")
    before.assert_unchanged()


def test_encoding_errors_name_the_line_in_calibrate_and_batch_import(work):
    db = work / "g.db"
    scores = work / "scores.jsonl"
    scores.write_bytes(b'{"query_id": "q1", "metric": "faithfulness", "score": 3}\n'
                       b'{"query_id": "caf\xe9", "metric": "faithfulness", "score": 3}\n')
    results = work / "out.results.jsonl"
    results.write_bytes(b'{"custom_id": "a", "error": "x"}\n{"custom_id": "caf\xe9", '
                        b'"error": "x"}\n')
    before = Snapshot(work, db)
    assert_input_error(invoke(db, "calibrate", "--import", scores), "not UTF-8 text",
                       where=f"{scores}:2")
    assert_input_error(invoke(db, "batch", "import", results), "not UTF-8 text",
                       where=f"{results}:2")
    before.assert_unchanged()


def test_an_unreadable_sub_folder_is_exit_2_on_a_first_ingest_and_a_re_ingest(work,
                                                                               monkeypatch):
    """README (exit codes): 2 for input errors, naming the folder. It was skipped silently on
    a first ingest (os.walk drops errors), and exit 1 on a re-ingest. Simulated (the suite
    runs as root, which ignores permissions): listing the folder raises EACCES."""
    import errno
    import os

    folder = work / "tree"
    (folder / "secret").mkdir(parents=True)
    (folder / "open.md").write_text("# Open\n\nAnyone can read this.\n")
    (folder / "secret" / "plans.md").write_text("# Plans\n\nOnly some can read this.\n")
    db = work / "g.db"
    real_scandir = os.scandir

    def locked(path=".", *args):
        if os.fspath(path).endswith("secret"):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real_scandir(path, *args)

    for first in (True, False):
        if not first:  # a re-ingest: the folder was readable the first time
            monkeypatch.setattr(os, "scandir", real_scandir)
            assert invoke(db, "ingest", folder).exit_code == 0
        monkeypatch.setattr(os, "scandir", locked)
        before = Snapshot(work, db)
        assert_input_error(invoke(db, "ingest", folder), "cannot read this folder (Permission "
                           "denied)", where=str(folder / "secret"))
        before.assert_unchanged()
