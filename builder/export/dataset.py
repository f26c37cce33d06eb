"""`export_dataset`: reviewed candidates -> JSONL files (one per split) and a manifest.

Two passes inside one read snapshot of the database (`builder.store.exports.read_snapshot`):

1. Keys: stream the selection's (rowid, stratum, group) as packed arrays, a few dozen bytes per
   item, never whole records; apply `--balance`, then assign splits (`splits.assign_splits`).
2. Records: fetch the selected candidates in rowid batches, build each native record (reviewer
   edits win over generated text), convert it to the requested format and append it to its
   split's file.

Records are written in rowid (creation) order, so the same database and options (seed included)
always give byte-identical files. Nothing is written unless everything succeeds (`atomic`).

Nothing exported holds a path of the author's file system (a dataset is shared or
published): a document is named by its id, its path is relative to the folder it was ingested
from (`shared_path`), and the manifest names the database file and the ingested folders by
their names only.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from builder import __version__
from builder.errors import InputError, JobError
from builder.export.atomic import AtomicOutputs, HashingWriter, check_output_path
from builder.export.formats import (
    FORMATS, NativeRecord, encode_line, parse_evidence, parse_json_list,
)
from builder.export.manifest import (
    BalanceReport, ExportedFile, Filters, Manifest, SplitShare, Stratification, StratumDeviation,
)
from builder.export.options import ExportOptions, manifest_path, split_file_path
from builder.export.splits import assign_splits, balance_targets, joined_groups, seeded_hash
from builder.store import Store, utcnow
from builder.vocabulary import DIFFICULTIES
from builder.store.documents import chunks_by_id
from builder.store.jsoncols import from_json
from builder.store.production import links_of
from builder.store.exports import (
    count_candidates, fetch_candidates, fetch_documents, fetch_tags, group_name,
    iter_selection_keys, part_links, read_snapshot,
)

SPLIT_FILES = ("one JSONL file per split, named after --out with the split before the suffix "
               "(golden.jsonl -> golden.train.jsonl); native records also carry a 'split' field")
_FETCH_BATCH = 500
_DIFF_RANK = {d: i for i, d in enumerate(DIFFICULTIES)}


@dataclass
class ExportResult:
    """What an export wrote. `files` are in split order; `warnings` are also in the manifest."""

    files: list[ExportedFile]
    manifest_path: Path
    manifest: Manifest
    warnings: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.manifest.records


@dataclass
class _Selection:
    """The selected items as packed arrays (index i = one item), plus their strata."""

    rowids: array                 # 'q'
    strata: array                 # 'I': index into `stratum_keys`
    group_keys: array             # 'Q': seeded hash of the leakage group (`joined_groups`)
    item_keys: array | None       # 'Q': seeded hash of the id (only needed by --balance)
    stratum_keys: list[tuple[str | None, str]]  # (difficulty, type), sorted
    fingerprint: str


def _stratum_sort_key(key: tuple[str | None, str]) -> tuple[int, str]:
    difficulty, type_ = key
    return (_DIFF_RANK.get(difficulty, len(DIFFICULTIES)), type_)


def _collect_selection(store: Store, options: ExportOptions) -> _Selection:
    rowids, strata, group_keys = array("q"), array("I"), array("Q")
    item_keys = array("Q") if options.balance else None
    index: dict[tuple[str | None, str], int] = {}
    fingerprint = hashlib.sha256()
    seed = options.seed
    joined = joined_groups(part_links(store))
    for key in iter_selection_keys(store, options.statuses, options.types):
        if key.difficulty is not None and key.difficulty not in _DIFF_RANK:
            raise JobError(f"candidate {key.id}: difficulty {key.difficulty!r} is not one of "
                           + ", ".join(DIFFICULTIES))
        stratum = (key.difficulty, key.type)
        s = index.get(stratum)
        if s is None:
            s = index[stratum] = len(index)
        rowids.append(key.rowid)
        strata.append(s)
        group = group_name(key.id, key.seed_fact_id)
        group_keys.append(seeded_hash(seed, "g:" + joined.get(group, group)))
        if item_keys is not None:
            item_keys.append(seeded_hash(seed, "i:" + key.id))
        fingerprint.update(f"{key.id}\0{key.updated_at}\n".encode("utf-8"))
    # Renumber strata in sorted order: the rounding rule walks strata in this order.
    ordered = sorted(index, key=_stratum_sort_key)
    remap = array("I", [0] * len(ordered))
    for new, stratum in enumerate(ordered):
        remap[index[stratum]] = new
    for i in range(len(strata)):
        strata[i] = remap[strata[i]]
    fingerprint.update(json.dumps(
        [options.statuses, options.types, options.split, options.balance, seed],
        sort_keys=True).encode("utf-8"))
    return _Selection(rowids, strata, group_keys, item_keys, ordered,
                      "fp-" + fingerprint.hexdigest()[:16])


def _describe_filters(options: ExportOptions) -> str:
    text = "status in (" + ", ".join(options.statuses) + "), duplicates excluded"
    if options.types:
        text += ", type in (" + ", ".join(options.types) + ")"
    return text


def _apply_balance(sel: _Selection, options: ExportOptions,
                   warnings: list[str]) -> BalanceReport:
    """Sub-sample `sel` in place to the requested difficulty mix; warn about what fell short."""
    weights = options.balance or {}
    spec = "difficulty=" + ":".join(weights[d] for d in DIFFICULTIES)
    by_difficulty: dict[str | None, list[int]] = {}
    for i, s in enumerate(sel.strata):
        by_difficulty.setdefault(sel.stratum_keys[s][0], []).append(i)
    unrated = len(by_difficulty.pop(None, []))
    available = {d: len(by_difficulty.get(d, [])) for d in DIFFICULTIES}
    plan = balance_targets(available, {d: Fraction(weights[d]) for d in DIFFICULTIES})
    total_available = sum(available.values())
    kept_total = sum(plan.kept.values())
    if unrated:
        warnings.append(f"--balance {spec}: {unrated} item(s) have no difficulty and were left out")
    if kept_total == 0:
        empty = [d for d in DIFFICULTIES if Fraction(weights[d]) > 0 and available[d] == 0]
        raise InputError(f"--balance {spec}: no {' or '.join(empty) or 'rated'} items among the "
                         f"{total_available} selected, so the mix cannot be met")
    if plan.short:
        shorts = "; ".join(
            f"{d} has {available[d]} of the {plan.needed[d]} a {spec} mix of all "
            f"{total_available} would need" for d in plan.short)
        kept = ", ".join(f"{d} {plan.kept[d]} of {available[d]}" for d in DIFFICULTIES)
        warnings.append(f"--balance {spec}: too few items: {shorts}; exporting {kept_total} of "
                        f"{total_available} ({kept})")
    keep = bytearray(len(sel.rowids))
    assert sel.item_keys is not None
    for d, items in by_difficulty.items():
        items.sort(key=sel.item_keys.__getitem__)
        for i in items[:plan.kept.get(d, 0)]:
            keep[i] = 1
    for name in ("rowids", "strata", "group_keys"):
        old = getattr(sel, name)
        setattr(sel, name, array(old.typecode, (v for v, k in zip(old, keep) if k)))
    sel.item_keys = None
    return BalanceReport(weights=dict(weights), available=available, kept=plan.kept,
                         short=plan.short, unrated_dropped=unrated)


def _native_records(store: Store, rows: list[dict], split_names: list[str | None],
                    dataset_version: str) -> list[NativeRecord]:
    """Native records for one batch of candidate rows (edits already applied by the query)."""
    chunk_lists = []
    for row in rows:
        chunk_lists.append([c for c in parse_json_list(row["chunk_ids"]) if isinstance(c, str)])
    chunks = chunks_by_id(store, [c for ids in chunk_lists for c in ids])
    doc_ids = {c["document_id"] for c in chunks.values()}
    doc_ids.update(row["document_id"] for row in rows if row["document_id"])
    documents = fetch_documents(store, list(doc_ids))
    tags = fetch_tags(store, [row["id"] for row in rows])
    links = links_of(store, [row["id"] for row in rows if row["provenance"]])
    records = []
    for row, chunk_ids, split in zip(rows, chunk_lists, split_names):
        missing = [c for c in chunk_ids if c not in chunks]
        if missing:
            raise JobError(f"candidate {row['id']} cites chunk {missing[0]!r}, which is not in "
                           "the knowledge base (re-ingested?); reject or regenerate it, then export")
        sources: list[str] = []
        for c in chunk_ids:
            if chunks[c]["document_id"] not in sources:
                sources.append(chunks[c]["document_id"])
        if not sources and row["document_id"]:
            sources.append(row["document_id"])
        edited = [f for f in ("question", "answer", "type", "difficulty", "chunks")
                  if row[f"edited_{f}"]]
        records.append(NativeRecord.model_validate({
            "id": row["id"], "query": row["query"], "expected_answer": row["expected_answer"],
            "relevant_chunk_ids": chunk_ids,
            "relevant_contexts": [chunks[c]["text"] for c in chunk_ids],
            "type": row["type"], "difficulty": row["difficulty"], "language": row["language"],
            "evidence": parse_evidence(row["evidence"]),
            "source_documents": [
                {"id": d, "title": documents.get(d, {}).get("title"),
                 "path": shared_path(d, documents[d]["path"]) if d in documents else None}
                for d in sources
            ],
            "tags": tags.get(row["id"], []), "seed_fact_id": row["seed_fact_id"],
            "status": row["status"], "edited": edited, "generator_model": row["generator_model"],
            "reviewer": row["reviewer"], "reviewed_at": row["reviewed_at"],
            "reject_reason": row["reject_reason"], "reject_note": row["reject_note"],
            "dataset_version": dataset_version, "split": split,
            "provenance": _provenance(row["provenance"], links.get(row["id"], [])),
        }))
    return records


def shared_path(doc_id: str, path: str) -> str:
    """A document's path as an export shows it: relative to the folder it was ingested from
    (the document id is that relative path: `sub/ship.md`), else the file's name (a file given
    on its own, a JSONL knowledge base holding the document)."""
    normal = path.replace("\\", "/")
    if normal == doc_id or normal.endswith("/" + doc_id):
        return doc_id
    return Path(path).name


def ingested_from(doc_id: str, path: str) -> str:
    """The name (never the path) of what a document was ingested from: the folder its id is
    relative to (for a file given on its own: the folder holding it), else the file holding it
    (a JSONL knowledge base)."""
    normal = path.replace("\\", "/")
    if normal == doc_id:
        return ""
    if normal.endswith("/" + doc_id):
        return Path(normal[:-len(doc_id) - 1]).name
    return Path(path).name


def _provenance(text: str | None, links: list[dict]) -> dict | None:
    """The export's provenance of a production item: the promoted record and every other
    record linked to it (JSON column; None for generated items or a value that is not one)."""
    value = from_json(text)
    if not isinstance(value, dict) or not isinstance(value.get("record_id"), str):
        return None
    return {
        "source": str(value.get("source") or "production_log"), "record_id": value["record_id"],
        "at": value.get("at"), "session_id": value.get("session_id"),
        "picked_as": str(value.get("picked_as") or "selected"),
        "signals": [str(s) for s in value.get("signals") or []], "cause": value.get("cause"),
        "evidence": [str(e) for e in value.get("evidence") or []],
        "linked_records": [
            {"record_id": link["record_id"], "at": (link["provenance"] or {}).get("at"),
             "signals": list((link["provenance"] or {}).get("signals") or []),
             "cause": (link["provenance"] or {}).get("cause"), "similarity": link["similarity"]}
            for link in links if link["record_id"] != value["record_id"]],
    }


def _sorted_counts(counts: dict[str, dict[str, dict[str, int]]],
                   split_order: list[str]) -> dict[str, dict[str, dict[str, int]]]:
    """Splits in their given order, types by name, difficulties easy, medium, hard, unrated."""
    return {
        split: {t: dict(sorted(by_diff.items(), key=lambda kv: _DIFF_RANK.get(kv[0], 9)))
                for t, by_diff in sorted(counts[split].items())}
        for split in split_order if split in counts
    }


def _concat_sha256(writers: list[HashingWriter]) -> str:
    """sha256 of the files' bytes concatenated in order (re-reads them only when there are 2+)."""
    if len(writers) == 1:
        return writers[0].sha256.hexdigest()
    digest = hashlib.sha256()
    for w in writers:
        w.flush()
        with open(w.path, "rb") as fh:
            while block := fh.read(1 << 20):
                digest.update(block)
    return digest.hexdigest()


