"""Stage 2: atomic facts per chunk, each tied to a verbatim span of the chunk.

Two extractors (`RunContext.facts_mode`): "text" cuts sentences, list items and table cells out
by code (statements.py, no LLM call; the default for the embedded model), "llm" asks the facts
prompt, one call per chunk, as described next. Code then grounds every fact: its evidence must be found in the chunk
(exact, then tolerant of whitespace/punctuation/case; see spans.py) and must plausibly state the
fact (half its content terms, all its numbers); otherwise the fact's own text is looked up as
the quote. A fact with no such span is dropped and counted. Entities are kept only when the
chunk mentions them; dates/versions are read from the evidence by code, not taken on trust.

Idempotent: a chunk is done when `stage_done('facts', key)` exists, key = hash(chunk id, chunk
text, extractor name and version); the facts and that row are committed together.
"""

from __future__ import annotations

import hashlib
import re

from builder.store import candidates as cstore
from builder.text.language import detect_language, language_name

from builder.generate.candidate import stable_id
from builder.generate.context import RunContext, run_units
from builder.generate.models import ExtractedFact, FactsOutput
from builder.generate.spans import locate_span
from builder.generate.statements import EXTRACTOR, VERSION, extract_statements_counted
from builder.generate.terms import dates as find_dates
from builder.generate.terms import key_terms, numbers

STAGE = "facts"
# Capitalised phrases ("Gold Membership", "Trail Pro 2") when the model names no entity.
_NAME = re.compile(r"\b[A-Z][\w-]*(?:\s+(?:[A-Z][\w-]*|\d+))*")


def chunk_language(chunk: dict) -> str:
    return chunk.get("language") or detect_language(chunk["text"])


def extractor(ctx: RunContext) -> tuple[str, str]:
    """(name, version) of the active extractor, as stored in facts.prompt_name/_version."""
    if ctx.facts_mode == "text":
        return EXTRACTOR, VERSION
    prompt = ctx.prompts["facts"]
    return prompt.name, prompt.version


def facts_key(ctx: RunContext, chunk: dict) -> str:
    name, version = extractor(ctx)
    digest = hashlib.sha256(chunk["text"].encode("utf-8")).hexdigest()
    return stable_id(chunk["id"], digest, name, version)


def supports(evidence: str, claim: str) -> bool:
    """Cheap lexical test that a quote can state a claim: half of the claim's content terms and
    all of its numbers occur in the quote."""
    claim_terms = key_terms(claim)
    if not claim_terms:
        return True
    shared = len(claim_terms & key_terms(evidence)) / len(claim_terms)
    return shared >= 0.5 and numbers(claim) <= numbers(evidence)


def ground_facts(chunk: dict, extracted: list[ExtractedFact], *, prompt_name: str,
                 prompt_version: str, call_id: int | None = None) -> tuple[list[dict], int]:
    """Facts rows for the facts whose evidence is in the chunk, and how many were dropped."""
    text = chunk["text"]
    chunk_terms = key_terms(text)
    language = chunk_language(chunk)
    rows: list[dict] = []
    seen: set[tuple[str, int]] = set()
    dropped = 0
    for item in extracted:
        claim = item.fact.strip()
        span = locate_span(text, item.evidence) if item.evidence.strip() else None
        if span is not None and not supports(text[span[0]:span[1]], claim):
            span = None  # a real quote, but of something else (seen: a date for a 30-day rule)
        if span is None:  # small models leave evidence empty or wrong and copy the sentence
            span = locate_span(text, claim)
        if not claim or span is None:
            dropped += 1
            continue
        if (claim.casefold(), span[0]) in seen:
            continue
        seen.add((claim.casefold(), span[0]))
        evidence = text[span[0]:span[1]]
        entities: list[str] = []
        for name in item.entities:
            name = " ".join(name.split())
            terms = key_terms(name)
            if terms and terms <= chunk_terms and name not in entities:
                entities.append(name)
        if not entities:
            entities = [m.group(0) for m in _NAME.finditer(claim)
                        if key_terms(m.group(0)) and m.start() > 0][:3]
        stated = find_dates(evidence)
        if not stated:  # the model's dates count only if stated in the chunk and parseable
            stated = list(dict.fromkeys(x for d in item.dates if d and d in text
                                        for x in find_dates(d)))
        seq = len(rows)
        rows.append({
            "id": stable_id(chunk["id"], prompt_version, seq, claim),
            "chunk_id": chunk["id"], "seq": seq, "text": claim, "evidence": evidence,
            "evidence_start": span[0], "evidence_end": span[1], "entities": entities,
            "dates": stated, "language": language, "prompt_name": prompt_name,
            "prompt_version": prompt_version, "llm_call_id": call_id,
        })
    return rows, dropped


async def extract_facts(ctx: RunContext, chunks: list[dict]) -> None:
    """Extract facts for every chunk in `chunks` not done yet (one LLM call each in llm mode)."""
    done = cstore.done_keys(ctx.store, STAGE)
    todo = [c for c in chunks if facts_key(ctx, c) not in done]
    if ctx.facts_mode == "text":
        for chunk in todo:
            rows, dropped = extract_statements_counted(chunk)
            ctx.facts_dropped += dropped
            cstore.record_facts(ctx.store, rows, stage=STAGE, key=facts_key(ctx, chunk),
                                info={"chunk_id": chunk["id"], "facts": len(rows),
                                      "dropped": dropped, "extractor": EXTRACTOR})
        return
    prompt = ctx.prompts["facts"]

    async def one(chunk: dict) -> None:
        result = await ctx.call("facts", {
            "chunk": chunk["text"], "title": chunk.get("title") or chunk["document_id"],
            "language": language_name(chunk_language(chunk)),
        }, FactsOutput)
        if not result.ok:
            return  # not marked done: retried on the next run
        rows, dropped = ground_facts(chunk, result.value.facts, prompt_name=prompt.name,
                                     prompt_version=prompt.version, call_id=result.call_id)
        ctx.facts_dropped += dropped
        cstore.record_facts(ctx.store, rows, stage=STAGE, key=facts_key(ctx, chunk),
                            info={"chunk_id": chunk["id"], "facts": len(rows), "dropped": dropped})

    await run_units(ctx, "facts", todo, one)
