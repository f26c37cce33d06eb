"""Stage 3: single-hop questions, one fact per call.

Code picks the facts (only question-worthy ones, worth.py) and, where it can, the answer too
(`worth.assess`: a value such as "45 days" or "$60", a table cell, the description of a
labelled rubric item, a definition's complement, a code name); the LLM only phrases the
question, and chooses a short answer phrase when code chose none. There is no fallback to "the
whole fact is the answer": measured on public knowledge bases, that is how vague questions
with sentence-copy answers were made, and verification rejects them. Measured with the embedded 0.5B on samples/: handed
three facts per call it copied the facts as "questions" (most items rejected as containing
their answer); one fact per call with the answer given and three examples gave a usable
question for 7 of 10 facts at ~2 s per call (the shared prompt prefix is cached by llama.cpp).
A strong model costs one short call per question, well inside the 3-calls-per-verified budget.
Text after the question's first question mark is cut (`candidate.clean_question`).
Idempotent per (fact, prompt version) through `stage_done('questions', key)`.
"""

from __future__ import annotations

from builder.store import candidates as cstore
from builder.text.language import language_name

from builder.generate.candidate import clean_question, make_candidate, stable_id
from builder.generate.context import RunContext, run_units
from builder.generate.models import EvolvedQuestion
from builder.generate.worth import assess

STAGE = "questions"
CHOOSE = "(choose)"


def questions_key(ctx: RunContext, fact: dict) -> str:
    p = ctx.prompts["questions"]
    return stable_id(STAGE, fact["chunk_id"], [fact["id"]], p.name, p.version)


async def write_questions(ctx: RunContext, facts: list[dict],
                          common: frozenset[str] = frozenset()) -> None:
    """One call per fact not done yet; a candidate per usable reply. `common` are the KB's
    everywhere-terms (`worth.common_terms`), never chosen as an answer."""
    done = cstore.done_keys(ctx.store, STAGE)
    todo = [f for f in facts if questions_key(ctx, f) not in done]
    fact_prompt = ctx.prompts["facts"]
    prompt = ctx.prompts["questions"]
    model = ctx.model("generator", STAGE)

    async def one(fact: dict) -> None:
        language = fact.get("chunk_language") or fact.get("language") or "en"
        target = assess(fact, common).answer
        result = await ctx.call(STAGE, {
            "fact": fact["text"], "answer": target or CHOOSE,
            "title": fact.get("title") or fact["document_id"], "language": language_name(language),
        }, EvolvedQuestion)
        if not result.ok:
            return
        question = clean_question(result.value.question)
        answer = target or result.value.answer.strip()
        rows = []
        if question and answer and answer.casefold() != CHOOSE:
            rows.append(make_candidate(
                ctype="single_hop", question=question, answer=answer, facts=[fact],
                language=language, model=result.model or model, seed_fact_id=fact["id"],
                prompts={fact.get("prompt_name") or fact_prompt.name:
                         fact.get("prompt_version") or fact_prompt.version,
                         prompt.name: prompt.version},
            ))
        cstore.record_candidates(ctx.store, rows, stage=STAGE, key=questions_key(ctx, fact),
                                 info={"fact_ids": [fact["id"]], "generated": len(rows)})

    await run_units(ctx, "questions", todo, one)
