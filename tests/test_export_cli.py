"""`golden export` end to end: build a tiny DB, run the command, assert on the files it writes."""

from __future__ import annotations

import hashlib
import json
import os
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from builder.cli import main
from builder.errors import JobError
from builder.export import ExportOptions, export_dataset
from builder.export.manifest import manifest_json_schema
from tests.support.rows import accepted_candidate, add_tags, export_store, insert_rows

FORMATS = ("native", "seed", "ragas", "deepeval")


def run(db: Path, *args: str, capsys) -> tuple[int, str, str]:
    """Run the real entry point (error mapping and exit codes included) in-process."""
    with pytest.raises(SystemExit) as exc:
        main(["--db", str(db), "export", *args])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


def schema(name: str) -> dict:
    text = resources.files("builder").joinpath(f"schemas/{name}.schema.json").read_text()
    return json.loads(text)


@pytest.fixture
def db(tmp_path) -> Path:
    """Accepted items of several types and difficulties, plus items the export must leave out."""
    path = tmp_path / "golden.db"
    store = export_store(path)
    rows = [
        accepted_candidate("c-edit", edit_question="Edited question?", edit_answer="Edited answer.",
                      edit_type="reasoning", edit_difficulty="hard", reviewer="bob",
                      chunk_ids=["doc-b#0", "doc-a#1"]),
        accepted_candidate("c-multi", type="multi_hop", difficulty="medium",
                      chunk_ids=["doc-a#0", "doc-b#0"], document_id="docs/a.md"),
        accepted_candidate("c-failed-but-accepted", verdict="failed"),
        accepted_candidate("c-pending", status="pending", verdict="passed"),
        accepted_candidate("c-pending-failed", status="pending", verdict="failed"),
        accepted_candidate("c-rejected", status="rejected"),
        accepted_candidate("c-dup", duplicate_of="c-multi"),
    ]
    for i in range(12):
        rows.append(accepted_candidate(f"c-{i:02d}", difficulty=("easy", "medium", "hard")[i % 3],
                                  type=("single_hop", "temporal")[i % 2]))
    insert_rows(store, "candidates", rows)
    add_tags(store, [("c-multi", "geo"), ("c-multi", "capitals")])
    store.close()
    return path


def test_native_export_applies_edits_and_filters(db, tmp_path, capsys):
    out = tmp_path / "golden.jsonl"
    code, stdout, err = run(db, "--out", str(out), capsys=capsys)
    assert code == 0, err
    records = {r["id"]: r for r in read_jsonl(out)}
    # accepted only; duplicates out; a human accept wins over a failed automatic verdict
    assert "c-pending" not in records and "c-rejected" not in records and "c-dup" not in records
    assert "c-failed-but-accepted" in records
    assert len(records) == 15
    edited = records["c-edit"]
    assert edited["query"] == "Edited question?"
    assert edited["expected_answer"] == "Edited answer."
    assert edited["type"] == "reasoning" and edited["difficulty"] == "hard"
    assert edited["edited"] == ["question", "answer", "type", "difficulty"]
    assert edited["reviewer"] == "bob"
    assert edited["relevant_chunk_ids"] == ["doc-b#0", "doc-a#1"]
    assert edited["relevant_contexts"] == ["Berlin is the capital of Germany.",
                                           "The Seine flows through Paris."]
    assert [d["id"] for d in edited["source_documents"]] == ["docs/b.md", "docs/a.md"]
    assert records["c-multi"]["tags"] == ["capitals", "geo"]
    assert records["c-multi"]["split"] is None
    assert "wrote 15 records" in stdout


