"""`golden ingest` / `golden stats` end to end: formats, re-ingest, ids, bad input, migrations."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from builder.cli import main
from builder.ingest.loaders import text_hash
from builder.store import Store
from builder.store.documents import get_chunks, list_chunks, list_documents

HANDBOOK = """# Returns

Items can be returned within 45 days. Bring the receipt unless it was a gift.

## Restocking fee

Opened electronics carry a 10% restocking fee.

```text
RETURN-LABEL: NW-{order}-{date}
```

| Tier | Window |
|------|--------|
| Basic | 45 days |
| Gold | 60 days |
"""


def run(capsys, db: Path, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["--db", str(db), *args])
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def snapshot(db: Path) -> tuple:
    with Store(db) as store:
        return (store.query("SELECT * FROM documents ORDER BY id"),
                store.query("SELECT * FROM chunks ORDER BY id"))


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "policies").mkdir(parents=True)
    (root / "policies" / "returns.md").write_text(HANDBOOK, encoding="utf-8")
    (root / "notes.txt").write_text("Store hours are 9 to 5.\n\nClosed on Sundays.\n",
                                    encoding="utf-8")
    (root / "page.html").write_text(
        "<html><head><title>Gift cards</title><script>track()</script></head>"
        "<body><h1>Gift cards</h1><p>Gift cards never expire.</p></body></html>",
        encoding="utf-8")
    (root / "faq.jsonl").write_text(
        json.dumps({"id": "kb-faq-0001", "text": "Do gift cards expire? No.",
                    "source": "faq/gift", "title": "Gift FAQ", "metadata": {"lang": "en"}})
        + "\n"
        + json.dumps({"id": "kb-faq-0002", "text": "退货需要收据吗？需要。", "source": "faq/zh"})
        + "\n\n"
        + json.dumps({"id": 42, "text": "Plain record without source.", "extra": 1}) + "\n",
        encoding="utf-8")
    (root / "features.toml").write_text("x = 1\n")
    (root / "logo.png").write_bytes(b"\x89PNG\x00\x00")
    (root / ".draft.md").write_text("# hidden\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD.md").write_text("# hidden\n")
    return root


def test_ingest_every_format(capsys, tmp_path, kb):
    db = tmp_path / "g.db"
    code, out, err = run(capsys, db, "ingest", str(kb))
    assert code == 0, err
    assert "files: 4 read, skipped 2 hidden, 2 unsupported type" in out
    assert "documents: 6 added, 0 unchanged, 0 replaced, 0 removed" in out
    with Store(db) as store:
        docs = {d["id"]: d for d in list_documents(store)}
        assert set(docs) == {"policies/returns.md", "notes.txt", "page.html", "faq/gift",
                             "faq/zh", "faq.jsonl"}
        assert docs["policies/returns.md"]["format"] == "markdown"
        assert docs["policies/returns.md"]["title"] == "Returns"
        assert docs["page.html"]["title"] == "Gift cards"
        assert docs["notes.txt"]["format"] == "text"
        assert docs["faq/zh"]["language"] == "zh"
        assert docs["policies/returns.md"]["path"] == str(kb / "policies" / "returns.md")

        # custom ids kept verbatim (an integer id becomes its decimal string)
        custom = get_chunks(store, ["kb-faq-0001", "kb-faq-0002", "42"])
        assert [c["document_id"] for c in custom] == ["faq/gift", "faq/zh", "faq.jsonl"]
        assert custom[0]["title"] == "Gift FAQ" and custom[0]["metadata"] == {"lang": "en"}
        assert custom[1]["language"] == "zh"
        assert custom[2]["metadata"] == {"extra": 1}
        assert custom[0]["char_start"] is None

        # file chunks: stable readable ids, offsets into the document text, heading paths
        text = (kb / "policies" / "returns.md").read_text(encoding="utf-8")
        chunks = list_chunks(store, "policies/returns.md")
        assert chunks and all(c["id"].startswith("policies/returns.md#") for c in chunks)
        for c in chunks:
            assert text[c["char_start"]:c["char_end"]] == c["text"]
        assert chunks[0]["heading_path"] == ["Returns"]
        html_chunk = list_chunks(store, "page.html")[0]
        assert "track()" not in html_chunk["text"] and "never expire" in html_chunk["text"]

        # the FTS index follows
        hits = store.query("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'restocking'")
        assert hits


def test_reingest_unchanged_changes_nothing(capsys, tmp_path, kb):
    db = tmp_path / "g.db"
    run(capsys, db, "ingest", str(kb))
    before = snapshot(db)
    code, out, _ = run(capsys, db, "ingest", str(kb))
    assert code == 0
    assert "documents: 0 added, 6 unchanged, 0 replaced, 0 removed" in out
    assert snapshot(db) == before
    # from another working directory, through a relative path: same ids, still unchanged
    cwd = os.getcwd()
    try:
        os.chdir(kb.parent)
        code, out, _ = run(capsys, db, "ingest", "kb")
    finally:
        os.chdir(cwd)
    assert "6 unchanged" in out and snapshot(db) == before


def test_changed_and_deleted_files(capsys, tmp_path, kb):
    db = tmp_path / "g.db"
    run(capsys, db, "ingest", str(kb))
    with Store(db) as store:
        old_returns = {c["id"] for c in list_chunks(store, "policies/returns.md")}
        notes_ids = {c["id"] for c in list_chunks(store, "notes.txt")}
        store.conn.execute(
            "INSERT INTO facts (id, chunk_id, seq, text, evidence, created_at) "
            "VALUES ('f1', ?, 0, 'fact', 'evidence', 'now')", (sorted(notes_ids)[0],))

    (kb / "policies" / "returns.md").write_text(
        HANDBOOK + "\n## Exchanges\n\nExchanges are free within 90 days.\n", encoding="utf-8")
    (kb / "page.html").unlink()
    lines = (kb / "faq.jsonl").read_text(encoding="utf-8").splitlines()
    (kb / "faq.jsonl").write_text(lines[0] + "\n", encoding="utf-8")  # faq/zh and 42 gone
    code, out, err = run(capsys, db, "ingest", str(kb))
    assert code == 0, err
    assert "documents: 0 added, 2 unchanged, 1 replaced, 3 removed" in out
    with Store(db) as store:
        ids = {d["id"] for d in list_documents(store)}
        assert ids == {"policies/returns.md", "notes.txt", "faq/gift"}
        new_returns = {c["id"] for c in list_chunks(store, "policies/returns.md")}
        assert new_returns != old_returns
        assert any("Exchanges" in c["text"] for c in list_chunks(store, "policies/returns.md"))
        # an unchanged document keeps its chunks and their facts
        assert {c["id"] for c in list_chunks(store, "notes.txt")} == notes_ids
        assert store.query("SELECT id FROM facts") == [{"id": "f1"}]
        assert not get_chunks(store, ["kb-faq-0002", "42"])
        fts = store.query("SELECT count(*) AS n FROM chunks_fts")[0]["n"]
        assert fts == store.query("SELECT count(*) AS n FROM chunks")[0]["n"]


def test_removal_only_under_the_given_root(capsys, tmp_path, kb):
    db = tmp_path / "g.db"
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("# A\n\nOther knowledge base.\n")
    run(capsys, db, "ingest", str(kb))
    run(capsys, db, "ingest", str(other))
    (kb / "notes.txt").unlink()
    code, out, _ = run(capsys, db, "ingest", str(kb))
    assert "1 removed" in out
    with Store(db) as store:
        ids = {d["id"] for d in list_documents(store)}
    assert "a.md" in ids and "notes.txt" not in ids


def test_include_exclude_and_chunk_options(capsys, tmp_path, kb):
    db = tmp_path / "g.db"
    code, out, _ = run(capsys, db, "ingest", str(kb), "--include", "*.md", "--include", "*.txt",
                       "--exclude", "policies", "--chunk-tokens", "40", "--overlap", "5")
    assert code == 0
    with Store(db) as store:
        assert [d["id"] for d in list_documents(store)] == ["notes.txt"]
    code, out, err = run(capsys, db, "ingest", str(kb), "--chunk-tokens", "40", "--overlap", "30")
    assert code == 2 and "--overlap" in err
    # a different chunk size re-chunks unchanged files
    run(capsys, db, "ingest", str(kb / "notes.txt"))
    code, out, _ = run(capsys, db, "ingest", str(kb / "notes.txt"), "--chunk-tokens", "100")
    assert "1 replaced" in out


def test_chunk_token_limit_is_respected(capsys, tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    body = "\n\n".join(f"## Section {i}\n\n" + " ".join(
        f"Policy sentence {i}.{j} explains a rule about returns." for j in range(30))
        for i in range(5))
    (kb / "big.md").write_text("# Big\n\n" + body + "\n")
    db = tmp_path / "g.db"
    run(capsys, db, "ingest", str(kb), "--chunk-tokens", "100", "--overlap", "20")
    with Store(db) as store:
        chunks = list_chunks(store)
    assert len(chunks) > 10
    assert all(c["n_tokens"] <= 100 for c in chunks)
    assert all(c["heading_path"][:1] == ["Big"] for c in chunks)


@pytest.mark.parametrize("name,content,message", [
    ("bad.jsonl", '{"id": "a", "text": "ok"}\n{not json}\n', "bad.jsonl:2: not valid JSON"),
    ("bad.jsonl", '{"id": "a", "text": "ok"}\n{"text": "no id"}\n', 'bad.jsonl:2: field "id": missing'),
    ("bad.jsonl", '{"id": "a"}\n', 'bad.jsonl:1: field "text": missing'),
    ("bad.jsonl", '{"id": "a", "text": "  "}\n', 'bad.jsonl:1: field "text": must not be empty'),
    ("bad.jsonl", '[1, 2]\n', "bad.jsonl:1: expected a JSON object"),
    ("bad.jsonl", '{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n',
     "bad.jsonl:2: duplicate chunk id 'a' (first on line 1)"),
    ("bad.jsonl", '{"id": "kb-faq-0001", "text": "clash"}\n',
     "bad.jsonl:1: duplicate chunk id 'kb-faq-0001'"),
    ("empty.md", "  \n\n", "empty.md: file is empty"),
    ("binary.md", "text\x00more", "binary.md: binary file"),
    ("blank.html", "<html><script>x()</script></html>", "blank.html: no visible text"),
])
def test_bad_input_exits_2_and_writes_nothing(capsys, tmp_path, kb, name, content, message):
    db = tmp_path / "g.db"
    run(capsys, db, "ingest", str(kb))
    before = snapshot(db)
    (kb / "notes.txt").write_text("Changed notes that must not be written.\n")
    (kb / "zz").mkdir()
    (kb / "zz" / name).write_text(content, encoding="utf-8")
    code, out, err = run(capsys, db, "ingest", str(kb))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("golden: error: "), err
    assert message in lines[0]
    assert lines[0].startswith(f"golden: error: {kb / 'zz' / name}:")  # names the file first
    assert snapshot(db) == before


def test_missing_path_unreadable_file_and_unsupported_file(capsys, tmp_path, kb):
    db = tmp_path / "g.db"
    code, _, err = run(capsys, db, "ingest", str(tmp_path / "nope"))
    assert code == 2 and "nope: no such file or folder" in err
    (kb / "dangling.md").symlink_to(tmp_path / "gone.md")
    code, _, err = run(capsys, db, "ingest", str(kb))
    assert code == 2 and "dangling.md: file not found" in err
    code, _, err = run(capsys, db, "ingest", str(kb / "features.toml"))
    assert code == 2 and "unsupported file type '.toml'" in err
    assert not list_documents(Store(db))


def test_duplicate_document_ids_across_roots(capsys, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for root in (a, b):
        root.mkdir()
        (root / "README.md").write_text(f"# {root.name}\n\ntext\n")
    db = tmp_path / "g.db"
    code, _, err = run(capsys, db, "ingest", str(a), str(b))
    assert code == 2 and "document id 'README.md' also comes from" in err
    run(capsys, db, "ingest", str(a))
    code, _, err = run(capsys, db, "ingest", str(b))
    assert code == 2 and "already ingested from" in err


def test_invalid_utf8_is_replaced_with_a_warning(capsys, tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "latin.txt").write_bytes("first line\nCaf\xe9 au lait.\n".encode("latin-1"))
    (kb / "bom.md").write_bytes("\ufeff# Title\n\nBody.\n".encode("utf-8"))
    db = tmp_path / "g.db"
    code, out, err = run(capsys, db, "ingest", str(kb))
    assert code == 0
    assert "latin.txt:2: invalid UTF-8; 1 bad byte sequence(s) replaced" in err
    with Store(db) as store:
        latin = list_chunks(store, "latin.txt")[0]
        bom = list_chunks(store, "bom.md")[0]
    assert "Caf\ufffd au lait." in latin["text"]
    assert bom["text"].startswith("# Title") and bom["char_start"] == 0


def test_stats_renders_untrusted_text_literally(capsys, tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    source = "[bold]x[/] [@click=app.quit]y[/] \x1b]0;pwned\x07"
    (kb / "k.jsonl").write_text(json.dumps({"id": "c1", "text": "Text.", "source": source}))
    db = tmp_path / "g.db"
    run(capsys, db, "ingest", str(kb))
    with Store(db) as store:
        store.conn.execute(
            "INSERT INTO llm_calls (cache_key, status, error, created_at) "
            "VALUES ('k', 'error', 'timeout [/] after 30 s', 'now'), "
            "('k2', 'ok', NULL, 'now'), ('k3', 'error', 'timeout [/] after 30 s', 'now')")
    code, out, err = run(capsys, db, "stats")
    assert code == 0, err
    assert "[bold]x[/]" in out and "[@click=app.quit]y[/]" in out
    assert "\x1b" not in out and "\u241b]0;pwned" in out
    assert "1 documents" in out
    assert "llm calls by status: error 2, ok 1" in out
    assert "timeout [/] after 30 s" in out
    assert "verified by type: none" in out


def test_migrations_on_empty_and_previous_schema(tmp_path):
    from sqlite_utils import Database

    from builder.store.migrations import migrations, schema_version

    fresh = Store(tmp_path / "fresh.db")
    assert schema_version(fresh)[:2] == ["m001_documents_and_chunks",
                                         "m002_generation_review_llm_runs"]
    fresh.close()

    old_path = tmp_path / "old.db"
    db = Database(old_path)
    migrations.apply(db, stop_before="m002_generation_review_llm_runs")
    db["documents"].insert({"id": "a.md", "path": "/kb/a.md", "format": "markdown",
                            "content_hash": text_hash("x"), "n_chars": 1, "n_tokens": 1,
                            "ingested_at": "t", "updated_at": "t"})
    db["chunks"].insert({"id": "a.md#1", "document_id": "a.md", "seq": 0, "text": "kept",
                         "n_tokens": 1})
    db.conn.close()
    with Store(old_path) as store:
        assert "m002_generation_review_llm_runs" in schema_version(store)
        assert store.query("SELECT id FROM chunks") == [{"id": "a.md#1"}]
        assert store.query("SELECT count(*) AS n FROM facts") == [{"n": 0}]
        assert store.query(
            "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'kept'")


def test_custom_id_may_move_between_files_in_one_run(capsys, tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    rec = {"id": "moving", "text": "This record moves."}
    (kb / "a.jsonl").write_text(json.dumps(rec) + "\n" + json.dumps({"id": "x", "text": "x"}))
    (kb / "b.jsonl").write_text(json.dumps({"id": "y", "text": "y"}))
    db = tmp_path / "g.db"
    run(capsys, db, "ingest", str(kb))
    (kb / "a.jsonl").write_text(json.dumps({"id": "x", "text": "x"}))
    (kb / "b.jsonl").write_text(json.dumps(rec) + "\n" + json.dumps({"id": "y", "text": "y"}))
    code, out, err = run(capsys, db, "ingest", str(kb))
    assert code == 0, err
    with Store(db) as store:
        assert get_chunks(store, ["moving"])[0]["document_id"] == "b.jsonl"


OPTIONS_ES = """# Sync sin interfaz gráfica

Puedes sincronizar una bóveda desde la línea de comandos, sin abrir la aplicación. Es útil en un
servidor: el proceso se queda en segundo plano y sube los cambios de la carpeta de la bóveda.

## Opciones

| Opción | Valor |
|---|---|
| `--path` | `./vault` |
| `--mode` | `merge` o `conflict` |
| `--device-name` | `server-1` |
"""


def test_a_chunk_too_terse_to_show_a_language_takes_its_documents(capsys, tmp_path):
    # an options table has too few function words to tell its language: detected alone it
    # would be the default "en", and English questions written from it would pass the
    # language check on a Spanish knowledge base
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "sync.md").write_text(OPTIONS_ES, encoding="utf-8")
    db = tmp_path / "g.db"
    code, _, err = run(capsys, db, "ingest", str(tmp_path / "kb"), "--chunk-tokens", "60",
                         "--overlap", "0")
    assert code == 0, err
    with Store(db) as store:
        chunks = list_chunks(store)
        assert len(chunks) >= 2 and any("--path" in c["text"] and "Puedes" not in c["text"]
                                         for c in chunks)
        assert {c["language"] for c in chunks} == {"es"}
