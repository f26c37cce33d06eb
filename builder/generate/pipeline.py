"""The answer-first pipeline: spans chosen by code, questions written for them, round trips
checked by code, harder items composed from verified parts.

    spans (code, once) -> waves of: questions for the next spans -> code checks
                                    -> retrieval round trips -> the failed halves of pairs
                                       whose other half passed, asked again in its words
                                    -> compositions from what passed

This module orders the stages (spans.py, questions.py, roundtrip.py, compose.py); it holds no
stage's own logic, and it is, with runner.py, the only place that imports them.

Work comes in *waves* so that verified items appear early (waves are small until one is) and
calls of one prompt run back to back: a local llama.cpp server reuses the computed prompt prefix
of the previous request, so the fixed instructions at the head of each prompt are read once per
wave, not once per call. A wave writes its questions (candidates stored `pending`, or `failed`
by the code checks), then reads them (verdicts stored), then composes harder items from the
verified ones. Every unit commits with its ledger row: Ctrl-C loses at most the calls in flight,
and a second run resumes (pending items are read first; done units are not asked again).

The run stops when `n` items are verified, when the spans run out, or after `max_calls`
LLM calls (a ceiling of CALLS_PER_ITEM per wanted item, so a knowledge base that yields little
cannot run for ever).
"""

from __future__ import annotations

import math

from builder.store import candidates as cstore

from builder.generate import compose, dedup
from builder.generate.answers import PAIR_KINDS, Span
from builder.generate.candidate import kept_passed, stable_id
from builder.generate.context import RunContext
from builder.generate.form import question_problems
from builder.generate.knowledge import MAX_SENTENCES, KnowledgeIndex
from builder.generate.models import ReaderReply, WrittenQuestions
from builder.generate.questions import STAGE_QUESTION, question_vars, write_questions
from builder.generate.rivals import statement_rival
from builder.generate.roundtrip import read_pending, retrieve, round_trip
from builder.generate.spans import plan_spans

STAGE_WAVE = "wave"      # the spans each wave asks, so a resumed run finishes a cut wave first
FIRST_WAVE = 3
WAVE = 8
CALLS_PER_ITEM = 6
EXTRA_PARTS = 0.25     # share of n a run may verify beyond n while harder items are short

async def judge_question(ctx: RunContext, kb: KnowledgeIndex, question: str,
                         span: Span) -> list[str]:
    """Every check a written single-hop question goes through, in the pipeline's order: the
    code checks, then (only if they pass) the retrieval round trip. The rejection reasons;
    none when it passes. The waves run the same two steps apart (all questions of a wave, then
    all round trips), so that calls of one prompt run back to back."""
    problems = question_problems(question, answer=span.answer, language=span.language,
                                 statement=span.statement, mention=span.mention, title=span.title,
                                 nearby=span.nearby)
    if problems:
        return [f"form: {p}" for p in problems]
    reading = await round_trip(ctx, question, span.answer, span.chunk_id, span.language, kb)
    return [] if reading.problem is None else [f"round_trip: {reading.problem}"]


def _wave_size(batched: bool, done: list[dict], todo: list[Span]) -> int:
    """How many spans the next wave may ask. An endpoint or a batch engine: all that are left.
    The embedded model: FIRST_WAVE while nothing is verified, then WAVE. A wave writes all its
    questions before it reads any, so the first item can show only after a whole wave of
    question calls; when the first wave fails (13 of 42 seeded first waves on the seven
    development knowledge bases, bench/quality/first_wave.py), a second wave of eight held the
    first item back by up to five more question calls. Decided from what is verified, so a
    resumed run sizes its waves as an uninterrupted one did."""
    if batched:
        return len(todo)
    return WAVE if done else FIRST_WAVE


def _pass_rate(ctx: RunContext) -> float:
    """Share of judged single-hop questions that passed (optimistic before any is judged),
    so a wave asks for about what is still missing and no more."""
    judged = [c["verdict"] for c in cstore.load_candidates(ctx.store)
              if c["type"] == "single_hop" and c["verdict"] in ("passed", "failed")]
    return max(0.2, (judged.count("passed") + 1) / (len(judged) + 1))


def _wants_more(ctx: RunContext, plan: dict[str, int], done: list[dict] | None = None) -> bool:
    """Fewer verified items than wanted; or harder items still short and room for a few more
    single-hop parts (up to EXTRA_PARTS of n, halves of pairs and bridges only: run_waves):
    they are what harder ones are built from, and a run that stops at n single-hop items
    leaves the dataset all easy."""
    n = sum(plan.values())
    done = verified(ctx) if done is None else done
    if len(done) < n:
        return True
    short = any(sum(c["type"] == k for c in done) < plan.get(k, 0) for k in compose.COMPOSED)
    return short and len(done) < _most(n)


