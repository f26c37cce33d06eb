"""No export carries a path of the author's file system (issue 32): a knowledge base ingested
from a temporary folder, items citing its documents, then every format (native, ragas,
deepeval, seed; one file and split), and not one byte of any exported file or manifest holds
that folder's absolute path. Documents are named by their id, paths relative to the ingested
folder, the manifest names the folder and the database file only."""

from __future__ import annotations

import json

import pytest

from builder.export.dataset import ingested_from, shared_path
from builder.store import Store
from tests.support.rows import accepted_candidate, insert_rows

FORMATS = ("native", "ragas", "deepeval", "seed")


@pytest.fixture
def kb_export(tmp_path, golden_cli):
    kb = tmp_path / "handbook"
    (kb / "policies").mkdir(parents=True)
    (kb / "returns.md").write_text("# Returns\n\nReturns are accepted within 45 days.\n")
    (kb / "policies" / "shipping.md").write_text("# Shipping\n\nExpress shipping costs $15.\n")
    (tmp_path / "extra.jsonl").write_text(json.dumps(
        {"id": "faq#1", "text": "Gift cards never expire.", "source": "faq.md"}) + "\n")
    code, _, err = golden_cli("ingest", str(kb), str(tmp_path / "extra.jsonl"))
    assert code == 0, err
    with Store("golden.db") as store:
        chunks = {r["document_id"]: r["id"] for r in store.query(
            "SELECT id, document_id FROM chunks ORDER BY seq")}
        paths = [r["path"] for r in store.query("SELECT path FROM documents")]
        assert all(p.startswith(str(tmp_path)) for p in paths)  # absolute in the database
        insert_rows(store, "candidates", [
            accepted_candidate(f"c-{i}", chunk_ids=[chunk], document_id=doc,
                               evidence=[], difficulty=("easy", "hard")[i % 2])
            for i, (doc, chunk) in enumerate(sorted(chunks.items()) * 2)])
    return tmp_path


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("split", [None, "train=0.5,test=0.5"])
def test_no_exported_file_holds_the_absolute_path(kb_export, golden_cli, fmt, split):
    out = kb_export / "out" / f"golden-{fmt}.jsonl"
    out.parent.mkdir()
    args = ["export", "--out", str(out), "--format", fmt]
    code, _, err = golden_cli(*args, *(["--split", split] if split else []))
    assert code == 0, err
    written = sorted(out.parent.iterdir())
    assert len(written) == (3 if split else 2)  # data file(s) and the manifest
    for path in written:
        data = path.read_text()
        for absolute in {str(kb_export), str(kb_export.resolve())}:
            assert absolute not in data, f"{absolute} in {path.name}"
    manifest = json.loads(next(p for p in written if p.name.endswith(".manifest.json"))
                          .read_text())
    assert manifest["database"] == "golden.db"
    assert manifest["knowledge_base"] == ["extra.jsonl", "handbook"]
    assert manifest["documents"] == ["faq.md", "policies/shipping.md", "returns.md"]


def test_native_and_deepeval_name_documents_relative_to_the_ingested_folder(kb_export,
                                                                          golden_cli):
    for fmt in ("native", "deepeval"):
        assert golden_cli("export", "--out", f"{fmt}.jsonl", "--format", fmt)[0] == 0
    native = [json.loads(line) for line in open("native.jsonl")]
    shown = {d["id"]: d["path"] for r in native for d in r["source_documents"]}
    assert shown == {"returns.md": "returns.md", "policies/shipping.md": "policies/shipping.md",
                     "faq.md": "extra.jsonl"}
    deepeval = [json.loads(line) for line in open("deepeval.jsonl")]
    assert {r["source_file"] for r in deepeval} == {"returns.md", "policies/shipping.md",
                                                    "extra.jsonl"}


@pytest.mark.parametrize("doc_id, path, shared, source", [
    ("sub/a.md", "/home/ann/kb/sub/a.md", "sub/a.md", "kb"),
    ("a.md", "/home/ann/a.md", "a.md", "ann"),            # a file ingested on its own
    ("faq.md", "/home/ann/kb.jsonl", "kb.jsonl", "kb.jsonl"),
    ("docs/a.md", "docs/a.md", "docs/a.md", ""),
    ("a.md", "C:\\Users\\ann\\kb\\a.md", "a.md", "kb"),
])
def test_shared_paths(doc_id, path, shared, source):
    assert shared_path(doc_id, path) == shared
    assert ingested_from(doc_id, path) == source
