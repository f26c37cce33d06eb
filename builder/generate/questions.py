"""Stage 2: single-hop questions from facts, several facts of one chunk per call.

Code picks the facts (plan.py); the LLM phrases one question and short answer per fact, in the
chunk's language. Items that name a fact number it was not given, or repeat one, are ignored.
Idempotent per (chunk, facts asked, prompt version) through `stage_done('questions', key)`.
"""

from __future__ import annotations

from builder.store import candidates as cstore

from builder.generate.candidate import language_name, make_candidate, stable_id
from builder.generate.context import RunContext, run_units
from builder.generate.models import QuestionsOutput

STAGE = "questions"


def numbered(facts: list[dict]) -> str:
    return "\n".join(f"{i}. {f['text']}" for i, f in enumerate(facts, 1))


def questions_key(ctx: RunContext, facts: list[dict]) -> str:
    p = ctx.prompts["questions"]
    return stable_id(STAGE, facts[0]["chunk_id"], [f["id"] for f in facts], p.name, p.version)


async def write_questions(ctx: RunContext, groups: list[list[dict]]) -> None:
    """One call per group (the planned facts of one chunk) not done yet."""
    done = cstore.done_keys(ctx.store, STAGE)
    todo = [g for g in groups if g and questions_key(ctx, g) not in done]
    fact_prompt = ctx.prompts["facts"]
    prompt = ctx.prompts["questions"]
    model = ctx.model("generator", STAGE)

    async def one(facts: list[dict]) -> None:
        language = facts[0].get("chunk_language") or facts[0].get("language") or "en"
        result = await ctx.call(STAGE, {
            "facts": numbered(facts), "title": facts[0].get("title") or facts[0]["document_id"],
            "language": language_name(language), "count": len(facts),
        }, QuestionsOutput)
        if not result.ok:
            return
        rows, used = [], set()
        for item in result.value.questions:
            if not 1 <= item.fact <= len(facts) or item.fact in used:
                continue
            if not item.question.strip() or not item.answer.strip():
                continue
            used.add(item.fact)
            fact = facts[item.fact - 1]
            rows.append(make_candidate(
                ctype="single_hop", question=item.question, answer=item.answer, facts=[fact],
                language=language, model=result.model or model, seed_fact_id=fact["id"],
                prompts={fact_prompt.name: fact_prompt.version, prompt.name: prompt.version},
            ))
        cstore.record_candidates(ctx.store, rows, stage=STAGE, key=questions_key(ctx, facts),
                                 info={"fact_ids": [f["id"] for f in facts],
                                       "generated": len(rows)})

    await run_units(ctx, "questions", todo, one)