def _most(n: int) -> int:
    """The most items a run verifies: n, and EXTRA_PARTS of n more while harder ones are short."""
    return n + math.ceil(EXTRA_PARTS * n)


def verified(ctx: RunContext, pool: list[dict] | None = None) -> list[dict]:
    """The verified items that count towards n (of `pool`, else of the store): duplicates left
    out now, not only after the run's dedup pass -- a run that counted them would stop short of
    n once they are marked."""
    done = kept_passed(cstore.load_candidates(ctx.store) if pool is None else pool)
    repeated = {dup for dup, _ in dedup.find_duplicates(done)}
    return [c for c in done if c["id"] not in repeated]


def stranded(ctx: RunContext, spans: list[Span], plan: dict[str, int]) -> dict[str, dict]:
    """Halves of pairs to ask again, each with its partner as a worked example (span id -> the
    partner's passage, answer and verified question), while the plan still wants items built
    from pairs. A pair gives a harder item only when both halves pass, and each passes about one
    time in three: the half that failed is asked once more, shown how its partner was asked
    ("What is the daily rate of a Junior developer?" before the Senior designer's rate), which
    also words the two alike."""
    pool = cstore.load_candidates(ctx.store)
    done = verified(ctx, pool)
    if not any(sum(c["type"] == k for c in done) < plan.get(k, 0) for k in PAIR_KINDS):
        return {}
    by_cand = {c["id"]: c for c in pool}
    kept = {c["id"] for c in done}
    asked: dict[str, list[dict]] = {}
    for info in cstore.done_infos(ctx.store, STAGE_QUESTION):
        asked.setdefault(info.get("span"), []).append(info)
    by_id = {s.id: s for s in spans}
    passed = {sid: {"passage": by_id[sid].statement, "answer": by_cand[i["candidate_id"]]["answer"],
                    "question": by_cand[i["candidate_id"]]["question"]}
              for sid, infos in sorted(asked.items()) if sid in by_id
              for i in infos if i.get("candidate_id") in kept}
    out = {}
    for s in spans:
        infos = asked.get(s.id)
        if not s.partners or not infos or s.id in passed or any(i.get("partner") for i in infos):
            continue
        if any(by_cand.get(i.get("candidate_id"), {}).get("verdict") != "failed" for i in infos):
            continue  # not read yet
        partner = next((passed[p] for p in s.partners if p in passed), None)
        if partner:
            out[s.id] = partner
    return out


