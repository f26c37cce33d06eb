"""Schema migrations, applied in order on open and recorded in `_sqlite_migrations`.

Rules: never edit a migration that has shipped; add a new function at the end. Each runs in
one transaction together with its record, under a `BEGIN IMMEDIATE` taken by
`apply_migrations`, so two processes opening a fresh file at once cannot both apply it.

JSON columns hold lists/objects serialised with `json.dumps`; timestamps are ISO-8601 UTC text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

if TYPE_CHECKING:
    from builder.store.db import Store

migrations = Migrations("golden")


@migrations()
def m001_documents_and_chunks(db: Database) -> None:
    """Ingested knowledge base: documents, their chunks and a lexical (FTS5) index."""
    db.execute(
        """
        CREATE TABLE documents (
            id TEXT PRIMARY KEY,            -- stable: the document's path relative to the ingest root
            path TEXT NOT NULL,             -- path as found on disk (for messages)
            title TEXT,
            format TEXT NOT NULL,           -- markdown | text | html | jsonl
            content_hash TEXT NOT NULL,     -- sha256 of the decoded text
            n_chars INTEGER NOT NULL,
            n_tokens INTEGER NOT NULL,
            language TEXT,
            metadata TEXT,                  -- JSON
            ingested_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE chunks (
            id TEXT PRIMARY KEY,            -- user's own id (jsonl) or derived from path + content hash
            document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,           -- order within the document
            text TEXT NOT NULL,
            title TEXT,
            heading_path TEXT,              -- JSON list of headings, outermost first
            char_start INTEGER,             -- offsets into the document text (NULL for jsonl)
            char_end INTEGER,
            n_tokens INTEGER NOT NULL,
            language TEXT,
            metadata TEXT                   -- JSON
        )
        """
    )
    db.execute("CREATE INDEX chunks_document ON chunks(document_id, seq)")
    db["chunks"].enable_fts(
        ["text", "title", "heading_path"], fts_version="FTS5", create_triggers=True,
        tokenize="porter",
    )
    # Ingest writes one transaction per document, so FTS5 flushes one small segment each time;
    # with the default automerge=4 it re-merges them over and over (~25 % of the indexing cost,
    # measured by bench/bench_ingest.py). 16 merges four times less often; queries read a few
    # more segments, which BM25 results do not depend on.
    db.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('automerge', 16)")


@migrations()
def m002_generation_review_llm_runs(db: Database) -> None:
    """Everything after ingest: facts, candidates, review log, tags, LLM calls, scored runs."""
    db.execute(
        """
        CREATE TABLE facts (
            id TEXT PRIMARY KEY,            -- hash of (chunk id, prompt version, position)
            chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            text TEXT NOT NULL,             -- one atomic claim
            evidence TEXT NOT NULL,         -- verbatim span of the chunk
            evidence_start INTEGER,         -- char offsets into the chunk text
            evidence_end INTEGER,
            entities TEXT,                  -- JSON list
            dates TEXT,                     -- JSON list of dates / versions stated
            language TEXT,
            prompt_name TEXT,
            prompt_version TEXT,
            llm_call_id INTEGER,
            created_at TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX facts_chunk ON facts(chunk_id, seq)")
    db.execute(
        """
        CREATE TABLE candidates (
            id TEXT PRIMARY KEY,            -- deterministic hash of the inputs that made it
            type TEXT NOT NULL,             -- single_hop | reasoning | multi_hop | comparative |
                                            -- temporal | unanswerable | ambiguous
            question TEXT NOT NULL,         -- as generated; never overwritten by review
            answer TEXT NOT NULL,
            language TEXT,
            difficulty TEXT,                -- easy | medium | hard (measured)
            difficulty_signals TEXT,        -- JSON object
            chunk_ids TEXT NOT NULL,        -- JSON list, hop order, knowledge base id space
            hops TEXT,                      -- JSON list of lists: chunk ids per hop
            evidence TEXT,                  -- JSON list of {chunk_id, quote, start, end}
            fact_ids TEXT,                  -- JSON list
            seed_fact_id TEXT,              -- leakage group: variants of one fact share it
            parent_id TEXT,                 -- candidate this one was evolved from
            document_id TEXT,               -- document of the first chunk (filters, caps)
            generator_model TEXT,
            prompts TEXT,                   -- JSON {prompt name: version}
            verification TEXT,              -- JSON list of {check, passed, reason, source, model}
            verdict TEXT NOT NULL DEFAULT 'pending',  -- pending | passed | failed
            rejection_reasons TEXT,         -- JSON list
            duplicate_of TEXT,
            -- review state: a projection of review_log, updated in the same transaction
            status TEXT NOT NULL DEFAULT 'pending',   -- pending | accepted | rejected | skipped
            edit_question TEXT,
            edit_answer TEXT,
            edit_type TEXT,
            edit_difficulty TEXT,
            reject_reason TEXT,
            reject_note TEXT,
            reviewer TEXT,
            reviewed_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """
    )
    for col in ("status", "type", "difficulty", "verdict", "document_id", "seed_fact_id",
                "created_at"):
        db.execute(f"CREATE INDEX candidates_{col} ON candidates({col})")
    db.execute(
        """
        CREATE TABLE review_log (           -- append-only: rows are never updated or deleted
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            candidate_id TEXT NOT NULL REFERENCES candidates(id),
            annotator TEXT NOT NULL,
            at TEXT NOT NULL,
            action TEXT NOT NULL,           -- accept | reject | skip | edit | tag | untag | undo
            reason TEXT,
            note TEXT,
            before TEXT,                    -- JSON: projected state before
            after TEXT,                     -- JSON: projected state after
            undoes INTEGER REFERENCES review_log(id),
            batch_id TEXT                   -- set on bulk actions
        )
        """
    )
    db.execute("CREATE INDEX review_log_candidate ON review_log(candidate_id, id)")
    db.execute("CREATE INDEX review_log_annotator ON review_log(annotator, id)")
    db.execute(
        """
        CREATE TABLE candidate_tags (
            candidate_id TEXT NOT NULL REFERENCES candidates(id),
            tag TEXT NOT NULL,
            PRIMARY KEY (candidate_id, tag)
        )
        """
    )
    db.execute("CREATE INDEX candidate_tags_tag ON candidate_tags(tag)")
    db.execute(
        """
        CREATE TABLE stage_done (           -- idempotency ledger for generation stages
            stage TEXT NOT NULL,
            key TEXT NOT NULL,              -- hash of the stage's inputs and prompt version
            done_at TEXT NOT NULL,
            info TEXT,                      -- JSON
            PRIMARY KEY (stage, key)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE llm_calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            cache_key TEXT NOT NULL,        -- hash(base url, model, messages, params, schema)
            job TEXT,
            stage TEXT,
            prompt_name TEXT,
            prompt_version TEXT,
            base_url TEXT,
            model TEXT,
            params TEXT,                    -- JSON; never headers or keys
            messages TEXT,                  -- JSON
            schema_name TEXT,
            response_format TEXT,           -- json_schema | json_object | text
            raw_response TEXT,
            parsed TEXT,                    -- JSON
            status TEXT NOT NULL,           -- ok | error | refusal | empty | truncated | invalid
            error TEXT,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            latency_ms REAL,
            cost_usd REAL,
            attempts INTEGER,
            created_at TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX llm_calls_cache ON llm_calls(cache_key, status)")
    db.execute("CREATE INDEX llm_calls_stage ON llm_calls(stage, status)")
    db.execute(
        """
        CREATE TABLE runs (                 -- scored RAG runs
            id TEXT PRIMARY KEY,
            name TEXT,
            golden_path TEXT,
            run_path TEXT,
            judge_model TEXT,
            options TEXT,                   -- JSON
            summary TEXT,                   -- JSON
            created_at TEXT NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE run_items (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            query_id TEXT NOT NULL,
            question TEXT,
            reference TEXT,
            answer TEXT,
            contexts TEXT,                  -- JSON list
            retrieved_ids TEXT,             -- JSON list
            metrics TEXT,                   -- JSON
            judge TEXT,                     -- JSON: scores and reasons
            PRIMARY KEY (run_id, query_id)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE calibration (          -- human 1-5 scores for judge agreement
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT,
            query_id TEXT NOT NULL,
            metric TEXT NOT NULL,           -- faithfulness | correctness
            score INTEGER NOT NULL,
            annotator TEXT NOT NULL,
            source TEXT NOT NULL,           -- tui | import
            at TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")


@migrations()
def m003_review_indexes(db: Database) -> None:
    """Indexes for the review UI (builder/store/review_queue.py): each list order it offers walks an
    index instead of sorting 100k rows per page; undo finds undone rows; calibration finds
    scores. The expressions match review_queue.SORTS character for character."""
    for name, columns in (
        ("candidates_review_queue", "verdict, (status <> 'pending'), created_at, id"),
        ("candidates_review_queue_any", "(status <> 'pending'), created_at, id"),
        ("candidates_review_status", "verdict, status, created_at, id"),
        ("candidates_review_created", "verdict, created_at, id"),
        ("candidates_review_type", "verdict, COALESCE(edit_type, type), created_at, id"),
    ):
        db.execute(f"CREATE INDEX {name} ON candidates({columns})")
    db.execute("CREATE INDEX review_log_undoes ON review_log(undoes)")
    db.execute("CREATE INDEX calibration_item ON calibration(run_id, query_id, annotator)")


@migrations()
def m004_review_search_and_counts(db: Database) -> None:
    """Review UI (builder/store/review_queue.py): a trigram FTS5 index for its free-text search and a
    narrow covering index for its counts and progress.

    - `candidates_fts` indexes question, answer, edit_question and edit_answer as an external-
      content table (no copy of the text) keyed by the candidates rowid, kept by triggers. The
      trigram tokenizer keeps the search a case-insensitive substring match; search.py-style
      word tokens would not. Review decisions rewrite edit_* on every update, so the update
      trigger only re-indexes when one of the four texts really changed.
    - `candidates_review_counts` lets count(*) and the per-type/status progress read ~100k
      narrow index entries instead of the wide rows (count 110 -> 11 ms, stats 190 -> 15 ms).
    If candidates' rowids ever change (VACUUM of a table without INTEGER PRIMARY KEY),
    `INSERT INTO candidates_fts(candidates_fts) VALUES ('rebuild')` re-syncs the index.
    """
    db.execute(
        "CREATE INDEX candidates_review_counts ON candidates(verdict, duplicate_of, status,"
        " type, edit_type, difficulty, edit_difficulty, document_id)")
    db.execute(
        "CREATE VIRTUAL TABLE candidates_fts USING fts5(question, answer, edit_question,"
        " edit_answer, content='candidates', content_rowid='rowid', tokenize='trigram')")
    cols = "question, answer, edit_question, edit_answer"
    new = "new.rowid, new.question, new.answer, new.edit_question, new.edit_answer"
    old = "old.rowid, old.question, old.answer, old.edit_question, old.edit_answer"
    db.execute(
        f"CREATE TRIGGER candidates_fts_ai AFTER INSERT ON candidates BEGIN"
        f" INSERT INTO candidates_fts (rowid, {cols}) VALUES ({new}); END")
    db.execute(
        f"CREATE TRIGGER candidates_fts_ad AFTER DELETE ON candidates BEGIN"
        f" INSERT INTO candidates_fts (candidates_fts, rowid, {cols}) VALUES ('delete', {old});"
        f" END")
    db.execute(
        f"CREATE TRIGGER candidates_fts_au AFTER UPDATE OF {cols} ON candidates"
        " WHEN old.question IS NOT new.question OR old.answer IS NOT new.answer"
        " OR old.edit_question IS NOT new.edit_question OR old.edit_answer IS NOT new.edit_answer"
        f" BEGIN"
        f" INSERT INTO candidates_fts (candidates_fts, rowid, {cols}) VALUES ('delete', {old});"
        f" INSERT INTO candidates_fts (rowid, {cols}) VALUES ({new}); END")
    db.execute("INSERT INTO candidates_fts (candidates_fts) VALUES ('rebuild')")


@migrations()
def m005_fact_cells(db: Database) -> None:
    """A table-cell fact keeps its cell as a record, `cell` = JSON {entity, attribute, value},
    so later stages read the three parts instead of re-parsing the fact's text. NULL for every
    other fact (and for facts written before this migration). Adding a nullable column is a
    schema change only: no row is rewritten."""
    db.execute("ALTER TABLE facts ADD COLUMN cell TEXT")


@migrations()
def m006_review_team(db: Database) -> None:
    """Review as a team (builder/store/review_log.py, review_leases.py): per-annotator votes,
    item leases, overlap and adjudication, portable log rows.

    - `review_votes`: each annotator's current decision per candidate (accept | reject | skip),
      a projection of the log like the candidate's status; `final` = 1 marks an adjudicator's
      decision (or a bulk action told to overwrite), which settles the item. Existing decided
      candidates get one vote from their `reviewer` (the state they had: earlier decisions by
      others were overwritten before this migration and cannot be told apart).
    - `candidates.votes` (accept/reject votes), `conflict` (1: the votes disagree and no final
      decision exists: the adjudication queue), `adjudicated_by` (who made the final decision).
      Partial indexes find the few candidates waiting for more votes or for adjudication, and
      those with 2+ votes (agreement), without a scan.
    - `review_leases`: which session holds which candidate until when (unix seconds), so two
      annotators are never offered the same item; rows are short-lived.
    - `review_log.uid` (a stable id across machines: export-log / import-log) and `final`.
    Adding columns with constant defaults is a schema change only: no row is rewritten; the
    uid backfill rewrites review_log once.
    """
    db.execute("ALTER TABLE candidates ADD COLUMN votes INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE candidates ADD COLUMN conflict INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE candidates ADD COLUMN adjudicated_by TEXT")
    db.execute("CREATE INDEX candidates_waiting ON candidates(conflict)"
               " WHERE status = 'pending' AND votes > 0")
    db.execute("CREATE INDEX candidates_votes ON candidates(votes) WHERE votes > 1")
    db.execute("ALTER TABLE review_log ADD COLUMN uid TEXT")
    db.execute("ALTER TABLE review_log ADD COLUMN final INTEGER NOT NULL DEFAULT 0")
    db.execute("UPDATE review_log SET uid = lower(hex(randomblob(16)))")
    db.execute("CREATE UNIQUE INDEX review_log_uid ON review_log(uid)")
    db.execute(
        """
        CREATE TABLE review_votes (         -- projection of review_log: one row per voter
            candidate_id TEXT NOT NULL REFERENCES candidates(id),
            annotator TEXT NOT NULL,
            final INTEGER NOT NULL DEFAULT 0,   -- 1: a final (adjudicated) decision
            decision TEXT NOT NULL,             -- accept | reject | skip
            reason TEXT,
            note TEXT,
            at TEXT NOT NULL,
            log_id INTEGER,                     -- the review_log row that set it
            PRIMARY KEY (candidate_id, annotator, final)
        )
        """
    )
    db.execute("CREATE INDEX review_votes_annotator ON review_votes(annotator, decision)")
    db.execute(
        """
        INSERT INTO review_votes (candidate_id, annotator, final, decision, reason, note, at,
                                  log_id)
        SELECT c.id, c.reviewer, 0,
               CASE c.status WHEN 'accepted' THEN 'accept' WHEN 'rejected' THEN 'reject'
                             ELSE 'skip' END,
               c.reject_reason, c.reject_note, COALESCE(c.reviewed_at, c.updated_at),
               (SELECT max(r.id) FROM review_log r WHERE r.candidate_id = c.id)
        FROM candidates c
        WHERE c.status IN ('accepted', 'rejected', 'skipped') AND c.reviewer IS NOT NULL
        """
    )
    db.execute("UPDATE candidates SET votes = 1"
               " WHERE status IN ('accepted', 'rejected') AND reviewer IS NOT NULL")
    db.execute(
        """
        CREATE TABLE review_leases (        -- who is looking at what, until when
            candidate_id TEXT NOT NULL,
            session TEXT NOT NULL,              -- one review UI process
            annotator TEXT NOT NULL,
            expires_at REAL NOT NULL,           -- unix seconds
            PRIMARY KEY (candidate_id, session)
        )
        """
    )
    db.execute("CREATE INDEX review_leases_session ON review_leases(session)")


@migrations()
def m007_production_logs(db: Database) -> None:
    """Production logs (builder/store/logs.py) and the golden items promoted from them
    (builder/store/production.py).

    - `log_records`: one request of the RAG system in production, scrubbed of personal data
      before it was written (builder/logs/scrub.py). `sample_key` in [0, 1) is a hash of the
      id: `sample_key < rate` is the deterministic sample. `flagged` = thumbs down, re-asked
      or handed to a human (always evaluated). Contexts are stored once in `log_contexts`
      (content-addressed: the same chunk text retrieved by many requests is one row) and
      referenced by `context_hashes`, in retrieval order.
    - `log_imports`: what each `golden logs import` read, added and scrubbed.
    - `log_evaluations`: the judge's outcome for one record under one judge configuration
      (`judge_key`: model, prompt versions, aspects), so evaluating again judges only what is
      new and trends compare like with like.
    - `candidates.provenance` (JSON: where a `production` item came from) and
      `candidates.edit_chunk_ids` (JSON list: the relevant chunks a reviewer marked; NULL
      while unmarked). `production_links`: log records linked to an existing item as
      near-duplicates instead of being added twice.
    Adding nullable columns is a schema change only: no candidate row is rewritten.
    """
    db.execute(
        """
        CREATE TABLE log_imports (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            paths TEXT NOT NULL,            -- JSON list of the files read
            lines INTEGER NOT NULL,
            records INTEGER NOT NULL,       -- records read (a trace of spans is one record)
            added INTEGER NOT NULL,
            unchanged INTEGER NOT NULL,     -- already imported with the same content
            differing INTEGER NOT NULL,     -- already imported with other content (kept as was)
            scrubbed TEXT NOT NULL,         -- JSON {kind: replacements}
            at TEXT NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE log_records (
            id TEXT PRIMARY KEY,            -- the record's own id (a trace id for spans);
                                            -- pseudonymised when it held personal data
            at TEXT NOT NULL,               -- ISO-8601 UTC time of the request
            session_id TEXT,
            query TEXT NOT NULL,
            answer TEXT,
            retrieved_ids TEXT,             -- JSON list, rank order
            context_hashes TEXT,            -- JSON list of log_contexts.hash, in order
            latency_ms REAL,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            cost REAL,
            model TEXT,
            thumbs TEXT,                    -- up | down | NULL
            feedback_reason TEXT,
            reasked INTEGER NOT NULL DEFAULT 0,
            handed_off INTEGER NOT NULL DEFAULT 0,
            flagged INTEGER NOT NULL DEFAULT 0,   -- thumbs down, re-asked or handed off
            sample_key REAL NOT NULL,       -- [0, 1), from a hash of the id
            metadata TEXT,                  -- JSON, scrubbed like every other string
            source TEXT NOT NULL,           -- golden | otlp | span: the line format
            content_hash TEXT NOT NULL,     -- sha256 of the stored record
            import_id INTEGER NOT NULL REFERENCES log_imports(id)
        )
        """
    )
    db.execute("CREATE INDEX log_records_at ON log_records(at)")
    db.execute("CREATE INDEX log_records_sample ON log_records(sample_key)")
    db.execute("CREATE INDEX log_records_flagged ON log_records(at) WHERE flagged = 1")
    db.execute("CREATE INDEX log_records_thumbs_up ON log_records(at) WHERE thumbs = 'up'")
    db.execute("CREATE TABLE log_contexts (hash TEXT PRIMARY KEY, text TEXT NOT NULL)")
    db.execute(
        """
        CREATE TABLE log_evaluations (
            record_id TEXT NOT NULL REFERENCES log_records(id),
            judge_key TEXT NOT NULL,        -- hash of judge model, prompt versions, aspects
            judge_model TEXT,
            metrics TEXT,                   -- JSON: flat numbers, as a report's per_query
            details TEXT,                   -- JSON: scores and reasons
            unscored TEXT,                  -- JSON list: metrics the judge could not score
            judged_at TEXT NOT NULL,
            PRIMARY KEY (record_id, judge_key)
        )
        """
    )
    db.execute("ALTER TABLE candidates ADD COLUMN provenance TEXT")
    db.execute("ALTER TABLE candidates ADD COLUMN edit_chunk_ids TEXT")
    db.execute(
        """
        CREATE TABLE production_links (     -- a log record linked to an existing item
            candidate_id TEXT NOT NULL REFERENCES candidates(id),
            record_id TEXT NOT NULL,
            similarity REAL NOT NULL,       -- question shingle Jaccard, 1.0 for the item's own
            provenance TEXT NOT NULL,       -- JSON: the record's date and signals
            linked_at TEXT NOT NULL,
            PRIMARY KEY (candidate_id, record_id)
        )
        """
    )
    db.execute("CREATE INDEX production_links_record ON production_links(record_id)")


@migrations()
def m008_batch_requests(db: Database) -> None:
    """Requests staged for a batch engine (`--batch DIR`: OpenAI Batch API, vllm run-batch, Ray
    Data) and the result lines imported for them (builder/store/batch.py).

    - `batch_requests`: one row per request written to a request file, keyed by its
      `custom_id` (the call's llm_calls cache key; "<cache key>-<step>" for the larger retry or
      the repair round a reply asked for). It holds what the import needs to read a reply the
      way the live client does and to log it: the call's stage, prompt, model, messages, the
      pydantic model of its output, and the state of its structured-output steps.
    - `batch_replies`: the id of every output/error line imported (the line's "id", else a
      hash of the line), so a file imported twice, or two overlapping files, store each reply
      once.
    """
    db.execute(
        """
        CREATE TABLE batch_requests (
            custom_id TEXT PRIMARY KEY,     -- the cache key; "<cache key>-<step>" for a follow-up
            cache_key TEXT NOT NULL,
            step INTEGER NOT NULL,          -- 0, then one per follow-up request
            status TEXT NOT NULL,           -- pending | staged | failed | continued | done
            batch_dir TEXT,                 -- the --batch folder
            file TEXT,                      -- the request file it was last written to
            job TEXT,
            stage TEXT,
            prompt_name TEXT,
            prompt_version TEXT,
            role TEXT,
            base_url TEXT,
            model TEXT,
            params TEXT,                    -- JSON, as llm_calls.params
            messages TEXT,                  -- JSON, the call's own messages (NULL once done)
            output TEXT,                    -- "module:Class" of the output's pydantic model
            state TEXT,                     -- JSON: mode, max_tokens, repair/retry flags, totals
            call_id INTEGER REFERENCES llm_calls(id),  -- its logged outcome, once it has one
            staged_at TEXT,
            updated_at TEXT
        )
        """
    )
    db.execute("CREATE INDEX batch_requests_key ON batch_requests(cache_key, step)")
    db.execute("CREATE INDEX batch_requests_file ON batch_requests(file, status)")
    db.execute(
        """
        CREATE TABLE batch_replies (
            reply_id TEXT PRIMARY KEY,      -- the line's "id", else sha256 of the line
            custom_id TEXT NOT NULL,
            outcome TEXT NOT NULL,          -- an llm_calls status | failed | continued | duplicate
            imported_at TEXT NOT NULL
        )
        """
    )


@migrations()
def m009_judge_calibration(db: Database) -> None:
    """What `golden calibrate` measured, per judge model, the versions of the prompts (and code
    rules) behind a metric, and the metric: agreement and kappa against human scores. Reports
    print it beside each judged figure and gates refuse a judge without it
    (builder/store/calibration.py). The latest measurement of a key replaces the previous one.
    """
    db.execute(
        """
        CREATE TABLE judge_calibration (
            judge_model TEXT NOT NULL,
            prompts TEXT NOT NULL,          -- "judge_claim:1 signals:1": what the metric ran
            metric TEXT NOT NULL,           -- faithfulness | correctness | answer_relevancy
            n INTEGER NOT NULL,             -- human scores paired with the judge's
            exact REAL,
            within_one REAL,
            kappa REAL,                     -- quadratic-weighted; NULL when undefined
            run_id TEXT,
            at TEXT NOT NULL,
            PRIMARY KEY (judge_model, prompts, metric)
        )
        """
    )



@migrations()
def m010_run_item_metrics(db: Database) -> None:
    """Every item's metrics of a scored run packed into one value on its `runs` row
    (builder/store/runs.py `pack_item_metrics`: floats as doubles, zlib) instead of a JSON text
    on each `run_items` row: a 10,000-query save then writes one value, not 10,000 texts.
    Runs saved before keep their per-row metrics, which read back as they did."""
    db.execute("ALTER TABLE runs ADD COLUMN item_metrics BLOB")


@migrations()
def m011_candidate_parts(db: Database) -> None:
    """`candidates.part_ids` (JSON list): the verified items a harder item was built from, every
    one of them (`parent_id` holds the first only). A composed item is wrong whenever one of its
    parts is, so the review shows the parts' decisions beside it and can list the items built on
    a rejected part. Items composed before keep what can be known for sure: their first part,
    and any other single-hop item of theirs whose question they repeat word for word and whose
    statements they hold (comparatives, differences and thresholds are written that way)."""
    db.execute("ALTER TABLE candidates ADD COLUMN part_ids TEXT")
    db.execute(
        """
        UPDATE candidates SET part_ids = (
            SELECT json_group_array(id) FROM (
                SELECT candidates.parent_id AS id, 0 AS k
                UNION ALL
                SELECT p.id, 1 FROM candidates p
                WHERE p.type = 'single_hop' AND p.id != candidates.parent_id
                  AND p.verdict = 'passed' AND p.duplicate_of IS NULL
                  AND length(p.question) > 0
                  AND instr(candidates.question, p.question) > 0
                  AND json_valid(p.fact_ids) AND json_valid(candidates.fact_ids)
                  AND json_array_length(p.fact_ids) > 0
                  AND NOT EXISTS (SELECT 1 FROM json_each(p.fact_ids) f
                                  WHERE f.value NOT IN (SELECT value FROM json_each(candidates.fact_ids)))
                ORDER BY k, id))
        WHERE type != 'single_hop' AND parent_id IS NOT NULL
        """
    )

def known_migrations() -> list[str]:
    """Names of this golden's migrations, in order; their count is the schema version."""
    return [m.name for m in migrations._migrations]  # sqlite-utils keeps them in this list


def apply_migrations(store: "Store") -> None:
    """Bring the file to the current schema; safe when several processes open it at once.
    Records the schema version in `PRAGMA user_version` too, so a newer golden's file is
    recognised even by a check that does not read the migrations table."""
    if not migrations.pending(store.db):
        return
    with store.write():
        migrations.apply(store.db)
        store.conn.execute(f"PRAGMA user_version = {len(known_migrations())}")


def schema_version(store: "Store") -> list[str]:
    """Names of the applied migrations, oldest first."""
    return [m.name for m in migrations.applied(store.db)]
