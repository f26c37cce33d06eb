"""`--dry-run`: how many LLM calls a run would make per stage, priced by the client itself.

The plan is the same as a real first round: chunks without facts (no calls when facts come
from code), one question call per single-hop item, one call per evolution, one proposal call
for the unanswerable items, and verification: one call per MAX_BATCH_ITEMS grounded
candidates, one per multi-hop candidate, one per unanswerable candidate. Each planned call is sent to
the client in its dry-run mode -- which makes no network call, counts the prompt's tokens and
prices it -- with real chunk text for the facts stage and representative chunk text for the
stages whose inputs do not exist yet. Nothing is written by the generator.
"""

from __future__ import annotations


from builder.store import candidates as cstore
from builder.text.language import language_name

from builder.generate import facts as facts_stage
from builder.generate.context import RunContext
from builder.generate.models import (
    EvolvedQuestion, FactsOutput, ProposedQuestions, RoundTripReply,
)
from builder.generate.plan import chunk_budget, select_chunks

LONG_VARS = {"chunk", "passages", "facts"}


def planned_calls(ctx: RunContext, chunks: list[dict], plan: dict[str, int]) -> dict[str, int]:
    selected = select_chunks(ctx.store, chunks, chunk_budget(ctx.options.n, len(chunks)), ctx.options.seed)
    done = cstore.done_keys(ctx.store, facts_stage.STAGE)
    calls = {"facts": 0 if ctx.facts_mode == "text" else
             sum(1 for c in selected if facts_stage.facts_key(ctx, c) not in done)}
    calls["questions"] = plan.get("single_hop", 0)
    for kind, count in plan.items():
        if kind == "unanswerable" and count:
            calls["evolve_unanswerable"] = 1
        elif kind != "single_hop" and count:
            calls[f"evolve_{kind}"] = count
    # round trips: single-hop items are answered twice (cited chunk, then the rest of the KB),
    # multi-hop three times (both chunks, then each alone), ambiguous ones not at all
    per_type = {"single_hop": 2, "multi_hop": 3, "ambiguous": 0}
    calls["verify"] = sum(count * per_type.get(kind, 1) for kind, count in plan.items())
    return calls


async def estimate_run(ctx: RunContext, chunks: list[dict], plan: dict[str, int]) -> dict[str, int]:
    calls = planned_calls(ctx, chunks, plan)
    selected = select_chunks(ctx.store, chunks, chunk_budget(ctx.options.n, len(chunks)), ctx.options.seed)
    done = cstore.done_keys(ctx.store, facts_stage.STAGE)
    for chunk in selected if ctx.facts_mode == "llm" else []:
        if facts_stage.facts_key(ctx, chunk) in done:
            continue
        await ctx.llm.structured(
            ctx.prompts["facts"], {"chunk": chunk["text"], "title": chunk.get("title") or "",
                                   "language": language_name(chunk.get("language"))},
            FactsOutput, stage="facts")
    i = 0
    for stage, count in calls.items():
        if stage == "facts":
            continue
        name = "roundtrip" if stage == "verify" else stage
        prompt = ctx.prompts[name]
        for _ in range(count):
            sample = chunks[i % len(chunks)]["text"]
            i += 1
            variables = {p: sample if p in LONG_VARS else sample[:200]
                         for p in prompt.placeholders()}
            role = "verifier" if stage == "verify" else "generator"
            output = {"verify": RoundTripReply, "evolve_unanswerable": ProposedQuestions}.get(
                stage, EvolvedQuestion)
            await ctx.llm.structured(prompt, variables, output, stage=name, role=role)
    return calls
