"""Stage 2: a question written for each span, then checked by code before any model reads it.

The model writes one question per span (`question.prompt`), in the span's language, its answer
given; code then checks the question's form (form.py). A span whose statement has close rivals
(rivals.telling_words) must have its question name what tells it from them. Each candidate is
stored `pending` (the round trip reads it next) or `failed` with the form's reasons, in one
transaction with its ledger row; a failed call stores nothing and is asked again next run.

A span asked for the first time is shown the prompt's fixed worked example only. Until the
evening of 2026-12-06 later waves were also shown the run's verified question most like the
span (the knowledge base's own way of asking); the writer offered that question back as one of
its wordings for 10% to 38% of such spans on the development runs, and the same spans asked
again without it (bench/quality/replay_writer.py) passed 80 times against 64, 48 of them right
against 33: see docs/generation-and-quality.md. A stranded half of a pair is still shown its
partner's question (`partners`): there, asking alike is the point.
"""

from __future__ import annotations

from collections.abc import Callable

from builder.store import candidates as cstore
from builder.text.language import language_name

from builder.generate.answers import Span
from builder.generate.candidate import clean_question, make_candidate, stable_id
from builder.generate.context import RunContext, run_units
from builder.generate.form import question_problems
from builder.generate.knowledge import KnowledgeIndex
from builder.generate.models import WrittenQuestions
from builder.generate.rivals import telling_words

# How the question writer is told what kind of answer to ask for (the prompt is in English).
KIND_NAMES = {"amount": "an amount of money", "percent": "a percentage", "duration": "a duration",
              "date": "a date", "year": "a year", "quantity": "a quantity with its unit",
              "count": "a number of things", "cell": "a value from a table",
              "name": "a name"}
STAGE_QUESTION = "question"


def _prompts(ctx: RunContext, *names: str) -> dict[str, str]:
    return {n: ctx.prompts[n].version for n in names}


# The code half of the round trip (roundtrip.retrieve, handed in by the pipeline: a stage never
# imports another): (question, reference, source chunk, language) -> (problem or None, rank).
Precheck = Callable[[str, str, str, str], "tuple[str | None, int | None]"]


async def write_questions(ctx: RunContext, kb: KnowledgeIndex, spans: list[Span],
                          precheck: Precheck | None = None,
                          partners: dict[str, dict] | None = None) -> None:
    """One question call per span; the candidate is stored pending, or failed by the code checks
    (with the ledger row, in one transaction). A failed call stores nothing: asked again next run.

    The writer offers a few wordings (`question.prompt`); code keeps the best (`_choose`): the
    first that passes the form checks and the code half of the round trip, with its passage
    ranked highest. Most refusals are decided by code (a question holding its answer, one that
    fits a rival sentence as well), so a second wording often saves a span for no extra call.
    A span whose statement has close rivals (rivals.telling_words) must have its question name
    what tells it from them: the round trip rejects a question that fits a rival as well.

    `partners` (span id -> its partner's passage, answer and verified question) asks a span
    again, shown as a worked example how its partner was asked: the half of a pair that failed
    while the other passed (pipeline.stranded). One retry per span and partner question: its
    own unit and candidate."""
    done = cstore.done_keys(ctx.store, STAGE_QUESTION)
    partners = partners or {}
    # a retry's wordings that were tried already for the same statement failed once: not again
    tried = {(c["seed_fact_id"], c["question"]) for c in cstore.load_candidates(ctx.store)
             if c["type"] == "single_hop"} if partners else set()

    async def one(span: Span) -> None:
        partner = partners.get(span.id)
        key = stable_id(STAGE_QUESTION, span.id, ctx.prompts["question"].version,
                        *([partner["question"]] if partner else []))
        if key in done:
            return
        mention = mention_for(span, kb)
        res = await ctx.call("question", question_vars(span, mention, partner), WrittenQuestions)
        if not res.ok:
            return
        info = {"span": span.id, **({"partner": partner["question"]} if partner else {})}
        wordings = [q for q in res.value.questions
                    if not partner or (span.fact["id"], clean_question(q)) not in tried]
        if not wordings:  # the same wordings again: nothing new to read
            cstore.record_candidates(ctx.store, [], stage=STAGE_QUESTION, key=key,
                                     info={**info, "candidate_id": None,
                                           "offered": res.value.questions})
            return
        question, answer, problems, offered = _choose(span, wordings, mention, precheck)
        cand = make_candidate(
            ctype="single_hop", question=question, answer=answer,
            facts=[{**span.fact, "document_id": span.document_id}], language=span.language,
            prompts=_prompts(ctx, "question", "reader"), model=res.model or ctx.model(),
            seed_fact_id=span.fact["id"], document_id=span.document_id,
            key=(span.id, partner["question"]) if partner else span.id)
        if problems:
            cand["verdict"] = "failed"
            cand["rejection_reasons"] = [f"form: {p}" for p in problems]
            cand["verification"] = [{"check": "form", "passed": False, "reason": p,
                                     "source": "code"} for p in problems]
        cstore.record_candidates(ctx.store, [cand], stage=STAGE_QUESTION, key=key,
                                 info={**info, "candidate_id": cand["id"], "offered": offered})

    await run_units(ctx, "questions", spans, one)


