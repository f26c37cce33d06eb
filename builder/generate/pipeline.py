"""The answer-first pipeline: spans chosen by code, questions written for them, round trips
checked by code, harder items composed from verified parts.

    spans (code, once) -> waves of: questions for the next spans -> code checks
                                    -> retrieval round trips -> compositions from what passed

Work comes in *waves* so that verified items appear early (the first wave is small) and calls of
one prompt run back to back: a local llama.cpp server reuses the computed prompt prefix of the
previous request, so the fixed instructions at the head of each prompt are read once per wave,
not once per call. A wave writes its questions (candidates stored `pending`, or `failed` by the
code checks), then reads them (verdicts stored), then composes harder items from the verified
ones. Every unit commits with its ledger row: Ctrl-C loses at most the calls in flight, and a
second run resumes (pending items are read first; done units are not asked again).

The run stops when `n` items are verified, when the spans run out, or after `max_calls`
LLM calls (a ceiling of CALLS_PER_ITEM per wanted item, so a knowledge base that yields little
cannot run for ever).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict

from builder.store import candidates as cstore

from builder.generate import compose, reader
from builder.generate.candidate import clean_question, make_candidate, stable_id
from builder.generate.context import RunContext, run_units
from builder.generate.form import question_problems
from builder.generate.models import WrittenQuestion
from builder.generate.spans import (Span, common_names, find_bridges, find_pairs, find_value_pairs,
                                    spans_of_chunk)
from builder.text.language import language_name

# How the question writer is told what kind of answer to ask for (the prompt is in English).
KIND_NAMES = {"amount": "an amount of money", "percent": "a percentage", "duration": "a duration",
              "date": "a date", "year": "a year", "quantity": "a quantity with its unit",
              "count": "a number of things", "cell": "a value from a table",
              "name": "a name"}
STAGE_QUESTION = "question"
STAGE_READ = "read"
STAGE_WAVE = "wave"      # the spans each wave asks, so a resumed run finishes a cut wave first
FIRST_WAVE = 3
WAVE = 8
CALLS_PER_ITEM = 6
BUNDLES_PER_ITEM = 3   # span pairs asked early per wanted composed item
EXTRA_PARTS = 0.25     # share of n a run may verify beyond n while harder items are short


def plan_spans(chunks: list[dict], titles: dict[str, str], seed: int,
               plan: dict[str, int] | None = None) -> list[Span]:
    """Every accepted span, ordered for asking: best kind first within each document, documents
    taken in turn (seeded order), so the first waves cover the knowledge base. When the plan
    wants harder items, the two halves of what they are built from -- parallel spans, related
    values, bridges -- are asked side by side early (a bundle, then a single span, in turn):
    a composed item needs both halves verified, which a run that asks them far apart rarely gets."""
    spans: list[Span] = []
    for c in chunks:
        spans.extend(spans_of_chunk(c, titles[c["id"]]))
    common = common_names(spans, len(chunks), {c["id"]: c["text"] for c in chunks})
    spans = [s for s in spans if not (s.kind == "name" and s.answer.casefold() in common)]
    parallel = find_pairs(spans)  # labels parallel spans, so their questions name what tells them apart
    by_doc: dict[str, list[Span]] = defaultdict(list)
    for s in spans:
        by_doc[s.document_id].append(s)
    rng = random.Random(seed)
    docs = sorted(by_doc)
    rng.shuffle(docs)
    for d in docs:
        group = by_doc[d]
        rng.shuffle(group)
        group.sort(key=lambda s: s.priority)
        # one span per statement first: several values of one sentence make similar questions
        seen: set[str] = set()
        first = [s for s in group if not (s.fact["id"] in seen or seen.add(s.fact["id"]))]
        rest = [s for s in group if s not in first]
        by_doc[d] = first + rest
    singles: list[Span] = []
    while any(by_doc[d] for d in docs):
        for d in docs:
            if by_doc[d]:
                singles.append(by_doc[d].pop(0))
    bundles = _bundles(spans, parallel, plan or {})
    if not bundles:
        return singles
    ordered: list[Span] = []
    placed: set[str] = set()
    rest = iter(singles)
    for bundle in bundles:
        for s in bundle:
            if s.id not in placed:
                ordered.append(s)
                placed.add(s.id)
        for s in rest:
            if s.id not in placed:
                ordered.append(s)
                placed.add(s.id)
                break
    ordered.extend(s for s in singles if s.id not in placed)
    return ordered


def _bundles(spans: list[Span], parallel: list, plan: dict[str, int]) -> list[tuple[Span, Span]]:
    """The span pairs harder items of the plan are built from, a few per wanted item (both
    halves must pass their own round trips), kinds taken in turn."""
    from_pairs = sum(plan.get(k, 0) for k in ("comparative", "reasoning", "ambiguous"))
    lists: list[list[tuple[Span, Span]]] = []
    if from_pairs:
        taken = {s.id for p in parallel for s in (p.a, p.b)}
        # parallel spans that are comparable values first (they serve every pair kind)
        pairs = [(p.a, p.b) for p in parallel if p.comparable] + [
            (p.a, p.b) for p in find_value_pairs(spans, taken)]
        lists.append(_spread(pairs)[: BUNDLES_PER_ITEM * from_pairs])
    if plan.get("multi_hop", 0):
        lists.append(_spread([(b.first, b.second) for b in find_bridges(spans)])
                     [: BUNDLES_PER_ITEM * plan["multi_hop"]])
    out: list[tuple[Span, Span]] = []
    for i in range(max((len(x) for x in lists), default=0)):
        out.extend(x[i] for x in lists if i < len(x))
    return out


def _spread(pairs: list[tuple[Span, Span]]) -> list[tuple[Span, Span]]:
    """`pairs` with their documents taken in turn, each document's own order kept: one table
    of twenty parallel rows must not fill every harder item of a run."""
    by_doc: dict[str, list[tuple[Span, Span]]] = defaultdict(list)
    for pair in pairs:
        by_doc[pair[0].document_id].append(pair)
    out: list[tuple[Span, Span]] = []
    queues = list(by_doc.values())
    for i in range(max((len(q) for q in queues), default=0)):
        out.extend(q[i] for q in queues if i < len(q))
    return out


def _prompts(ctx: RunContext, *names: str) -> dict[str, str]:
    return {n: ctx.prompts[n].version for n in names}


async def write_questions(ctx: RunContext, kb: reader.KnowledgeIndex, spans: list[Span]) -> None:
    """One question call per span; the candidate is stored pending, or failed by the code checks
    (with the ledger row, in one transaction). A failed call stores nothing: asked again next run.
    A span whose statement has close rivals (reader.telling_words) must have its question name
    what tells it from them: the round trip rejects a question that fits a rival as well."""
    done = cstore.done_keys(ctx.store, STAGE_QUESTION)

    async def one(span: Span) -> None:
        key = stable_id(STAGE_QUESTION, span.id, ctx.prompts["question"].version)
        if key in done:
            return
        mention = span.mention or reader.telling_words(span.statement, span.answer,
                                                       span.language, kb)
        res = await ctx.call("question", {
            "language": language_name(span.language), "title": span.title or "-",
            "passage": _passage(span), "answer": span.answer, "kind": KIND_NAMES[span.kind],
            "mention": [{"text": ", ".join(mention)}] if mention else []},
            WrittenQuestion)
        if not res.ok:
            return
        question = clean_question(res.value.question)
        answer = span.answer_for(question)
        cand = make_candidate(
            ctype="single_hop", question=question, answer=answer,
            facts=[{**span.fact, "document_id": span.document_id}], language=span.language,
            prompts=_prompts(ctx, "question", "reader"), model=res.model or ctx.model(),
            seed_fact_id=span.fact["id"], document_id=span.document_id, key=span.id)
        problems = question_problems(question, answer=answer, language=span.language,
                                     statement=span.statement, mention=mention,
                                     title=span.title)
        if problems:
            cand["verdict"] = "failed"
            cand["rejection_reasons"] = [f"form: {p}" for p in problems]
            cand["verification"] = [{"check": "form", "passed": False, "reason": p,
                                     "source": "code"} for p in problems]
        cstore.record_candidates(ctx.store, [cand], stage=STAGE_QUESTION, key=key,
                                 info={"span": span.id, "candidate_id": cand["id"]})

    await run_units(ctx, "questions", spans, one)


async def judge_question(ctx: RunContext, kb: reader.KnowledgeIndex, question: str,
                         span: Span) -> list[str]:
    """Every check a written single-hop question goes through, in the pipeline's order: the
    code checks, then (only if they pass) the retrieval round trip. The rejection reasons;
    none when it passes. The waves run the same two steps apart (all questions of a wave, then
    all round trips), so that calls of one prompt run back to back."""
    problems = question_problems(question, answer=span.answer, language=span.language,
                                 statement=span.statement, mention=span.mention, title=span.title)
    if problems:
        return [f"form: {p}" for p in problems]
    reading = await reader.round_trip(ctx, question, span.answer, span.chunk_id, span.language, kb)
    return [] if reading.problem is None else [f"round_trip: {reading.problem}"]


def _passage(span: Span) -> str:
    """The statement with the sentence before it in its chunk (what "it" refers to)."""
    return span.statement


async def read_pending(ctx: RunContext, kb: reader.KnowledgeIndex, on_verified=None) -> None:
    """The retrieval round trip for every pending single-hop candidate; verdicts stored."""
    pending = [c for c in cstore.load_candidates(ctx.store, verdict="pending")
               if c["type"] == "single_hop"]

    async def one(cand: dict) -> None:
        reading = await reader.round_trip(ctx, cand["question"], cand["answer"],
                                          cand["chunk_ids"][0], cand["language"] or "en", kb)
        if reading.status != "ok":
            return  # the call failed: stays pending, read again next run
        passed = reading.problem is None
        check = {"check": "round_trip", "passed": passed, "reason": reading.problem or "",
                 "source": "code+reader", "answer": reading.answer, "rank": reading.rank}
        cstore.record_verification(
            ctx.store, cand["id"], verification=[check], verdict="passed" if passed else "failed",
            rejection_reasons=[] if passed else [f"round_trip: {reading.problem}"],
            stage=STAGE_READ, key=stable_id(STAGE_READ, cand["id"]))
        if passed and on_verified:
            on_verified({**cand, "verdict": "passed"})

    await run_units(ctx, "round trips", pending, one)


def _pass_rate(ctx: RunContext) -> float:
    """Share of judged single-hop questions that passed (optimistic before any is judged),
    so a wave asks for about what is still missing and no more."""
    judged = [c["verdict"] for c in cstore.load_candidates(ctx.store)
              if c["type"] == "single_hop" and c["verdict"] in ("passed", "failed")]
    return max(0.2, (judged.count("passed") + 1) / (len(judged) + 1))


def _wants_more(ctx: RunContext, plan: dict[str, int]) -> bool:
    """Fewer verified items than wanted; or harder items still short and room for a few more
    single-hop items (up to EXTRA_PARTS of n): single-hop items are what harder ones are built
    from, and a run that stops at n single-hop items leaves the dataset all easy."""
    n = sum(plan.values())
    done = verified(ctx)
    if len(done) < n:
        return True
    short = any(sum(c["type"] == k for c in done) < plan.get(k, 0) for k in compose.COMPOSED)
    return short and len(done) < n + math.ceil(EXTRA_PARTS * n)


def verified(ctx: RunContext) -> list[dict]:
    return [c for c in cstore.load_candidates(ctx.store, verdict="passed") if not c.get("duplicate_of")]


async def run_waves(ctx: RunContext, chunks: list[dict], titles: dict[str, str],
                    plan: dict[str, int], on_verified=None) -> None:
    """Waves until the plan's total is verified, the spans run out, or the call ceiling."""
    n = sum(plan.values())
    spans = plan_spans(chunks, titles, ctx.options.seed, plan)
    ctx.spans.update(s.kind for s in spans)
    asked = {i.get("span") for i in cstore.done_infos(ctx.store, STAGE_QUESTION)}
    waves = sorted(cstore.done_infos(ctx.store, STAGE_WAVE), key=lambda i: i.get("index", 0))
    planned = {sid for w in waves for sid in w.get("spans", [])}
    todo = [s for s in spans if s.id not in asked and s.id not in planned]
    max_calls = CALLS_PER_ITEM * n
    kb = reader.KnowledgeIndex(chunks, titles)
    # a wave cut short (Ctrl-C, a crash, --budget) is finished first, as the same wave: what
    # is composed after it is then what an uninterrupted run composed
    by_id = {s.id: s for s in spans}
    unfinished = [by_id[sid] for sid in (waves[-1].get("spans", []) if waves else [])
                  if sid not in asked and sid in by_id]
    if unfinished:
        await write_questions(ctx, kb, unfinished)
    await read_pending(ctx, kb, on_verified)
    await compose.compose_from_verified(ctx, kb, spans, plan, on_verified)
    # Small waves are for the embedded model (one request at a time, so small waves show a
    # verified item early). An endpoint (live or a batch engine, which answers a whole pass at
    # once, hours later) gets waves as large as what is missing: the same waves either way, so
    # the same replies make the same candidates live or batched.
    batched = not getattr(ctx.llm, "local", False)
    wave = (WAVE if waves else FIRST_WAVE) if not batched else len(todo)
    index = len(waves)
    while todo and _wants_more(ctx, plan) and sum(ctx.calls.values()) < max_calls:
        done = verified(ctx)
        short = n - len(done)
        # composed items still wanted are made from parts already there or coming: a wave
        # asks for the single-hop items still missing, over the pass rate seen so far
        composed_missing = sum(max(0, plan.get(k, 0) - sum(c["type"] == k for c in done))
                               for k in compose.COMPOSED)
        size = min(wave, math.ceil(max(1, short - composed_missing) / _pass_rate(ctx)))
        batch, todo = todo[:size], todo[size:]
        cstore.record_candidates(ctx.store, [], stage=STAGE_WAVE,
                                 key=stable_id(STAGE_WAVE, index, [s.id for s in batch]),
                                 info={"index": index, "spans": [s.id for s in batch]})
        index += 1
        await write_questions(ctx, kb, batch)
        await read_pending(ctx, kb, on_verified)
        await compose.compose_from_verified(ctx, kb, spans, plan, on_verified)
        wave = WAVE if not batched else len(todo)
    if not todo and _wants_more(ctx, plan):
        ctx.notes.append(f"stopped: every answer span of the knowledge base was asked "
                         f"({len(spans)} spans)")
    elif len(verified(ctx)) < n and sum(ctx.calls.values()) >= max_calls:
        ctx.notes.append(f"stopped at the call ceiling ({max_calls} calls, {CALLS_PER_ITEM} per "
                         "wanted item): this knowledge base yields few items")


