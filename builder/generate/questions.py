"""Stage 3: single-hop questions, one fact per call, written from a cloze.

Code picks the facts (question-worthy ones with an answer code can choose, worth.py: a value
such as "45 days" or "$60", a table cell, the description of a labelled rubric item, a
definition's complement, a code name) and the answer. The LLM then sees the statement with the
answer hidden ("We offer [BLANK] of holiday each year. The hidden part is a duration.") and
writes the question that asks for it (cloze-to-question, as in Lewis et al., ACL 2019,
"Unsupervised Question Answering by Cloze Translation").

Why hide the answer: shown the answer, the embedded 0.5B wrote questions that contain it (52
of 99 rejected single-hop questions on a library's documentation: "How does HTTPX support
setting up HTTP proxies?" -> "proxy"); a writer that never sees the answer cannot copy it. And
there is no "the model picks the answer" path and no "the whole fact is the answer" fallback:
measured on public knowledge bases, that is how vague questions with sentence-copy answers were
made. Statements with nothing code can pick as an answer get no single-hop question.

Text after the question's first question mark is cut (`candidate.clean_question`).
Idempotent per (fact, prompt version) through `stage_done('questions', key)`.
"""

from __future__ import annotations

from builder.store import candidates as cstore
from builder.text.language import language_name

from builder.generate.candidate import clean_question, make_candidate, stable_id
from builder.generate.context import RunContext, run_units
from builder.generate.models import EvolvedQuestion
from builder.generate.worth import answer_kind, assess, blank

STAGE = "questions"
BLANK = "[BLANK]"


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
        w = assess(fact, common)
        statement = blank(fact["text"], w.answer) if w.answer else None
        rows = []
        if statement is not None:  # the writer never sees the answer, so cannot copy it
            result = await ctx.call(STAGE, {
                "fact": statement, "kind": answer_kind(w),
                "title": fact.get("title") or fact["document_id"],
                "language": language_name(language),
            }, EvolvedQuestion)
            if not result.ok:
                return
            question = clean_question(result.value.question)
            if question and BLANK not in question:
                rows.append(make_candidate(
                    ctype="single_hop", question=question, answer=w.answer, facts=[fact],
                    language=language, model=result.model or model, seed_fact_id=fact["id"],
                    prompts={fact.get("prompt_name") or fact_prompt.name:
                             fact.get("prompt_version") or fact_prompt.version,
                             prompt.name: prompt.version},
                ))
        cstore.record_candidates(ctx.store, rows, stage=STAGE, key=questions_key(ctx, fact),
                                 info={"fact_ids": [fact["id"]], "generated": len(rows)})

    await run_units(ctx, "questions", todo, one)