def test_status_widens_the_selection_but_failed_verdicts_stay_out(db, tmp_path, capsys):
    out = tmp_path / "g.jsonl"
    code, _, err = run(db, "--out", str(out), "--status", "accepted,pending", capsys=capsys)
    assert code == 0, err
    ids = {r["id"] for r in read_jsonl(out)}
    assert "c-pending" in ids and "c-pending-failed" not in ids
    code, _, err = run(db, "--out", str(out), "--status", "rejected", "--status", "accepted",
                       "--types", "multi_hop", capsys=capsys)
    assert code == 0, err
    assert {r["id"] for r in read_jsonl(out)} == {"c-multi"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_matches_its_json_schema(db, tmp_path, capsys, fmt):
    out = tmp_path / f"{fmt}.jsonl"
    code, _, err = run(db, "--out", str(out), "--format", fmt, "--split",
                       "train=0.5,test=0.5", capsys=capsys)
    assert code == 0, err
    validator = jsonschema.Draft202012Validator(schema(fmt))
    lines = 0
    for split in ("train", "test"):
        for record in read_jsonl(tmp_path / f"{fmt}.{split}.jsonl"):
            validator.validate(record)
            lines += 1
    assert lines == 15
    manifest = json.loads((tmp_path / f"{fmt}.jsonl.manifest.json").read_text())
    jsonschema.Draft202012Validator(manifest_json_schema()).validate(manifest)


def test_external_formats_carry_the_edited_text(db, tmp_path, capsys):
    by_format = {}
    for fmt in ("seed", "ragas", "deepeval"):
        out = tmp_path / f"{fmt}.jsonl"
        assert run(db, "--out", str(out), "--format", fmt, capsys=capsys)[0] == 0
        by_format[fmt] = read_jsonl(out)
    seed = next(r for r in by_format["seed"] if r["query"] == "Edited question?")
    assert seed == {"query": "Edited question?", "expectedAnswer": "Edited answer.",
                    "relevantChunkIds": ["doc-b#0", "doc-a#1"], "intent": "reasoning"}
    ragas = next(r for r in by_format["ragas"] if r["user_input"] == "Edited question?")
    assert ragas["reference"] == "Edited answer."
    assert ragas["reference_context_ids"] == ["doc-b#0", "doc-a#1"]
    deep = next(r for r in by_format["deepeval"] if r["input"] == "Edited question?")
    assert deep["expected_output"] == "Edited answer."
    assert deep["context"][0] == "Berlin is the capital of Germany."
    assert deep["source_file"] == "docs/b.md"
    assert deep["additional_metadata"]["id"] == "c-edit"


def test_committed_manifest_schema_matches_the_model():
    assert schema("manifest") == manifest_json_schema()


def test_manifest_describes_the_export(db, tmp_path, capsys):
    out = tmp_path / "golden.jsonl"
    code, _, err = run(db, "--out", str(out), "--split", "train=0.6,dev=0.2,test=0.2",
                       "--seed", "3", capsys=capsys)
    assert code == 0, err
    assert not out.exists()  # with --split only the split files are written
    manifest = json.loads((tmp_path / "golden.jsonl.manifest.json").read_text())
    files = manifest["files"]
    assert [f["split"] for f in files] == ["train", "dev", "test"]
    blobs = [(tmp_path / f["path"]).read_bytes() for f in files]
    for f, blob in zip(files, blobs):
        assert f["sha256"] == hashlib.sha256(blob).hexdigest()
        assert f["records"] == blob.count(b"\n")
    assert manifest["content_sha256"] == hashlib.sha256(b"".join(blobs)).hexdigest()
    assert manifest["records"] == 15
    assert manifest["seed"] == 3
    assert manifest["database"] == db.name  # a name, never a path of the author's machine
    assert manifest["filters"]["statuses"] == ["accepted"]
    assert manifest["documents"] == ["docs/a.md", "docs/b.md"]
    assert manifest["documents_covered"] == 2
    # counts per split x type x difficulty agree with the files
    counted: dict = {}
    for f in files:
        for record in read_jsonl(tmp_path / f["path"]):
            assert record["split"] == f["split"]
            by_diff = counted.setdefault(f["split"], {}).setdefault(record["type"], {})
            by_diff[record["difficulty"]] = by_diff.get(record["difficulty"], 0) + 1
    assert manifest["counts"] == counted


def test_same_seed_gives_identical_bytes_and_another_seed_another_split(db, tmp_path, capsys):
    def export(name: str, seed: str) -> list[bytes]:
        out = tmp_path / name
        assert run(db, "--out", str(out), "--split", "train=0.5,test=0.5", "--seed", seed,
                   capsys=capsys)[0] == 0
        return [(tmp_path / name.replace(".jsonl", f".{s}.jsonl")).read_bytes()
                for s in ("train", "test")]

    first, again, other = export("a.jsonl", "1"), export("b.jsonl", "1"), export("c.jsonl", "2")
    assert first == again
    assert first != other


def test_variants_of_one_fact_land_in_the_same_split(tmp_path, capsys):
    db = tmp_path / "g.db"
    store = export_store(db)
    rows = []
    for f in range(10):  # ten facts, each a question plus two evolved variants
        for v in range(3):
            rows.append(accepted_candidate(f"f{f}-v{v}", seed_fact_id=f"fact-{f}",
                                      difficulty=("easy", "medium", "hard")[v]))
    rows += [accepted_candidate(f"single-{i}", difficulty=("easy", "medium", "hard")[i % 3])
             for i in range(30)]
    insert_rows(store, "candidates", rows)
    store.close()
    out = tmp_path / "g.jsonl"
    code, _, err = run(db, "--out", str(out), "--split", "train=0.6,dev=0.2,test=0.2",
                       capsys=capsys)
    assert code == 0, err
    split_of_fact: dict[str, set[str]] = {}
    per_split_difficulty: dict[tuple[str, str], int] = {}
    for split in ("train", "dev", "test"):
        for r in read_jsonl(tmp_path / f"g.{split}.jsonl"):
            if r["seed_fact_id"]:
                split_of_fact.setdefault(r["seed_fact_id"], set()).add(split)
            key = (split, r["difficulty"])
            per_split_difficulty[key] = per_split_difficulty.get(key, 0) + 1
    assert len(split_of_fact) == 10
    assert all(len(s) == 1 for s in split_of_fact.values())
    # 20 items per difficulty: 12/4/4 exactly, since single items can absorb the groups.
    for d in ("easy", "medium", "hard"):
        assert [per_split_difficulty.get((s, d), 0) for s in ("train", "dev", "test")] == [12, 4, 4]
    manifest = json.loads((tmp_path / "g.jsonl.manifest.json").read_text())
    assert manifest["stratification"]["groups"] == 10
    assert manifest["stratification"]["deviations"] == []
    assert manifest["stratification"]["achieved"] == [
        {"split": "train", "target": 36, "records": 36, "share": 0.6},
        {"split": "dev", "target": 12, "records": 12, "share": 0.2},
        {"split": "test", "target": 12, "records": 12, "share": 0.2}]


def test_balance_subsamples_and_warns_about_the_short_stratum(tmp_path, capsys):
    db = tmp_path / "g.db"
    store = export_store(db)
    rows = ([accepted_candidate(f"e{i}", difficulty="easy") for i in range(50)]
            + [accepted_candidate(f"m{i}", difficulty="medium") for i in range(30)]
            + [accepted_candidate(f"h{i}", difficulty="hard") for i in range(6)]
            + [accepted_candidate("u0", difficulty=None)])
    insert_rows(store, "candidates", rows)
    store.close()
    out = tmp_path / "g.jsonl"
    code, _, err = run(db, "--out", str(out), "--balance", "difficulty=40:30:30", capsys=capsys)
    assert code == 0, err
    difficulties = [r["difficulty"] for r in read_jsonl(out)]
    assert (difficulties.count("easy"), difficulties.count("medium"),
            difficulties.count("hard")) == (8, 6, 6)
    warning = [line for line in err.splitlines() if "too few" in line]
    assert len(warning) == 1
    assert "hard has 6 of the 25" in warning[0] and "exporting 20 of 86" in warning[0]
    assert "1 item(s) have no difficulty" in err
    manifest = json.loads((tmp_path / "g.jsonl.manifest.json").read_text())
    assert manifest["balance"]["short"] == ["hard"]
    assert manifest["balance"]["kept"] == {"easy": 8, "medium": 6, "hard": 6}


@pytest.mark.parametrize("args, message", [
    (["--format", "csv"], "unknown format 'csv'"),
    (["--split", "train=0.6,test=0.3"], "sum to 0.9, not 1"),
    (["--split", "train:0.6"], "expected NAME=PROPORTION"),
    (["--balance", "difficulty=40:30"], "expected difficulty=EASY:MEDIUM:HARD"),
    (["--balance", "size=1:1:1"], "expected difficulty=EASY:MEDIUM:HARD"),
    (["--status", "approved"], "unknown status 'approved'"),
    (["--types", "multi_hop", "--status", "skipped"], "nothing to export"),
    (["--balance", "difficulty=0:0:1", "--types", "multi_hop"], "no hard items"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(db, tmp_path, capsys, args, message):
    out = tmp_path / "out" / "golden.jsonl"
    out.parent.mkdir()
    code, _, err = run(db, "--out", str(out), *args, capsys=capsys)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert list(out.parent.iterdir()) == []


def test_output_in_a_missing_folder_creates_it(db, tmp_path, capsys):
    """As score's --out and --batch DIR do (tests/test_output_paths.py has every command)."""
    code, _, err = run(db, "--out", str(tmp_path / "missing" / "g.jsonl"), capsys=capsys)
    assert code == 0, err
    assert len(read_jsonl(tmp_path / "missing" / "g.jsonl")) == 15
    assert (tmp_path / "missing" / "g.jsonl.manifest.json").exists()


def test_failure_mid_export_leaves_no_file(tmp_path):
    db = tmp_path / "g.db"
    store = export_store(db)
    insert_rows(store, "candidates", [accepted_candidate("ok"), accepted_candidate("stale", chunk_ids=["gone#0"])])
    with pytest.raises(JobError, match="candidate stale cites chunk 'gone#0'"):
        export_dataset(store, ExportOptions(out=tmp_path / "g.jsonl",
                                            split={"train": 0.5, "test": 0.5}))
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("g.db")] == []


def test_export_dataset_api(tmp_path):
    store = export_store(tmp_path / "g.db")
    insert_rows(store, "candidates", [accepted_candidate(f"c{i}") for i in range(5)])
    result = export_dataset(store, ExportOptions(out=tmp_path / "x.jsonl", format="ragas",
                                                 dataset_version="v1"))
    assert result.total == 5
    assert result.files[0].path == "x.jsonl"
    assert result.manifest_path == tmp_path / "x.jsonl.manifest.json"
    assert result.manifest.dataset_version == "v1"


def test_untrusted_text_is_data_one_record_per_line(tmp_path):
    store = export_store(tmp_path / "g.db")
    nasty = 'Line one\nline "two" \u2028 </script> {{var}} \x1b[31m ünïcødé 🙂'
    insert_rows(store, "candidates", [accepted_candidate("c1", edit_answer=nasty, evidence="not json"),
                           accepted_candidate("c2", evidence=[{"chunk_id": "doc-a#0", "quote": "q",
                                                          "start": True}, "junk", {"quote": 1}])])
    export_dataset(store, ExportOptions(out=tmp_path / "g.jsonl"))
    lines = (tmp_path / "g.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3
    records = [json.loads(line) for line in lines[:2]]
    assert records[0]["expected_answer"] == nasty
    assert records[0]["evidence"] == []
    assert records[1]["evidence"] == [{"chunk_id": "doc-a#0", "quote": "q", "start": None,
                                       "end": None}]
    assert "\u2028".encode() not in lines[0]  # escaped: str.splitlines() must not split a record


def test_refuses_to_overwrite_the_database(db, capsys):
    before = db.read_bytes()
    code, _, err = run(db, "--out", str(db), capsys=capsys)
    assert code == 2 and "overwrite the database" in err
    assert db.read_bytes() == before


def test_a_group_too_big_for_its_split_is_reported(tmp_path):
    store = export_store(tmp_path / "g.db")
    insert_rows(store, "candidates", [accepted_candidate(f"v{i}", seed_fact_id="fact") for i in range(6)]
                   + [accepted_candidate(f"s{i}") for i in range(4)])
    result = export_dataset(store, ExportOptions(out=tmp_path / "g.jsonl",
                                                 split={"a": "0.4", "b": "0.3", "c": "0.3"}))
    assert [f.records for f in result.files] == [6, 2, 2]
    assert any("off their exact split targets" in w for w in result.warnings)
    devs = {(d.split, d.target, d.actual) for d in result.manifest.stratification.deviations}
    assert devs == {("a", 4, 6), ("b", 3, 2), ("c", 3, 2)}
    assert any("a holds 6 (target 4), b holds 2 (target 3)" in w for w in result.warnings)
    assert [(a.split, a.records, a.share) for a in result.manifest.stratification.achieved] == [
        ("a", 6, 0.6), ("b", 2, 0.2), ("c", 2, 0.2)]


def test_a_harder_item_lands_in_the_split_of_every_item_it_was_built_from(tmp_path):
    """A comparative repeats both parts' questions and answers: it, both parts and any other
    item built on one of them are one leakage group, though each part has its own seed fact.
    Ten comparatives over two splits: grouped by the first part's seed alone (the code before),
    the second parts would all follow by chance once in 1,024 seeds."""
    store = export_store(tmp_path / "g.db")
    rows = []
    for i in range(10):
        a, b = f"p{i}a", f"p{i}b"
        rows += [accepted_candidate(a, seed_fact_id=f"fact-{i}a"),
                 accepted_candidate(b, seed_fact_id=f"fact-{i}b"),
                 accepted_candidate(f"cmp{i}", type="comparative", seed_fact_id=f"fact-{i}a",
                                    parent_id=a, part_ids=json.dumps([a, b]))]
    rows.append(accepted_candidate("thr", type="reasoning", seed_fact_id="fact-9b",
                                   parent_id="p9b", part_ids=json.dumps(["p9b"])))
    rows.append(accepted_candidate("broken", type="reasoning", part_ids="not json"))
    rows += [accepted_candidate(f"s{i}") for i in range(8)]
    insert_rows(store, "candidates", rows)
    export_dataset(store, ExportOptions(out=tmp_path / "g.jsonl",
                                        split={"train": "0.5", "test": "0.5"}))
    split_of = {r["id"]: r["split"] for name in ("train", "test")
                for r in read_jsonl(tmp_path / f"g.{name}.jsonl")}
    assert len(split_of) == 40
    for i in range(10):
        assert split_of[f"p{i}a"] == split_of[f"p{i}b"] == split_of[f"cmp{i}"], i
    assert split_of["thr"] == split_of["p9a"]  # joined through p9b's comparative


def test_leakage_groups_joined_by_harder_items_do_not_depend_on_link_order():
    from builder.export.splits import joined_groups
    links = [("c", "b"), ("x", "y"), ("b", "a"), ("d", "c")]
    assert joined_groups(links) == joined_groups(list(reversed(links))) == {
        "a": "a", "b": "a", "c": "a", "d": "a", "x": "x", "y": "x"}


def test_exported_files_get_the_usual_permissions(db, tmp_path, capsys):
    """Temporary files are created 0600; the renamed outputs must not stay private."""
    out = tmp_path / "golden.jsonl"
    code, _, err = run(db, "--out", str(out), capsys=capsys)
    assert code == 0, err
    mask = os.umask(0)
    os.umask(mask)
    for path in (out, tmp_path / "golden.jsonl.manifest.json"):
        assert path.stat().st_mode & 0o777 == 0o666 & ~mask


def test_the_export_kb_holds_what_the_tests_expect(tmp_path):
    store = export_store(tmp_path / "g.db")
    insert_rows(store, "candidates", [accepted_candidate("c1")])
    assert store.query("SELECT count(*) AS n FROM candidates")[0]["n"] == 1
    assert store.query("SELECT count(*) AS n FROM chunks")[0]["n"] == 4