def _split_selection(sel: _Selection, options: ExportOptions,
                     warnings: list[str]) -> tuple[array, Stratification | None]:
    """Split index per selected item (all 0 without --split) and the stratification report."""
    if not options.split:
        return array("B", bytes(len(sel.rowids))), None
    names = list(options.split)
    assignment = assign_splits(sel.strata, sel.group_keys, len(sel.stratum_keys),
                               list(options.split.values()))
    deviations = [
        StratumDeviation(difficulty=sel.stratum_keys[d.stratum][0],
                         type=sel.stratum_keys[d.stratum][1], split=names[d.split],
                         target=d.target, actual=d.actual)
        for d in assignment.deviations
    ]
    total = max(1, len(sel.rowids))
    achieved = [SplitShare(split=name, target=target, records=records,
                           share=round(records / total, 4))
                for name, target, records in zip(names, assignment.overall, assignment.totals)]
    if deviations:
        strata_off = len({(d.difficulty, d.type) for d in deviations})
        warnings.append(
            f"--split: keeping question variants and harder items' parts together left {strata_off} "
            "difficulty x type stratum(s) off their exact split targets; see "
            "stratification.deviations in the manifest")
    off = [a for a in achieved if a.records != a.target]
    if off:
        warnings.append("--split: a leakage group is larger than any split's room, so "
                        + ", ".join(f"{a.split} holds {a.records} (target {a.target})"
                                    for a in off))
    return assignment.split_of, Stratification(
        proportions=dict(options.split), groups=assignment.groups, achieved=achieved,
        deviations=deviations)


