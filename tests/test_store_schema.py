"""The final schema, pinned (as simonw/llm's test_migrate does): a migration that changes a
table, an index or a trigger must change this test too, so no schema change goes unnoticed.
And a database made by the previous release migrates to exactly the same schema, its rows
intact."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import sqlite_utils

import builder.store.schema
from builder.store import Store
from builder.store.migrations import migrations, schema_version
from builder.store.search import search_chunks

TABLES = {
    "_sqlite_migrations": "id migration_set name applied_at",
    "batch_replies": "reply_id custom_id outcome imported_at",
    "batch_requests": "custom_id cache_key step status batch_dir file job stage prompt_name "
                      "prompt_version role base_url model params messages output state call_id "
                      "staged_at updated_at",
    "calibration": "id run_id query_id metric score annotator source at",
    "candidate_tags": "candidate_id tag",
    "candidates": "id type question answer language difficulty difficulty_signals chunk_ids "
                  "hops evidence fact_ids seed_fact_id parent_id document_id generator_model "
                  "prompts verification verdict rejection_reasons duplicate_of status "
                  "edit_question edit_answer edit_type edit_difficulty reject_reason reject_note "
                  "reviewer reviewed_at created_at updated_at votes conflict adjudicated_by "
                  "provenance edit_chunk_ids part_ids",
    "candidates_fts": "question answer edit_question edit_answer",
    "candidates_fts_config": "k v",
    "candidates_fts_data": "id block",
    "candidates_fts_docsize": "id sz",
    "candidates_fts_idx": "segid term pgno",
    "chunks": "id document_id seq text title heading_path char_start char_end n_tokens language "
              "metadata",
    "chunks_fts": "text title heading_path",
    "chunks_fts_config": "k v",
    "chunks_fts_data": "id block",
    "chunks_fts_docsize": "id sz",
    "chunks_fts_idx": "segid term pgno",
    "documents": "id path title format content_hash n_chars n_tokens language metadata "
                 "ingested_at updated_at",
    "facts": "id chunk_id seq text evidence evidence_start evidence_end entities dates language "
             "prompt_name prompt_version llm_call_id created_at cell",
    "log_contexts": "hash text",
    "judge_calibration": "judge_model prompts metric n exact within_one kappa run_id at",
    "log_evaluations": "record_id judge_key judge_model metrics details unscored judged_at",
    "log_imports": "id paths lines records added unchanged differing scrubbed at",
    "log_records": "id at session_id query answer retrieved_ids context_hashes latency_ms "
                   "prompt_tokens completion_tokens cost model thumbs feedback_reason reasked "
                   "handed_off flagged sample_key metadata source content_hash import_id",
    "llm_calls": "id cache_key job stage prompt_name prompt_version base_url model params "
                 "messages schema_name response_format raw_response parsed status error "
                 "prompt_tokens completion_tokens latency_ms cost_usd attempts created_at",
    "meta": "key value",
    "production_links": "candidate_id record_id similarity provenance linked_at",
    "review_leases": "candidate_id session annotator expires_at",
    "review_log": "id candidate_id annotator at action reason note before after undoes batch_id "
                  "uid final",
    "review_votes": "candidate_id annotator final decision reason note at log_id",
    "run_items": "run_id query_id question reference answer contexts retrieved_ids metrics judge",
    "runs": "id name golden_path run_path judge_model options summary created_at item_metrics",
    "sqlite_sequence": "name seq",
    "stage_done": "stage key done_at info",
}
INDEXES = [
    "batch_requests_file", "batch_requests_key", "calibration_item", "candidate_tags_tag",
    "candidates_created_at", "candidates_difficulty", "candidates_document_id",
    "candidates_review_counts", "candidates_review_created", "candidates_review_queue",
    "candidates_review_queue_any", "candidates_review_status", "candidates_review_type",
    "candidates_seed_fact_id", "candidates_status", "candidates_type", "candidates_verdict",
    "candidates_votes", "candidates_waiting", "chunks_document", "facts_chunk",
    "idx__sqlite_migrations_migration_set_name", "llm_calls_cache", "llm_calls_stage",
    "log_records_at", "log_records_flagged", "log_records_sample", "log_records_thumbs_up",
    "production_links_record", "review_leases_session", "review_log_annotator",
    "review_log_candidate", "review_log_uid", "review_log_undoes", "review_votes_annotator",
]
TRIGGERS = ["candidates_fts_ad", "candidates_fts_ai", "candidates_fts_au", "chunks_ad",
            "chunks_ai", "chunks_au"]
MIGRATIONS = ["m001_documents_and_chunks", "m002_generation_review_llm_runs",
              "m003_review_indexes", "m004_review_search_and_counts", "m005_fact_cells",
              "m006_review_team", "m007_production_logs", "m008_batch_requests",
              "m009_judge_calibration", "m010_run_item_metrics",
              "m011_candidate_parts"]


def schema(conn: sqlite3.Connection) -> tuple[dict, list, list]:
    def names(kind: str) -> list[str]:
        return [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_autoindex%'"
            " ORDER BY name", (kind,))]

    tables = {t: " ".join(r[1] for r in conn.execute(f'PRAGMA table_info("{t}")'))
              for t in names("table")}
    return tables, names("index"), names("trigger")


def test_a_fresh_database_has_the_pinned_schema(tmp_path):
    with Store(tmp_path / "g.db") as store:
        assert schema(store.conn) == (TABLES, INDEXES, TRIGGERS)
        assert schema_version(store) == MIGRATIONS


def test_a_database_of_the_previous_release_migrates_with_its_rows(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m006_review_team")  # the schema the last release made
    db.execute("INSERT INTO documents (id, path, format, content_hash, n_chars, n_tokens,"
               " ingested_at, updated_at) VALUES ('d.md', 'd.md', 'markdown', 'h', 9, 2, 't', 't')")
    db.execute("INSERT INTO chunks (id, document_id, seq, text, n_tokens)"
               " VALUES ('d.md#1', 'd.md', 0, 'Gold costs $60.', 4)")
    db.execute("INSERT INTO facts (id, chunk_id, seq, text, evidence, entities, created_at)"
               " VALUES ('f1', 'd.md#1', 0, 'Gold costs $60.', 'Gold costs $60', '[\"Gold\"]', 't')")
    for cid, status, reviewer in (("c1", "accepted", "ann"), ("c2", "rejected", "bob"),
                                  ("c3", "pending", None)):
        db.execute("INSERT INTO candidates (id, type, question, answer, chunk_ids, status,"
                   " reviewer, reject_reason, reviewed_at, created_at, updated_at) VALUES"
                   " (?, 'single_hop', 'Q?', 'A', '[]', ?, ?, ?, 't1', 't', 't')",
                   (cid, status, reviewer, "trivial" if status == "rejected" else None))
    db.execute("INSERT INTO review_log (candidate_id, annotator, at, action, reason)"
               " VALUES ('c2', 'bob', 't1', 'reject', 'trivial')")
    db.conn.commit()
    db.close()
    with Store(path) as store:
        assert schema_version(store) == MIGRATIONS
        assert schema(store.conn) == (TABLES, INDEXES, TRIGGERS)
        fact = store.query("SELECT text, entities, cell FROM facts")[0]
        assert fact == {"text": "Gold costs $60.", "entities": '["Gold"]', "cell": None}
        # decisions made before votes existed become their reviewer's vote
        assert store.query("SELECT candidate_id, annotator, decision, reason, log_id"
                           " FROM review_votes ORDER BY 1") == [
            {"candidate_id": "c1", "annotator": "ann", "decision": "accept", "reason": None,
             "log_id": None},
            {"candidate_id": "c2", "annotator": "bob", "decision": "reject",
             "reason": "trivial", "log_id": 1}]
        assert [r["votes"] for r in store.query("SELECT votes FROM candidates ORDER BY id")] == [
            1, 1, 0]
        assert len(store.query("SELECT uid FROM review_log")[0]["uid"]) == 32
        # generated items have no provenance and no reviewer-marked chunks
        assert store.query("SELECT DISTINCT provenance, edit_chunk_ids FROM candidates") == [
            {"provenance": None, "edit_chunk_ids": None}]
        assert [h["id"] for h in search_chunks(store, "gold")] == ["d.md#1"]  # FTS kept up


def _master(conn: sqlite3.Connection) -> list[tuple]:
    return conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid"
                        ).fetchall()


def test_a_new_file_made_from_the_snapshot_equals_one_the_migrations_make(tmp_path):
    """schema.sql (the fast path for a new file, no sqlite-utils) must stay what the migrations
    build: regenerate it with `python -m builder.store.schema` after adding a migration."""
    from builder.store.migrations import known_migrations
    from builder.store.schema import schema_script

    with Store(tmp_path / "snap.db") as snap, Store(tmp_path / "mig.db", snapshot=False) as mig:
        assert schema_script(mig.conn, known_migrations()) == (
            Path(builder.store.schema.__file__).with_name("schema.sql").read_text())
        assert _master(snap.conn) == _master(mig.conn)
        for table in ("chunks_fts_config", "candidates_fts_config"):
            assert snap.query(f"SELECT k, v FROM {table} ORDER BY k") == mig.query(
                f"SELECT k, v FROM {table} ORDER BY k")
        assert snap.query("SELECT * FROM chunks_fts_config WHERE k = 'automerge'") == [
            {"k": "automerge", "v": 16}]
        for conn in (snap.conn, mig.conn):
            assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert schema_version(snap) == schema_version(mig) == MIGRATIONS
        # and it works: the FTS triggers index what is written
        for store in (snap, mig):
            with store.write():
                store.conn.execute(
                    "INSERT INTO documents (id, path, format, content_hash, n_chars, n_tokens,"
                    " ingested_at, updated_at) VALUES ('d.md', 'd.md', 'markdown', 'h', 9, 2,"
                    " 't', 't')")
                store.conn.execute("INSERT INTO chunks (id, document_id, seq, text, n_tokens)"
                                   " VALUES ('d.md#1', 'd.md', 0, 'Gold costs sixty.', 4)")
            assert [hit["id"] for hit in search_chunks(store, "gold")] == ["d.md#1"]


def test_a_snapshot_for_other_migrations_is_not_used(tmp_path, monkeypatch):
    from builder.store import schema as schema_mod

    monkeypatch.setattr(schema_mod, "_snapshot", lambda: (("m001_documents_and_chunks",), [
        "CREATE TABLE wrong (x)"]))
    with Store(tmp_path / "g.db") as store:
        assert schema(store.conn) == (TABLES, INDEXES, TRIGGERS)
        assert not store.query("SELECT name FROM sqlite_master WHERE name = 'wrong'")


def test_new_and_older_files_alike_end_up_in_wal_with_synchronous_normal(tmp_path):
    """A new file is switched to WAL without syncing (nothing in it to lose), a file made in
    rollback-journal mode (as sqlite-utils makes one) the usual way: either way every later
    transaction runs in WAL with synchronous=NORMAL."""
    older = tmp_path / "older.db"
    db = sqlite_utils.Database(older)
    migrations.apply(db)
    db.close()
    for path in (tmp_path / "new.db", older):
        with Store(path) as store:
            assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 1
            assert schema(store.conn) == (TABLES, INDEXES, TRIGGERS)


def test_harder_items_composed_before_part_ids_get_the_parts_that_can_be_known(tmp_path):
    """m011 gives an item composed by an earlier golden its first part (parent_id) and every
    other verified single-hop item whose question it repeats word for word and whose statements
    it holds; a single-hop item gets none, and a look-alike from another statement is no part."""
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m011_candidate_parts")

    def add(cid, ctype, question, facts, parent=None, verdict="passed"):
        db.execute("INSERT INTO candidates (id, type, question, answer, chunk_ids, fact_ids,"
                   " parent_id, verdict, created_at, updated_at)"
                   " VALUES (?, ?, ?, 'a', '[]', ?, ?, ?, 't', 't')",
                   [cid, ctype, question, json.dumps(facts), parent, verdict])
    add("p1", "single_hop", "How long is the loan?", ["f1"])
    add("p2", "single_hop", "How long is the renewal?", ["f2"])
    add("p3", "single_hop", "How long is the renewal?", ["f9"])            # another statement
    add("p4", "single_hop", "How long is the loan?", ["f1"], verdict="failed")
    add("cmp", "comparative", "How long is the loan? How long is the renewal? Which is higher?",
        ["f1", "f2"], parent="p1")
    add("amb", "ambiguous", "How long is it?", ["f1", "f2"], parent="p2")
    db.conn.commit()
    db.close()
    with Store(path) as store:
        got = {r["id"]: r["part_ids"] for r in store.query("SELECT id, part_ids FROM candidates")}
    assert json.loads(got["cmp"]) == ["p1", "p2"]
    assert json.loads(got["amb"]) == ["p2"]
    assert got["p1"] is None and got["p2"] is None
