"""The generation pipeline: orders the stages and decides how much work each round asks for.

    plan (once) -> rounds of: facts -> questions (single_hop) -> evolutions -> verification
                              -> dedup -> difficulty

Each round first finishes what an earlier run left (pending verification), then counts the
verified, non-duplicate candidates per type in the pool and asks for exactly the shortfall
(round 1) or the shortfall divided by the observed pass rate (later rounds, at most 4x: strict
verification passes a third of a small model's single-hop questions). So a run with nothing
missing makes no LLM calls, and a scripted perfect model yields exactly the planned mix. An
evolved type with GIVE_UP_AFTER judged items and none passing, or with no material in the KB, is
not asked for again (measured: the embedded 0.5B wrote 0 usable multi-hop questions in 10
tries); its missing places go to single-hop items, and the summary says so. Nothing is
relabelled to fill a quota. LLM facts are extracted for about 0.6 chunk per wanted item (plan.py; facts cut out by
code cost nothing, so up to TEXT_FACTS_CHUNKS chunks get them); a round that finds too little
material for what it asked adds 2 chunks per missing item to the next
round's budget. Every unit is committed with its ledger row, so Ctrl-C, a crash or `--budget`
at any point loses at most the calls in flight; the next run resumes.

`--docs` narrows everything (chunks, material, counts) to the matching documents.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import Counter, defaultdict

from rich.progress import Progress

from builder.errors import InputError
from builder.llm.types import LLM, BudgetExceeded
from builder.store import candidates as cstore
from builder.store.db import Store
from builder.store.documents import list_chunks

from builder.generate import (
    dedup, difficulty, estimate, evolve, facts, questions, unanswerable, verify,
)
from builder.generate.candidate import stable_id
from builder.generate.context import RunContext
from builder.generate.material import (
    annotate, pick_all, stale_facts, superseded_chunks,
)
from builder.generate.models import GenerateOptions, GenerateSummary
from builder.generate.plan import (
    chunk_budget, document_cap, select_chunks, steer_for_difficulty, type_targets,
)
from builder.generate.statements import section_heading, step_at
from builder.generate.summary import build_summary
from builder.generate.worth import assess, common_terms

# In order of scarcity: the rarer kind picks its material (and document cap room) first.
# Unanswerable items are proposed in one batch per round instead (unanswerable.py).
EVOLVED = ("temporal", "ambiguous", "multi_hop", "comparative", "reasoning")
GIVE_UP_AFTER = 3  # judged items of an evolved type, none passing: the run asks for no more
FACTS_PER_CHUNK = 3  # single-hop facts asked per chunk per round (spread over the KB)
TEXT_FACTS_CHUNKS = 300  # chunks given facts per round when facts come from code


def section_title(chunk: dict, offset: int | None = None) -> str | None:
    """"Document title > section > subsection": the context a fact's question writer sees (two
    tables in one document, for US and Canadian prices, differ only by their section). With
    `offset`, the section is the one the fact sits in: a chunk can hold several ("D1 -
    Developer 1" and "D2 - Developer 2" of a rubric), and a rubric entry's question must name
    its own level."""
    parts = [p for p in chunk.get("heading_path") or [] if p]
    if offset is not None and (inner := section_heading(chunk["text"], offset)) \
            and inner not in parts:
        parts = parts[:1] + [inner] if parts else [inner]
    if chunk.get("title") and (not parts or parts[0] != chunk["title"]):
        parts.insert(0, chunk["title"])
    return " > ".join(parts) or chunk.get("title")


def run_generate(store: Store, llm: LLM, options: GenerateOptions,
                 progress: Progress | None = None) -> GenerateSummary:
    """Run the pipeline to (at most) `options.n` verified candidates; see the module doc.

    Synchronous wrapper around `arun_generate` (starts its own event loop)."""
    return asyncio.run(arun_generate(store, llm, options, progress))


async def arun_generate(store: Store, llm: LLM, options: GenerateOptions,
                        progress: Progress | None = None) -> GenerateSummary:
    started = time.monotonic()
    ctx = RunContext.create(store, llm, options, progress)
    chunks = list_chunks(store, doc_glob=options.docs)
    if not chunks:
        where = f" matching --docs {options.docs!r}" if options.docs else ""
        raise InputError(f"no chunks{where} in {store.path}; run `golden ingest` first")
    plan, notes = type_targets(options.n, options.mix, options.types, options.min_defensive)
    ctx.notes.extend(notes)
    plan, notes = steer_for_difficulty(plan, options.difficulty, options.mix is not None)
    ctx.notes.extend(notes)
    if getattr(llm, "dry_run", False):
        est = await estimate.estimate_run(ctx, chunks, plan)
        return build_summary(ctx, chunks, plan, dry_run=True, estimate=est,
                             seconds=time.monotonic() - started)
    stopped = None
    try:
        await _rounds(ctx, chunks, plan)
    except BudgetExceeded as exc:
        stopped = f"budget: {exc}"
    return build_summary(ctx, chunks, plan, stopped=stopped, seconds=time.monotonic() - started)


def _scope(ctx: RunContext, chunks: list[dict]) -> list[dict]:
    """The candidates citing one of `chunks` (or, citing none, of one of their documents)."""
    ids = {c["id"] for c in chunks}
    docs = {c["document_id"] for c in chunks}
    return [c for c in cstore.load_candidates(ctx.store)
            if (set(c.get("chunk_ids") or []) & ids)
            or (not c.get("chunk_ids") and c.get("document_id") in docs)]


async def _settle(ctx: RunContext, chunks: list[dict]) -> list[dict]:
    """Verify pending candidates, mark duplicates, rate difficulty; return the pool in scope."""
    pool = _scope(ctx, chunks)
    facts_by_id = {f["id"]: f for f in cstore.load_facts(ctx.store)}
    await verify.verify_pending(ctx, pool, facts_by_id)
    everything = cstore.load_candidates(ctx.store)
    if verify.reject_other_answers(ctx, everything):
        everything = cstore.load_candidates(ctx.store)
    # Dedup is pure code but O(pool); skip it when this exact pool (ids + verdicts) was done.
    fingerprint = stable_id("dedup", sorted((c["id"], c["verdict"]) for c in everything))
    if fingerprint not in cstore.done_keys(ctx.store, "dedup"):
        cstore.record_duplicates(ctx.store, dedup.find_duplicates(everything),
                                 stage="dedup", key=fingerprint)
    pool = _scope(ctx, chunks)
    difficulty.rate_difficulty(ctx.store, pool)
    return pool


def _counts(pool: list[dict]) -> tuple[Counter, Counter, dict[str, float], Counter]:
    """Verified non-duplicate counts per type and per document, pass rate per type, and how
    many of each type were judged (duplicates included)."""
    verified, per_doc, passed, judged = Counter(), Counter(), Counter(), Counter()
    for c in pool:
        if c["verdict"] in ("passed", "failed"):
            judged[c["type"]] += 1  # a duplicate is an attempt too (a model repeating itself)
        if c.get("duplicate_of"):
            continue
        if c["verdict"] == "passed":
            verified[c["type"]] += 1
            per_doc[c["document_id"]] += 1
            passed[c["type"]] += 1
    rate = {t: (passed[t] + 1) / (judged[t] + 1) for t in judged}
    return verified, per_doc, rate, judged


async def _rounds(ctx: RunContext, chunks: list[dict], plan: dict[str, int]) -> None:
    """Up to `max_rounds` rounds towards `plan` (verified, non-duplicate candidates per type).

    Each round: settle the pool (verify what is pending, mark duplicates, rate difficulty);
    stop when no type is short; give up on a type with GIVE_UP_AFTER judged items and none
    passing; ask for the shortfall (round 1) or the shortfall over the observed pass rate
    (later rounds, at most 2x); pick chunks for facts (more when facts come from code, or when
    the last round ran out of material) and extract facts; then choose material for the
    evolved kinds first (scarce, so they reserve their room under each document's cap), then
    single-hop facts, then write questions, evolutions and unanswerable proposals. A later
    round that makes no LLM call stops early (nothing more to find). The pool is settled once
    more at the end, so every candidate written has a verdict.

    Deterministic for a given KB, seed and prompt versions; every unit commits with its ledger
    row, so an interrupted call resumes where it stopped and repeats no finished work.
    """
    opts = ctx.options
    ctx.common = common_terms(chunks)
    ctx.superseded = superseded_chunks({c["id"]: c for c in chunks})
    n_docs = len({c["document_id"] for c in chunks})
    cap = document_cap(opts.n, n_docs)
    extra_chunks = 0  # grows only when a round ran out of material, so facts calls stay ~0.6 n
    target = dict(plan)  # the plan, with the places of kinds this KB or model cannot supply
    for round_no in range(1, opts.max_rounds + 1):   # moved to single-hop items
        pool = await _settle(ctx, chunks)
        verified, per_doc, rate, judged = _counts(pool)
        for t in [t for t in target if t != "single_hop" and target[t] > verified[t]
                  and judged[t] >= GIVE_UP_AFTER and not verified[t]]:
            _give_up(ctx, target, t, verified[t],  # the model cannot write this kind
                     f"none of {judged[t]} passed verification (a stronger --model writes them)")
        short = {t: target[t] - verified[t] for t in target if target[t] > verified[t]}
        if not short:
            return
        ask = dict(short) if round_no == 1 else {
            t: min(4 * s, math.ceil(s / max(rate.get(t, 1.0), 0.25))) for t, s in short.items()}

        budget = min(len(chunks), chunk_budget(opts.n, len(chunks)) + extra_chunks)
        if ctx.facts_mode == "text":  # facts cost no call: give the pickers more material
            budget = min(len(chunks), max(budget, TEXT_FACTS_CHUNKS))
        selected = select_chunks(ctx.store, chunks, budget, opts.seed)
        await facts.extract_facts(ctx, selected)
        scope_ids = {c["id"] for c in chunks}
        by_id = {c["id"]: c for c in chunks}
        name, version = facts.extractor(ctx)
        all_facts = [f for f in cstore.load_facts(ctx.store, prompt_version=version, prompt_name=name)
                     if f["chunk_id"] in scope_ids]
        for f in all_facts:
            f["title"] = section_title(by_id[f["chunk_id"]], f.get("evidence_start"))
            f["step"] = step_at(by_id[f["chunk_id"]]["text"], f.get("evidence_start"))
        ctx.stale = stale_facts(all_facts, {c["id"]: c for c in chunks}, ctx.superseded)
        planned_doc: Counter = Counter(per_doc)
        calls_before = sum(ctx.calls.values())

        # Scarce material first: evolutions reserve their share of each document's cap before
        # single-hop questions (plentiful) take what is left.
        chosen = []
        starved = 0  # items asked for that found no material
        kinds = {t for t in EVOLVED if ask.get(t)}
        if kinds:
            annotate(all_facts, {c["id"]: c for c in chunks})
            materials = pick_all(all_facts, ctx.store, opts.seed, kinds)
            for kind in kinds - {"temporal"}:  # a stale fact only says what used to hold
                materials[kind] = [m for m in materials.get(kind, [])
                                   if not any(f["id"] in ctx.stale for f in m.facts)]
            done = cstore.done_keys(ctx.store, evolve.STAGE)
            for kind in EVOLVED:
                want = ask.get(kind, 0)
                fresh = [m for m in materials.get(kind, []) if evolve.evolve_key(ctx, m) not in done]
                if want and not fresh and round_no == 1:
                    _give_up(ctx, target, kind, verified[kind], "the knowledge base offers no material")
                    ask["single_hop"] = ask.get("single_hop", 0) + want
                    continue
                for m in fresh:
                    if want <= 0:
                        break
                    if planned_doc[m.document_id] >= cap:
                        continue
                    planned_doc[m.document_id] += 1
                    chosen.append(m)
                    want -= 1
                starved += max(want, 0)
        if ask.get("single_hop"):
            picked = _single_hop_facts(ctx, all_facts, pool, ask["single_hop"], planned_doc, cap)
            starved += max(0, ask["single_hop"] - len(picked))
            await questions.write_questions(ctx, picked, ctx.common)
        if chosen:
            parents = {c["seed_fact_id"]: c["id"] for c in cstore.load_candidates(ctx.store)
                       if c["type"] == "single_hop" and c.get("seed_fact_id")}
            await evolve.evolve(ctx, chosen, parents)
        if ask.get("unanswerable"):
            await unanswerable.propose(ctx, chunks, all_facts, ask["unanswerable"])

        if starved and len(selected) < len(chunks):
            extra_chunks += max(4, 2 * starved)  # more chunks -> more facts -> more pairs
        elif sum(ctx.calls.values()) == calls_before and round_no > 1:
            await _settle(ctx, chunks)
            ctx.notes.append("stopped early: no more material for the types still short")
            return
    await _settle(ctx, chunks)


def _give_up(ctx: RunContext, target: dict[str, int], kind: str, have: int, why: str) -> None:
    """Stop asking for `kind`; its missing places go to single-hop items when those are allowed
    (nothing is relabelled: more single-hop questions are written instead). Noted once."""
    missing = target[kind] - have
    target[kind] = have
    moved = ""
    if "single_hop" in target and missing > 0:
        target["single_hop"] += missing
        moved = f"; its {missing} place(s) go to single_hop"
    ctx.notes.append(f"{kind}: {why}{moved}")


def _single_hop_facts(ctx: RunContext, all_facts: list[dict], pool: list[dict], want: int,
                      planned_doc: Counter, cap: int) -> list[dict]:
    """Facts not yet asked about, up to FACTS_PER_CHUNK per chunk, chunks round-robin over
    documents in seeded order, respecting the per-document cap. Only question-worthy facts
    (worth.py); within a chunk, those whose answer code chooses come first (values, then labels,
    definitions and names), then the rest."""
    worth = {f["id"]: assess(f, ctx.common) for f in all_facts}
    ctx.worth = Counter("stale: a newer statement supersedes it" if f["id"] in ctx.stale else
                        worth[f["id"]].kind if worth[f["id"]].answer else
                        worth[f["id"]].reason or "no answer code can choose"
                        for f in all_facts)
    used = {c["seed_fact_id"] for c in pool if c["type"] == "single_hop"}
    for info in cstore.done_infos(ctx.store, questions.STAGE):
        used.update(info.get("fact_ids") or [])
    # The walk order is built from ALL facts (used ones are skipped during the walk), so a
    # resumed run walks the same order as an uninterrupted one and picks the same facts.
    by_chunk: dict[str, list[dict]] = defaultdict(list)
    for f in all_facts:
        by_chunk[f["chunk_id"]].append(f)
    rng = random.Random(ctx.options.seed)
    by_doc: dict[str, list[str]] = defaultdict(list)
    for cid in sorted(by_chunk):
        by_doc[by_chunk[cid][0]["document_id"]].append(cid)
    docs = sorted(by_doc)
    rng.shuffle(docs)
    for d in docs:
        rng.shuffle(by_doc[d])
    for cid in by_chunk:  # no fragments ("for store purchases, on the date on the receipt.")
        by_chunk[cid] = sorted((f for f in by_chunk[cid]
                                if f["id"] not in used and not f["text"][:1].islower()
                                and f["id"] not in ctx.stale and worth[f["id"]].answer),
                               key=lambda f: worth[f["id"]].priority)
    for d in docs:
        by_doc[d] = [cid for cid in by_doc[d] if by_chunk[cid]]
    picked: list[dict] = []
    while want > 0 and any(by_doc[d] for d in docs):
        for d in docs:
            if want <= 0:
                break
            if not by_doc[d]:
                continue
            cid = by_doc[d].pop(0)
            room = min(FACTS_PER_CHUNK, want, cap - planned_doc[d])
            if room <= 0:
                by_doc[d].clear()
                continue
            group = by_chunk[cid][:room]
            planned_doc[d] += len(group)
            want -= len(group)
            picked.extend(group)
    return picked