async def estimate(ctx: RunContext, chunks: list[dict], titles: dict[str, str],
                   plan: dict[str, int]) -> dict[str, int]:
    """`--dry-run`: the calls a run would make per prompt, each priced by the client in its
    dry-run mode on real material (the first spans the run would ask about). Assumes the pass
    rates measured on public knowledge bases: about half of the single-hop questions pass."""
    n = sum(plan.values())
    single = plan.get("single_hop", 0) + sum(v for k, v in plan.items() if k != "single_hop")
    spans = plan_spans(chunks, titles, ctx.options.seed, plan)[: 2 * single]
    calls = {"question": len(spans), "reader": len(spans)}
    for span in spans:
        await ctx.llm.structured(ctx.prompts["question"], {
            "language": language_name(span.language), "title": span.title or "-",
            "passage": span.statement, "answer": span.answer, "kind": KIND_NAMES[span.kind],
            "mention": []},
            WrittenQuestion, stage="question")
        await ctx.llm.structured(ctx.prompts["reader"], {
            "sentences": [{"text": span.statement}] * reader.MAX_SENTENCES,
            "question": span.statement}, reader.ReaderReply, stage="reader", role="verifier")
    for kind, count in plan.items():
        if kind != "single_hop" and count:
            calls[compose.PROMPTS[kind]] = 2 * count
    del n
    return calls