def mention_for(span: Span, kb: KnowledgeIndex) -> list[str]:
    """The words the span's question must contain: its own (a label, a code name), else those
    that tell its statement from close rivals (rivals.telling_words)."""
    return span.mention or telling_words(span.statement, span.answer, span.language, kb)


def _choose(span: Span, offered: list[str], mention: list[str],
            precheck: Precheck | None) -> tuple[str, str, list[str], list[str]]:
    """The wording to keep, its answer, its form problems (empty when it passes) and the
    cleaned wordings offered. Preference: passes the form checks, then passes the code half of
    the round trip, then the passage's retrieval rank, then the writer's own order. With every
    wording failing the form, the first is kept with its problems (stored failed)."""
    offered = [q for q in dict.fromkeys(clean_question(q) for q in offered) if q.strip()]
    if not offered:
        offered = [""]
    best: tuple | None = None
    for order, question in enumerate(offered):
        answer = span.answer_for(question)
        problems = question_problems(question, answer=answer, language=span.language,
                                     statement=span.statement, mention=mention,
                                     title=span.title, nearby=span.nearby)
        if problems:
            if best is None:
                best = ((2, 0, order), question, answer, problems)
            continue
        problem, rank = precheck(question, answer, span.chunk_id, span.language) \
            if precheck else (None, 1)
        score = (1 if problem else 0, rank or 99, order)
        if best is None or score < best[0]:
            best = (score, question, answer, [])
    _, question, answer, problems = best
    return question, answer, problems, offered


def question_vars(span: Span, mention: list[str], partner: dict | None) -> dict:
    """What the question prompt is filled with for one span."""
    nearby = span.nearby
    return {"language": language_name(span.language), "title": span.title or "-",
            **_around(span), "answer": span.answer,
            "kind": KIND_NAMES[span.kind],
            "mention": [{"text": ", ".join(mention)}] if mention else [],
            "nearby": [{"text": ", ".join(nearby)}] if nearby else [],
            "partner": [partner] if partner else [],
            # a name span is shown a worked example for a name (the system example asks for
            # a duration); a partner's question is already one (questions.prompt v10)
            "name_example": [{}] if span.kind == "name" and not partner else []}


def _around(span: Span) -> dict[str, str]:
    """The passage before and after the answer, which the prompt marks where it stands. Told
    only "Answer: 28 days", a small writer asks what such a value usually is (how long the
    leave lasts); shown the words around it ("babies up to <answer>28 days</answer> old") it
    can ask what the passage says it is. An answer the statement does not hold as written (a
    code name taken from the raw markup) is marked after the passage."""
    passage = _passage(span)
    at = passage.find(span.answer)
    if at < 0 and len(passage.casefold()) == len(passage):
        at = passage.casefold().find(span.answer.casefold())
    if at < 0:
        return {"before": passage + " ", "after": ""}
    return {"before": passage[:at], "after": passage[at + len(span.answer):]}


def _passage(span: Span) -> str:
    """What the question writer reads: the span's statement (a list item's opens with the
    lead-in of its list, statements.py), nothing of the sentences around it."""
    return span.statement
