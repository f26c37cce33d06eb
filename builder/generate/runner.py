"""The generation run: plan the mix, run the answer-first waves, settle the pool, summarise.

    plan (mix -> counts per type) -> pipeline.run_waves (spans -> questions -> round trips ->
    compositions, in waves) -> dedup -> difficulty -> summary

`pipeline.py` holds the stages' order and why; this module is the run around it: options,
the stop on `--budget`, duplicates and difficulty over the pool, and the summary. Deterministic
for a given knowledge base, seed and prompt versions; every unit commits with its ledger row, so
an interrupted run resumes where it stopped.

`--docs` narrows everything (chunks, spans, counts) to the matching documents.
"""

from __future__ import annotations

import asyncio
import time

from builder.errors import InputError
from builder.llm.types import LLM, BudgetExceeded
from builder.store import candidates as cstore
from builder.store.db import Store
from builder.store.documents import list_chunks
from builder.text.markdown import section_heading

from builder.generate import dedup, difficulty, pipeline
from builder.generate.candidate import stable_id, stale_duplicates
from builder.generate.context import RunContext
from builder.generate.models import GenerateOptions, GenerateSummary
from builder.generate.plan import for_run
from builder.generate.summary import build_summary


def section_title(chunk: dict, offset: int | None = None) -> str | None:
    """"Document title > section > subsection": the context a question writer sees (two tables
    in one document, for US and Canadian prices, differ only by their section). With `offset`,
    the section is the one the offset sits in: a chunk can hold several."""
    parts = [p for p in chunk.get("heading_path") or [] if p]
    if offset is not None and (inner := section_heading(chunk["text"], offset)) \
            and inner not in parts:
        parts = parts[:1] + [inner] if parts else [inner]
    if chunk.get("title") and (not parts or parts[0] != chunk["title"]):
        parts.insert(0, chunk["title"])
    return " > ".join(parts) or chunk.get("title")


def run_generate(store: Store, llm: LLM, options: GenerateOptions,
                 observer=None) -> GenerateSummary:
    """Run the pipeline to (at most) `options.n` verified candidates; see the module doc.

    Synchronous wrapper around `arun_generate` (starts its own event loop)."""
    return asyncio.run(arun_generate(store, llm, options, observer))


async def arun_generate(store: Store, llm: LLM, options: GenerateOptions,
                        observer=None) -> GenerateSummary:
    """`observer` (progress.RunObserver, optional) is told of every call and verified item."""
    started = time.monotonic()
    ctx = RunContext.create(store, llm, options)
    ctx.observer = observer
    on_verified = observer.verified if observer is not None else None
    chunks = list_chunks(store, doc_glob=options.docs)
    if not chunks:
        where = f" matching --docs {options.docs!r}" if options.docs else ""
        raise InputError(f"no chunks{where} in {store.path}; run `golden ingest` first")
    plan, notes = for_run(options, local=getattr(llm, "local", False))
    ctx.notes.extend(notes)
    titles = {c["id"]: section_title(c) or "" for c in chunks}
    if getattr(llm, "dry_run", False):
        est = await pipeline.estimate(ctx, chunks, titles, plan)
        return build_summary(ctx, chunks, plan, dry_run=True, estimate=est,
                             seconds=time.monotonic() - started)
    if observer is not None:
        observer.start(len(pipeline.verified(ctx)))
    stopped = None
    try:
        await pipeline.run_waves(ctx, chunks, titles, plan, on_verified)
    except BudgetExceeded as exc:
        stopped = f"budget: {exc}"
    settle(ctx, chunks)
    return build_summary(ctx, chunks, plan, stopped=stopped, seconds=time.monotonic() - started)


def settle(ctx: RunContext, chunks: list[dict]) -> list[dict]:
    """Mark duplicates over the whole pool and rate difficulty; return the pool in scope."""
    everything = cstore.load_candidates(ctx.store)
    # one question, two different answers from two places: it does not pin its subject down
    clash = dedup.other_answers(everything)
    if clash:
        by_id = {c["id"]: c for c in everything}
        cstore.record_verifications(ctx.store, [{
            "candidate_id": cid, "verdict": "failed", "key": stable_id("unique", cid),
            "verification": by_id[cid]["verification"] + [{
                "check": "unique", "passed": False, "source": "code",
                "reason": f"another item asks the same and answers {other['answer']!r}"}],
            "rejection_reasons": [f"unique: another item asks the same and answers "
                                  f"{other['answer']!r}"]}
            for cid, other in sorted(clash.items())], stage="unique")
        everything = cstore.load_candidates(ctx.store)
    if stale := stale_duplicates(everything):
        cstore.release_duplicates(ctx.store, stale)
        everything = cstore.load_candidates(ctx.store)
    # Dedup is pure code but O(pool); skip it when this exact pool (ids + verdicts) was done.
    fingerprint = stable_id("dedup", sorted((c["id"], c["verdict"]) for c in everything))
    if fingerprint not in cstore.done_keys(ctx.store, "dedup"):
        cstore.record_duplicates(ctx.store, dedup.find_duplicates(everything),
                                 stage="dedup", key=fingerprint)
    ids = {c["id"] for c in chunks}
    docs = {c["document_id"] for c in chunks}
    pool = [c for c in cstore.load_candidates(ctx.store)
            if (set(c.get("chunk_ids") or []) & ids)
            or (not c.get("chunk_ids") and c.get("document_id") in docs)]
    difficulty.rate_difficulty(ctx.store, pool)
    return pool

