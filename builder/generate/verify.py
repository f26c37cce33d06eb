"""Stage 5: verification of every finished candidate. Code checks gate first (checks.py, for
every candidate); a candidate that passes them is answered again, independently, by the round
trip (roundtrip.py), and code compares that answer with the reference.

Why not an LLM verdict ("is this supported? yes/no"): measured with the embedded models, such a
verifier passed every bad item of a public-handbook run (15 of 15) and caught 0-2 of 15 planted
false claims; a "yes" from a weak verifier says nothing. An independent answer that code
compares cannot be talked past: a vague question, a reference that does not answer it, or a
wrong reference rarely gets the same answer back.

LLM checks per type (each one `roundtrip` call, role "verifier"; all gate):
- single_hop, reasoning, comparative, temporal: `round_trip` -- answered from the cited chunks
  alone, the answer must agree with the reference (comparative: it may give one side's value
  or the difference, but no value the reference does not state; temporal: it must give the
  newer value);
- single_hop also `unique_answer` -- asked again with its answer hidden: the cited window with
  the answer masked, plus the top-3 other chunks of the WHOLE knowledge base for the question
  (superseded document versions left out). No grounded answer may come back that disagrees
  with the reference: a question that does not pin down its subject -- which level of a
  rubric, which plan, which request -- is answered by something else in its own chunk or
  elsewhere. Asked only after `round_trip` passed;
- multi_hop: `round_trip` over both chunks, then `second_hop_needed` -- answered from each cited
  chunk alone, the answer must NOT agree (one chunk would do: a single-hop item in disguise);
- unanswerable: `kb_does_not_answer_llm` -- answered from the top-4 chunks of the whole
  knowledge base, no grounded answer may come back;
- ambiguous: none. A question with two readings has no single answer to agree with; its
  structure is checked by code (both readings named in the answer, the question names neither,
  the shared term occurs in both statements).

A verifier call that fails (timeout, invalid reply) decides nothing: the candidate stays
pending, is not committed, and the next round or run asks again (the summary counts them).
A reader's reply cut off even with twice the room is different: it is the model's own answer
to that prompt, and asking again repeats it (Obsidian's help: `"C:\"`, whose backslash escapes
the closing quote, in two rounds of one run, 213 s). It confirms nothing, so the check fails.

Writing: the candidates that failed their code checks are committed together; every other
candidate is one unit (its calls, then one transaction with its ledger row), so a crash never
leaves half a verdict. The calls depend only on the candidate and the knowledge base, so a rerun
hits the LLM cache.
"""

from __future__ import annotations

from builder.store import candidates as cstore
from builder.store.documents import chunks_by_id
from builder.store.search import search_chunks

from builder.generate import dedup, roundtrip
from builder.generate.candidate import stable_id
from builder.generate.checks import check, code_checks
from builder.generate.context import RunContext, run_units
from builder.generate.terms import key_terms, numbers, without_dates

STAGE = "verify"
VERSION = "2"          # 2: round-trip verification replaced the verdict prompts
TOP_K_UNIQUE = 3       # other chunks of the whole KB read for `unique_answer` (plus the cited)
TOP_K_ABSENT = 4       # chunks of the whole KB read for an unanswerable item
ROUND_TRIP = frozenset({"single_hop", "reasoning", "comparative", "temporal", "multi_hop"})


class CallFailed(Exception):
    """A verifier call failed: the candidate stays pending."""


class ReaderRanAway(Exception):
    """The reader's reply ran past its token cap, retry included: the check fails (module doc)."""

    def __init__(self, check: str, model: str | None):
        super().__init__(check)
        self.check, self.model = check, model


def _cited(cand: dict, chunks: dict[str, dict]) -> list[dict]:
    """The candidate's cited chunks that exist, in citation order, without repeats."""
    ids = dict.fromkeys(c for c in cand.get("chunk_ids") or [] if c in chunks)
    return [chunks[c] for c in ids]


def _view(cand: dict, chunk: dict) -> dict:
    """What the reader sees of a chunk: the window around the candidate's evidence in it, or
    around the sentence nearest the question (`roundtrip.focused`)."""
    quote = next((e["quote"] for e in cand.get("evidence") or [] if e["chunk_id"] == chunk["id"]),
                 None)
    return roundtrip.focused(chunk, cand["question"], quote)