def _sources_of(store: Store, documents: set[str]) -> set[str]:
    """The names of the folders (or files) the exported documents were ingested from."""
    names = {ingested_from(d, row["path"]) for d, row in fetch_documents(store, list(documents)).items()}
    return names - {""}


def _check_not_overwriting_the_database(store: Store, targets: list[Path]) -> None:
    if str(store.path) == ":memory:":
        return
    db = store.path.resolve()
    protected = {db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")}
    for target in targets:
        if target.resolve() in protected:
            raise InputError("output would overwrite the database", path=str(target))


def export_dataset(store: Store, options: ExportOptions) -> ExportResult:
    """Export the selected candidates as JSONL plus `<out>.manifest.json`; see the module doc.

    Raises InputError (nothing written) for an output path that cannot be written
    (`check_output_path`; a missing folder is created), an empty selection or a
    `--balance` mix that no item can satisfy; JobError when the database is inconsistent (a
    candidate citing a chunk that is gone).
    """
    out = Path(options.out)
    check_output_path(out)
    convert = FORMATS[options.format]
    warnings: list[str] = []
    with read_snapshot(store):
        sel = _collect_selection(store, options)
        if not sel.rowids:
            raise InputError(f"nothing to export: no candidate matches {_describe_filters(options)}"
                             f" ({count_candidates(store)} candidates in the database)")
        balance = _apply_balance(sel, options, warnings) if options.balance else None

        split_names: list[str | None] = list(options.split) if options.split else [None]
        split_of, stratification = _split_selection(sel, options, warnings)

        dataset_version = options.dataset_version or sel.fingerprint
        targets = ([split_file_path(out, name) for name in options.split]
                   if options.split else [out])
        _check_not_overwriting_the_database(store, targets + [manifest_path(out)])
        counts: dict[str, dict[str, dict[str, int]]] = {}
        documents: set[str] = set()
        sources: set[str] = set()
        with AtomicOutputs() as outputs:
            writers = [outputs.open(t) for t in targets]
            for start in range(0, len(sel.rowids), _FETCH_BATCH):
                rowids = sel.rowids[start:start + _FETCH_BATCH]
                splits = split_of[start:start + _FETCH_BATCH]
                rows = fetch_candidates(store, rowids)
                if len(rows) != len(rowids):
                    raise JobError("candidates changed during the export; run it again")
                names = [split_names[k] for k in splits]
                for rec, k in zip(_native_records(store, rows, names, dataset_version), splits):
                    writers[k].write_line(encode_line(convert(rec)))
                    by_type = counts.setdefault(split_names[k] or "all", {})
                    by_diff = by_type.setdefault(rec.type, {})
                    diff = rec.difficulty or "unrated"
                    by_diff[diff] = by_diff.get(diff, 0) + 1
                    documents.update(d.id for d in rec.source_documents)
            sources = _sources_of(store, documents)

            files = [ExportedFile(split=name, path=t.name, records=w.records,
                                  sha256=w.sha256.hexdigest())
                     for name, t, w in zip(split_names, targets, writers)]
            content_sha256 = _concat_sha256(writers)
            manifest = Manifest(
                golden_version=__version__, created_at=utcnow(), format=options.format,
                dataset_version=dataset_version, seed=options.seed,
                database=store.path.name if str(store.path) != ":memory:" else ":memory:",
                knowledge_base=sorted(sources),
                filters=Filters(statuses=list(options.statuses),
                                types=list(options.types) if options.types else None),
                split_files=SPLIT_FILES if options.split else "one JSONL file",
                balance=balance, stratification=stratification,
                records=sum(f.records for f in files), files=files,
                content_sha256=content_sha256,
                counts=_sorted_counts(counts, [name or "all" for name in split_names]),
                documents_covered=len(documents), documents=sorted(documents),
                warnings=warnings,
            )
            mpath = manifest_path(out)
            mwriter = outputs.open(mpath)
            mwriter.write(manifest.model_dump_json(indent=2).encode("utf-8") + b"\n")
            outputs.commit()
    return ExportResult(files=files, manifest_path=mpath, manifest=manifest, warnings=warnings)
