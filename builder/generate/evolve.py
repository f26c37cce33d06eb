"""Stage 3: evolutions. Each material (material.py) becomes one NEW candidate through one LLM
call that phrases the question (and answer) from the facts code handed it.

The candidate links to the single-hop candidate of its seed fact (`parent_id`) when there is
one, and shares that seed fact's `seed_fact_id`, so export keeps all variants of one fact in
one split. Unanswerable candidates get a fixed refusal from `prompts/refusals.md` in the
question's language and cite no chunks. Idempotent per material through
`stage_done('evolve', hash(type, material key, prompt version))`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from builder.errors import InputError
from builder.llm.prompts import bundled_prompts_dir
from builder.store import candidates as cstore

from builder.generate.candidate import language_name, make_candidate, stable_id
from builder.generate.context import RunContext, run_units
from builder.generate.material import Material
from builder.generate.models import EvolvedQuestion

STAGE = "evolve"
_REFUSAL_LINE = re.compile(r"^([a-z]{2}(?:-[A-Za-z]+)?):\s+(\S.*)$")


def load_refusals(prompts_dir: str | None = None) -> dict[str, str]:
    """{language: refusal sentence} from `refusals.md` (override folder first)."""
    folders = [Path(p) for p in (prompts_dir, os.environ.get("GOLDEN_PROMPTS")) if p]
    folders.append(bundled_prompts_dir())
    for folder in folders:
        path = folder / "refusals.md"
        if path.is_file():
            out = {}
            for line in path.read_text(encoding="utf-8").splitlines():
                m = _REFUSAL_LINE.match(line.strip())
                if m:
                    out[m.group(1)] = m.group(2).strip()
            if "en" not in out:
                raise InputError("needs an 'en: <sentence>' line", path=str(path))
            return out
    raise InputError("no refusals.md found", path=str(folders[0]))


def refusal_for(refusals: dict[str, str], language: str | None) -> str:
    lang = (language or "en").split("-")[0]
    return refusals.get(lang, refusals["en"])


def evolve_key(ctx: RunContext, material: Material) -> str:
    p = ctx.prompts[f"evolve_{material.type}"]
    return stable_id(STAGE, material.type, material.key, p.name, p.version)


async def evolve(ctx: RunContext, materials: list[Material], parents: dict[str, str]) -> None:
    """Run every material not done yet. `parents` maps seed fact id -> single-hop candidate id."""
    done = cstore.done_keys(ctx.store, STAGE)
    todo = [m for m in materials if evolve_key(ctx, m) not in done]
    refusals = load_refusals(ctx.options.prompts_dir)
    facts_prompt = ctx.prompts["facts"]

    async def one(m: Material) -> None:
        name = f"evolve_{m.type}"
        prompt = ctx.prompts[name]
        result = await ctx.call(name, {**m.variables, "language": language_name(m.language)},
                                EvolvedQuestion)
        if not result.ok:
            return
        rows = []
        out = result.value
        answer = refusal_for(refusals, m.language) if m.type == "unanswerable" else out.answer
        if out.question.strip() and answer.strip():
            seed = m.facts[0]["id"]
            rows.append(make_candidate(
                ctype=m.type, question=out.question, answer=answer, facts=m.facts,
                language=m.language, model=result.model or ctx.model("generator", name),
                seed_fact_id=seed, parent_id=parents.get(seed), key=m.key,
                prompts={facts_prompt.name: facts_prompt.version, prompt.name: prompt.version},
                cite_facts=m.type != "unanswerable",
            ))
        cstore.record_candidates(ctx.store, rows, stage=STAGE, key=evolve_key(ctx, m),
                                 info={"type": m.type, "generated": len(rows)})

    await run_units(ctx, "evolutions", todo, one)