async def _ask(ctx: RunContext, question: str, passages: list[dict],
               check_name: str) -> roundtrip.Answer:
    answer = await roundtrip.ask(ctx, question, passages)
    if answer.status == "truncated":
        raise ReaderRanAway(check_name, answer.model)
    if answer.status != "ok":
        raise CallFailed(answer.status)
    return answer


def agrees(cand: dict, facts: list[dict], got: str) -> tuple[bool, str]:
    """Whether a round-trip answer agrees with the candidate's reference, by its type."""
    ref, q = cand["answer"], cand["question"]
    if cand["type"] == "comparative":
        # "$45" or "$37 more" against "$37 more: the monthly pass costs $45 and the day pass $8"
        ref_nums, got_nums = numbers(ref), numbers(got)
        if got_nums and not got_nums <= ref_nums:
            return False, f"states {', '.join(sorted(got_nums - ref_nums))}, which the reference does not"
        if got_nums or key_terms(got) - key_terms(q) & key_terms(ref):
            return True, ""
        return roundtrip.answers_match(ref, got, q)
    if cand["type"] == "temporal" and len(facts) >= 2:
        newer = numbers(without_dates(facts[0]["evidence"])) - numbers(without_dates(facts[1]["evidence"]))
        if newer:
            ok = bool(newer & numbers(got))
            return ok, "" if ok else "does not give the newer value"
    return roundtrip.answers_match(ref, got, q)


def _said(answer: roundtrip.Answer) -> str:
    return repr(answer.text[:80])


async def llm_checks(ctx: RunContext, cand: dict, facts: list[dict],
                     chunks: dict[str, dict]) -> list[dict]:
    """The round-trip checks of one candidate (see the module doc). Raises CallFailed, or
    ReaderRanAway naming the check whose reply was cut off."""
    ctype, q = cand["type"], cand["question"]
    if ctype == "unanswerable":
        hits = search_chunks(ctx.store, q, k=TOP_K_ABSENT)
        got = await _ask(ctx, q, [_view(cand, h) for h in hits], "kb_does_not_answer_llm")
        return [check("kb_does_not_answer_llm", not got.found,
                      f"chunk {got.chunk_id} answers it: {_said(got)}" if got.found else
                      ("" if not got.ungrounded else
                       f"the answer {got.ungrounded[:60]!r} is in no passage (ignored)"),
                      source="llm", model=got.model)]
    if ctype not in ROUND_TRIP:
        return []
    cited = [_view(cand, c) for c in _cited(cand, chunks)]
    got = await _ask(ctx, q, cited, "round_trip")
    if not got.found:
        return [check("round_trip", False, "answered from the cited chunks, it finds no answer"
                      + (f" (said {got.ungrounded[:60]!r}, which they do not state)" if got.ungrounded else ""),
                      source="llm", model=got.model)]
    ok, why = agrees(cand, facts, got.text)
    out = [check("round_trip", ok, "" if ok else f"answered {_said(got)}: {why}",
                 source="llm", model=got.model)]
    if not ok:
        return out
    if ctype == "single_hop":
        # Asked again with its answer hidden: the cited window with the answer masked, and the
        # top chunks of the whole KB for the question (superseded versions left out). A
        # question that pins down its subject finds nothing else to answer it; a vague one
        # ("How long will your request take?") finds another value in the same chunk or
        # another document, and a grounded answer that disagrees with the reference rejects it.
        cited_ids = {c["id"] for c in cited}
        top = search_chunks(ctx.store, q, k=TOP_K_UNIQUE + len(cited_ids),
                            exclude_ids=sorted(ctx.superseded))
        others = [_view(cand, h) for h in top if h["id"] not in cited_ids][:TOP_K_UNIQUE]
        masked = [roundtrip.masked(c, cand["answer"]) for c in cited]
        alt = await _ask(ctx, q, masked + others, "unique_answer")
        differs = alt.found and not agrees(cand, facts, alt.text)[0]
        where = "the rest of its chunk" if alt.chunk_id in cited_ids else f"chunk {alt.chunk_id}"
        out.append(check("unique_answer", not differs,
                         f"with its answer hidden, {where} answers it: {_said(alt)}" if differs
                         else (f"{where} gives the same answer" if alt.found else ""),
                         source="llm", model=alt.model))
    elif ctype == "multi_hop":
        for chunk in cited:
            alone = await _ask(ctx, q, [chunk], "second_hop_needed")
            if alone.found and agrees(cand, facts, alone.text)[0]:
                out.append(check("second_hop_needed", False, f"chunk {chunk['id']} alone answers it",
                                 source="llm", model=alone.model))
                break
        else:
            out.append(check("second_hop_needed", True, source="llm", model=got.model))
    return out


