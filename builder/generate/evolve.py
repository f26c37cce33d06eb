"""Stage 4: evolutions. Each material (material.py) becomes one NEW candidate through one LLM
call that phrases the question (and answer) from the facts code handed it.

The candidate links to the single-hop candidate of its seed fact (`parent_id`) when there is
one, and shares that seed fact's `seed_fact_id`, so export keeps all variants of one fact in
one split. Ambiguous answers are written by code (`ambiguous_answer`); unanswerable items are
made by unanswerable.py, not here. Idempotent per material through
`stage_done('evolve', hash(type, material key, prompt version))`.
"""

from __future__ import annotations

import re

from builder.llm.prompts import load_sentences, sentence_for
from builder.store import candidates as cstore
from builder.text.language import HAN_CHAR, language_name

from builder.generate.candidate import clean_question, make_candidate, stable_id
from builder.generate.context import RunContext, run_units
from builder.generate.material import Material
from builder.generate.models import EvolvedQuestion

STAGE = "evolve"


def ambiguous_answer(lead: str, facts: list[dict]) -> str:
    """The reference answer of an ambiguous question, written by code: the lead-in from
    `ambiguous.md`, then each reading's fact. Measured: the embedded 0.5B, asked to name both
    readings, gave one value in 5 of 5 tries."""
    return lead + " " + " ".join(f["text"].rstrip(".。") + ("。" if HAN_CHAR.search(f["text"]) else ".")
                                 for f in facts)


def unnamed(question: str, names: list[str], term: str = "") -> str:
    """The question without the name of a reading, so it stays underspecified: the name becomes
    the shared term when it contains it ("How much does the Gold membership cost?" -> "... the
    membership cost?"), else it goes with its preposition ("What is the annual fee for Basic?"
    -> "What is the annual fee?"). Latin script only; a question naming both readings (a
    comparison) or left too short is returned unchanged, and the checks reject it."""
    present = [n for n in names if n.isascii() and re.search(rf"\b{re.escape(n)}\b", question, re.I)]
    if len(present) != 1:  # none to remove, or both: a comparison, not an ambiguity
        return question
    name = present[0]
    if term and re.search(rf"\b{re.escape(term)}\b", name, re.I):
        out = re.sub(rf"\b{re.escape(name)}\b", term, question, flags=re.I)
    else:
        out = re.sub(rf"\s*\b(?:(?:for|of|in|at|on|with|from|the)\s+)*{re.escape(name)}\b",
                     "", question, flags=re.I)
    out = re.sub(r"\s+([?,.])", r"\1", " ".join(out.split()))
    return out if len(out.split()) >= 3 and out.endswith(("?", "？")) else question


def evolve_key(ctx: RunContext, material: Material) -> str:
    p = ctx.prompts[f"evolve_{material.type}"]
    return stable_id(STAGE, material.type, material.key, p.name, p.version)


async def evolve(ctx: RunContext, materials: list[Material], parents: dict[str, str]) -> None:
    """Run every material not done yet. `parents` maps seed fact id -> single-hop candidate id."""
    done = cstore.done_keys(ctx.store, STAGE)
    todo = [m for m in materials if evolve_key(ctx, m) not in done]
    leads = load_sentences("ambiguous.md", ctx.options.prompts_dir) if any(
        m.type == "ambiguous" for m in todo) else {}
    facts_prompt = ctx.prompts["facts"]

    async def one(m: Material) -> None:
        name = f"evolve_{m.type}"
        prompt = ctx.prompts[name]
        result = await ctx.call(name, {**m.variables, "language": language_name(m.language)},
                                EvolvedQuestion)
        if not result.ok:
            return
        rows = []
        question, answer = clean_question(result.value.question), result.value.answer
        if m.type == "ambiguous":
            question = unnamed(question, [m.variables["entity_a"], m.variables["entity_b"]],
                               m.variables.get("term", ""))
            answer = ambiguous_answer(sentence_for(leads, m.language), m.facts)
        if question.strip() and answer.strip():
            seed = m.facts[0]
            rows.append(make_candidate(
                ctype=m.type, question=question, answer=answer, facts=m.facts,
                language=m.language, model=result.model or ctx.model("generator", name),
                seed_fact_id=seed["id"], parent_id=parents.get(seed["id"]), key=m.key,
                prompts={seed.get("prompt_name") or facts_prompt.name:
                         seed.get("prompt_version") or facts_prompt.version,
                         prompt.name: prompt.version},
            ))
        cstore.record_candidates(ctx.store, rows, stage=STAGE, key=evolve_key(ctx, m),
                                 info={"type": m.type, "generated": len(rows)})

    await run_units(ctx, "evolutions", todo, one)