async def _retry_stranded(ctx: RunContext, kb: KnowledgeIndex, spans: list[Span],
                          plan: dict[str, int], on_verified=None) -> None:
    again = stranded(ctx, spans, plan)
    if again:
        await write_questions(ctx, kb, [s for s in spans if s.id in again],
                              precheck=_precheck(kb), partners=again)
        await read_pending(ctx, kb, on_verified)


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
    kb = KnowledgeIndex(chunks, titles)
    # a wave cut short (Ctrl-C, a crash, --budget) is finished first, as the same wave: what
    # is composed after it is then what an uninterrupted run composed; so are the spans of
    # earlier waves whose question call failed (no reply, or no valid one)
    by_id = {s.id: s for s in spans}
    unfinished = [by_id[sid] for w in waves for sid in w.get("spans", [])
                  if sid not in asked and sid in by_id]
    if unfinished:
        await write_questions(ctx, kb, unfinished, precheck=_precheck(kb))
    await read_pending(ctx, kb, on_verified)
    await _retry_stranded(ctx, kb, spans, plan, on_verified)
    await compose.compose_from_verified(ctx, kb, spans, plan, on_verified)
    # Small waves are for the embedded model (one request at a time, so small waves show a
    # verified item early). An endpoint (live or a batch engine, which answers a whole pass at
    # once, hours later) gets waves as large as what is missing: the same waves either way, so
    # the same replies make the same candidates live or batched.
    batched = not getattr(ctx.llm, "local", False)
    passed_over = 0
    index = len(waves)
    while todo and sum(ctx.calls.values()) < max_calls:
        done = verified(ctx)  # once per wave: it reads the pool and looks for duplicates
        if not _wants_more(ctx, plan, done):
            break
        short = n - len(done)
        # composed items still wanted are made from parts already there or coming: a wave
        # asks for the single-hop items still missing, over the pass rate seen so far
        composed_missing = sum(max(0, plan.get(k, 0) - sum(c["type"] == k for c in done))
                               for k in compose.COMPOSED)
        pool = todo
        if short <= 0:
            # n verified, harder items short (_wants_more): thresholds (no call) take the
            # harder places nothing was found to build, within the room left, before any more
            # part is asked for a pair or a bridge that may never pass
            done = await _fill(ctx, kb, spans, plan, done, on_verified)
            if not _wants_more(ctx, plan, done):
                break
            # only the halves harder items are built from can still help; a run out of them
            # stops instead of verifying more easy items
            pool = [s for s in todo if s.bundled]
            if not pool:
                ctx.notes.append("stopped: n items verified, and no half of a pair or bridge "
                                 "is left to build the harder items still short")
                break
        size = min(_wave_size(batched, done, todo),
                   math.ceil(max(1, short - composed_missing) / _pass_rate(ctx)))
        batch, over = _take(pool, size, kb)
        passed_over += len(over)
        asked_now = {s.id for s in batch + over}
        todo = [s for s in todo if s.id not in asked_now]
        if not batch:
            continue
        cstore.record_candidates(ctx.store, [], stage=STAGE_WAVE,
                                 key=stable_id(STAGE_WAVE, index, [s.id for s in batch]),
                                 info={"index": index, "spans": [s.id for s in batch]})
        index += 1
        await write_questions(ctx, kb, batch, precheck=_precheck(kb))
        await read_pending(ctx, kb, on_verified)
        await _retry_stranded(ctx, kb, spans, plan, on_verified)
        await compose.compose_from_verified(ctx, kb, spans, plan, on_verified)
    await _fill(ctx, kb, spans, plan, verified(ctx), on_verified)
    if passed_over:
        ctx.notes.append(f"{passed_over} answer span(s) not asked: their own sentence and title, "
                         "the answer left out, fit another sentence as well")
    if not todo and _wants_more(ctx, plan):
        ctx.notes.append(f"stopped: every answer span of the knowledge base was asked "
                         f"({len(spans)} spans)")
    elif len(verified(ctx)) < n and sum(ctx.calls.values()) >= max_calls:
        ctx.notes.append(f"stopped at the call ceiling ({max_calls} calls, {CALLS_PER_ITEM} per "
                         "wanted item): this knowledge base yields few items")


async def _fill(ctx: RunContext, kb: KnowledgeIndex, spans: list[Span], plan: dict[str, int],
                done: list[dict], on_verified=None) -> list[dict]:
    """Harder places nothing was found to build them from go to thresholds (no call), within
    the items a run may verify while harder ones are short (_wants_more). Done where the state
    is the same in an interrupted and resumed run as in an uninterrupted one: once n items are
    verified (between waves), and at the end. Filled only at the end, the places went to the
    extra parts asked for pairs first: on the development handbook the run verified 25 items,
    22 of them single-hop, and left no room for a threshold. `done`: the verified items now
    (`verified`); returned as they are after the fill, read again only if it could add any."""
    room = _most(sum(plan.values())) - len(done)
    if room <= 0:
        return done
    await compose.compose_from_verified(ctx, kb, spans, plan, on_verified, fill=room)
    return verified(ctx)


def _take(pool: list[Span], size: int, kb: KnowledgeIndex) -> tuple[list[Span], list[Span]]:
    """The next `size` spans of `pool` worth a question call, and those passed over on the way:
    a span whose own statement and title, its answer left out, fit a rival sentence as well
    (rivals.statement_rival) gets no question that passes the round trip's specificity check,
    since the question writer is shown nothing more. On the development KBs 29 of 30 such
    questions failed the round trip's code half (specificity or retrieval) and the other was
    wrong. No call is spent on them."""
    batch: list[Span] = []
    over: list[Span] = []
    for s in pool:
        if len(batch) >= size:
            break
        if statement_rival(s.statement, s.title, s.answer, s.language, kb) is None:
            batch.append(s)
        else:
            over.append(s)
    return batch, over


def _precheck(kb: KnowledgeIndex):
    """The round trip's code half (retrieval and specificity, no call) for the question stage
    to choose among the wordings it is offered."""
    def check(question: str, reference: str, chunk: str, language: str):
        found = retrieve(question, reference, chunk, language, kb)
        return found.problem, found.rank
    return check


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
        await ctx.llm.structured(ctx.prompts["question"], question_vars(span, [], None),
                                 WrittenQuestions, stage="question")
        await ctx.llm.structured(ctx.prompts["reader"], {
            "sentences": [{"text": span.statement}] * MAX_SENTENCES,
            "question": span.statement}, ReaderReply, stage="reader", role="verifier")
    for kind, count in plan.items():
        if kind in compose.PROMPTS and count:  # code writes comparatives and reasoning items
            calls[compose.PROMPTS[kind]] = 2 * count
    del n
    return calls