def verify_key(ctx: RunContext, cand: dict) -> str:
    return stable_id(STAGE, cand["id"], VERSION, ctx.prompts[roundtrip.PROMPT].version)


def reject_other_answers(ctx: RunContext, candidates: list[dict]) -> int:
    """Fail the verified single-hop items whose question another verified item answers
    differently from another passage (dedup.other_answers); returns how many. Kept under the
    candidate's verification ledger key, so a resumed run does not verify it again."""
    by_id = {c["id"]: c for c in candidates}
    rows = []
    for cid, other in sorted(dedup.other_answers(candidates).items()):
        cand = by_id[cid]
        checks = [c for c in cand.get("verification") or [] if c["check"] != "one_answer"]
        checks.append(check("one_answer", False, f"the same question was written for another "
                            f"passage, answered {other['answer'][:60]!r}"))
        verdict, reasons = verdict_of(checks)
        rows.append({"candidate_id": cid, "verification": checks, "verdict": verdict,
                     "rejection_reasons": reasons, "key": verify_key(ctx, cand)})
    cstore.record_verifications(ctx.store, rows, stage=STAGE)
    return len(rows)


def verdict_of(checks: list[dict]) -> tuple[str, list[str]]:
    reasons = [f"{c['check']}: {c['reason']}" if c["reason"] else c["check"]
               for c in checks if c.get("gate", True) and c["passed"] is False]
    return ("failed" if reasons else "passed"), reasons


def _example_lines(ctx: RunContext, prompt_names: tuple[str, ...]) -> str:
    """The worked examples of the prompts that wrote a candidate: the sections each prompt file
    marks `--- system example` (`Prompt.examples`)."""
    return "\n".join(text for name in prompt_names if name in ctx.prompts
                     for text in ctx.prompts[name].examples)


async def verify_pending(ctx: RunContext, candidates: list[dict], facts_by_id: dict[str, dict]) -> None:
    """Verify every candidate whose verdict is still 'pending' (see the module doc)."""
    todo = [c for c in candidates if c["verdict"] == "pending"]
    if not todo:
        return
    need = {cid for c in todo for cid in c.get("chunk_ids") or []}
    need |= {e["chunk_id"] for c in todo for e in c.get("evidence") or []}
    chunks = chunks_by_id(ctx.store, need)

    code: dict[str, list[dict]] = {}
    facts_of: dict[str, list[dict]] = {}
    examples: dict[tuple[str, ...], str] = {}
    failed, passed = [], []
    for cand in todo:
        facts = [facts_by_id[f] for f in cand.get("fact_ids") or [] if f in facts_by_id]
        facts_of[cand["id"]] = facts
        writers = tuple(sorted(cand.get("prompts") or {}))
        if writers not in examples:  # a few prompt combinations across the whole pool
            examples[writers] = _example_lines(ctx, writers)
        code[cand["id"]] = code_checks(ctx.store, cand, facts, chunks, examples[writers])
        (failed if any(c["passed"] is False for c in code[cand["id"]]) else passed).append(cand)

    def commit(pairs: list[tuple[dict, list[dict]]]) -> None:
        rows = []
        for cand, llm in pairs:
            checks = code[cand["id"]] + llm
            verdict, reasons = verdict_of(checks)
            rows.append({"candidate_id": cand["id"], "verification": checks, "verdict": verdict,
                         "rejection_reasons": reasons, "key": verify_key(ctx, cand)})
        cstore.record_verifications(ctx.store, rows, stage=STAGE)
        for cand, row in zip((c for c, _ in pairs), rows):
            cand["verdict"], cand["verification"] = row["verdict"], row["verification"]
            cand["rejection_reasons"] = row["rejection_reasons"]

    commit([(cand, []) for cand in failed])
    unverified = []

    async def one(cand: dict) -> None:
        try:
            llm = await llm_checks(ctx, cand, facts_of[cand["id"]], chunks)
        except CallFailed:
            unverified.append(cand["id"])
            return
        except ReaderRanAway as ran:
            llm = [check(ran.check, False, "the reader's reply ran past its token cap, twice: "
                         "no short answer to compare", source="llm", model=ran.model)]
        commit([(cand, llm)])

    await run_units(ctx, "verify", passed, one)
    if unverified:
        ctx.unverified = len(unverified)
