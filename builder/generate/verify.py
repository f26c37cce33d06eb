"""Stage 5: verification of every finished candidate. Code checks gate (checks.py, run first
for every candidate); LLM checks are recorded and gate only on a NEGATIVE finding about what
code cannot see.

LLM checks (`role="verifier"`, only for candidates that passed the code checks; a candidate
that fails them gets no call):
- grounded kinds (single_hop, reasoning, comparative, temporal, ambiguous) are judged in
  BATCHES, one `verify_grounded` call per batch: candidates sorted by (sorted cited chunk ids,
  id) are packed greedily while the union of their cited chunks stays <= MAX_BATCH_CHUNKS and
  the batch holds <= MAX_BATCH_ITEMS. The call sees the union of the cited chunks as numbered
  passages and the candidates as numbered items. Per item, "not answerable" (`llm_answerable`)
  or any unsupported claim (`llm_claims_supported`) gates (small verifiers say "supported" to
  nearly everything, so a "no" is informative and a "yes" is not). An "unsupported claim" gates
  only when it is a claim of THIS answer (half its terms in the answer, `_from_answer`); others
  are recorded and ignored. An item the reply leaves out
  (or numbers out of range; a repeated number keeps its first verdict) is recorded as "no
  verdict" (passed None) and does not gate;
- multi_hop: one call per candidate; a passage that answers alone gates;
- unanswerable: one call per candidate over the FTS5 top-3 of the whole KB (the code check
  reads the top-5); "answered" gates only when its quote is really found in
  the passage it names (a bare "answered" from a weak model is recorded, not trusted). No call
  when no chunk shares a term with the question (nothing could answer it).
A failed LLM call is recorded (passed None) for every candidate it covered and does not gate.

Writing: each unit of work (a batch, one multi_hop/unanswerable candidate, or all candidates
that failed their code checks) is committed in one transaction with the ledger row of each of
its candidates, so a crash never leaves half a batch. Batches depend only on the pending pool,
so the same pool gives the same batches and the same prompt text (a rerun hits the LLM cache).
"""

from __future__ import annotations

from builder.store import candidates as cstore
from builder.store.documents import chunks_by_id
from builder.store.search import search_chunks

from builder.generate.candidate import stable_id
from builder.generate.checks import check, code_checks
from builder.generate.context import RunContext, run_units
from builder.generate.models import GroundedBatchVerdict, MultiHopVerdict, UnanswerableVerdict
from builder.generate.spans import locate_span
from builder.generate.terms import key_terms, numbers

STAGE = "verify"
TOP_K_LLM_UNANSWERABLE = 3  # of absence.TOP_K, the passages the verifier reads (prompt tokens cost time)
MAX_BATCH_CHUNKS = 3   # distinct cited chunks shown to one verify_grounded call
MAX_BATCH_ITEMS = 4    # candidates judged by one verify_grounded call
SINGLE_CALL_KINDS = ("multi_hop", "unanswerable")  # every other kind is judged in batches


def _call_failed(name: str, status: str, model: str | None) -> dict:
    """A verifier call that failed: recorded with passed=None, and it never gates."""
    return check(name, None, f"verifier call failed ({status})", source="llm", model=model,
                 gate=False)


def _passages(chunk_list: list[dict]) -> list[dict]:
    """The chunks as the prompts' `passages` list (the prompt file numbers and frames them)."""
    return [{"text": c["text"]} for c in chunk_list]


async def llm_checks(ctx: RunContext, store, cand: dict, chunks: dict[str, dict]) -> list[dict]:
    """The one verifier call of a multi_hop or unanswerable candidate (grounded kinds are
    judged in batches by `grounded_batch_checks`)."""
    ctype = cand["type"]
    if ctype == "unanswerable":
        name = "verify_unanswerable"
        hits = search_chunks(store, cand["question"], k=TOP_K_LLM_UNANSWERABLE)
        if not hits:  # no chunk shares a single term with the question: nothing to ask about
            return [check("llm_kb_does_not_answer", True, "no chunk shares a term with the question")]
        res = await ctx.call(name, {"question": cand["question"], "passages": _passages(hits)},
                             UnanswerableVerdict, role="verifier")
        model = res.model or ctx.model("verifier", name)
        if not res.ok:
            return [_call_failed("llm_kb_does_not_answer", res.status, model)]
        v = res.value
        if not v.answered:
            return [check("llm_kb_does_not_answer", True, v.reason, source="llm", model=model)]
        grounded = any(locate_span(h["text"], v.quote) for h in hits) if v.quote.strip() else False
        if grounded:
            return [check("llm_kb_does_not_answer", False,
                          f"verifier found the answer in the KB: {v.quote[:80]!r}", source="llm", model=model)]
        return [check("llm_kb_does_not_answer", None,
                      "verifier said answered but quoted nothing found in the passages (ignored)",
                      source="llm", model=model, gate=False)]

    cited = [chunks[c] for c in cand.get("chunk_ids") or [] if c in chunks]
    variables = {"question": cand["question"], "answer": cand["answer"], "passages": _passages(cited)}
    if ctype == "multi_hop":
        name = "verify_multi_hop"
        res = await ctx.call(name, variables, MultiHopVerdict, role="verifier")
        model = res.model or ctx.model("verifier", name)
        if not res.ok:
            return [_call_failed("llm_answerable", res.status, model)]
        v = res.value
        alone = [i for i in v.single_passage_answers if 1 <= i <= len(cited)]
        return [
            check("llm_answerable", v.answerable, "" if v.answerable else f"verifier: {v.reason or 'not answerable'}",
                  source="llm", model=model),
            check("llm_hops_needed", not alone,
                  f"verifier: passage {alone[0]} answers it alone" if alone else "", source="llm", model=model),
        ]
    raise ValueError(f"{ctype} candidates are verified in batches (grounded_batch_checks)")


def _cited_ids(cand: dict, chunks: dict[str, dict]) -> list[str]:
    """The candidate's cited chunk ids that exist, in citation order, without repeats."""
    return list(dict.fromkeys(c for c in cand.get("chunk_ids") or [] if c in chunks))


def grounded_batches(cands: list[dict], chunks: dict[str, dict]) -> list[list[dict]]:
    """Pack grounded candidates into verifier batches, deterministically: sorted by (sorted
    cited chunk ids, id), a candidate joins the current batch while the union of cited chunks
    stays <= MAX_BATCH_CHUNKS and the batch holds <= MAX_BATCH_ITEMS, else it opens the next
    batch (a candidate citing more chunks than the limit gets a batch of its own)."""
    batches: list[list[dict]] = []
    seen: set[str] = set()
    for cand in sorted(cands, key=lambda c: (sorted(_cited_ids(c, chunks)), c["id"])):
        cited = set(_cited_ids(cand, chunks))
        if batches and len(batches[-1]) < MAX_BATCH_ITEMS and len(seen | cited) <= MAX_BATCH_CHUNKS:
            batches[-1].append(cand)
            seen |= cited
        else:
            batches.append([cand])
            seen = cited
    return batches


def _items(batch: list[dict]) -> list[dict]:
    """The candidates as `verify_grounded`'s `items` list (numbered and framed by the file)."""
    return [{"question": c["question"], "answer": c["answer"]} for c in batch]


async def grounded_batch_checks(ctx: RunContext, batch: list[dict],
                                chunks: dict[str, dict]) -> list[list[dict]]:
    """One `verify_grounded` call for a batch; the LLM checks of each candidate, in order."""
    name = "verify_grounded"
    cited = list(dict.fromkeys(cid for cand in batch for cid in _cited_ids(cand, chunks)))
    variables = {"passages": _passages([chunks[c] for c in cited]), "items": _items(batch)}
    res = await ctx.call(name, variables, GroundedBatchVerdict, role="verifier")
    model = res.model or ctx.model("verifier", name)
    if not res.ok:
        return [[_call_failed("llm_answerable", res.status, model)] for _ in batch]
    verdicts = {}
    for v in res.value.items:
        if 1 <= v.item <= len(batch):
            verdicts.setdefault(v.item, v)  # a repeated number keeps its first verdict
    out = []
    for i in range(1, len(batch) + 1):
        v = verdicts.get(i)
        if v is None:
            out.append([check("llm_answerable", None, "verifier gave no verdict for this item",
                              source="llm", model=model, gate=False)])
            continue
        claimed = [c for c in v.unsupported_claims if c.strip()]
        unsupported = [c for c in claimed if _from_answer(c, batch[i - 1]["answer"])]
        stray = [c for c in claimed if c not in unsupported]
        out.append([
            check("llm_answerable", v.answerable,
                  "" if v.answerable else f"verifier: {v.reason or 'not answerable'}",
                  source="llm", model=model),
            check("llm_claims_supported", not unsupported,
                  f"verifier: unsupported claim {unsupported[0][:80]!r}" if unsupported else "",
                  source="llm", model=model),
        ] + ([check("llm_claims_supported", None,
                    f"verifier named a claim the answer does not make: {stray[0][:80]!r} (ignored)",
                    source="llm", model=model, gate=False)] if stray else []))
    return out


def _from_answer(claim: str, answer: str) -> bool:
    """True when most of a claim's content terms are in the answer. The embedded 0.5B, judging
    several items at once, lists "unsupported claims" taken from another item or a passage
    (measured: "the paper or emailed receipt" against the answer "2 hours"); such a claim says
    nothing about this answer, so it is recorded and does not gate."""
    terms = key_terms(claim)
    return (bool(terms) and len(terms & key_terms(answer)) / len(terms) >= 0.5
            and numbers(claim) <= numbers(answer))  # "45 days" is not a claim of "7 days"


def _example_lines(ctx: RunContext, prompt_names: tuple[str, ...]) -> str:
    """The worked examples of the prompts that wrote a candidate: the sections each prompt file
    marks `--- system example` (`Prompt.examples`)."""
    return "\n".join(text for name in prompt_names if name in ctx.prompts
                     for text in ctx.prompts[name].examples)


def verify_key(ctx: RunContext, cand: dict) -> str:
    names = ("verify_grounded", "verify_multi_hop", "verify_unanswerable")
    versions = {n: ctx.prompts[n].version for n in names}
    return stable_id(STAGE, cand["id"], versions)


def verdict_of(checks: list[dict]) -> tuple[str, list[str]]:
    reasons = [f"{c['check']}: {c['reason']}" if c["reason"] else c["check"]
               for c in checks if c.get("gate", True) and c["passed"] is False]
    return ("failed" if reasons else "passed"), reasons


async def verify_pending(ctx: RunContext, candidates: list[dict], facts_by_id: dict[str, dict]) -> None:
    """Verify every candidate whose verdict is still 'pending'.

    Code checks run first for all of them; those that fail are committed together with no LLM
    call. Then each batch of grounded candidates, and each multi_hop / unanswerable candidate,
    is one unit (run through `run_units`) committed in one transaction."""
    todo = [c for c in candidates if c["verdict"] == "pending"]
    if not todo:
        return
    need = {cid for c in todo for cid in c.get("chunk_ids") or []}
    need |= {e["chunk_id"] for c in todo for e in c.get("evidence") or []}
    chunks = chunks_by_id(ctx.store, need)

    code: dict[str, list[dict]] = {}
    examples: dict[tuple[str, ...], str] = {}
    failed, single, grounded = [], [], []
    for cand in todo:
        facts = [facts_by_id[f] for f in cand.get("fact_ids") or [] if f in facts_by_id]
        writers = tuple(sorted(cand.get("prompts") or {}))
        if writers not in examples:  # a few prompt combinations across the whole pool
            examples[writers] = _example_lines(ctx, writers)
        code[cand["id"]] = code_checks(ctx.store, cand, facts, chunks, examples[writers])
        if any(c["passed"] is False for c in code[cand["id"]]):
            failed.append(cand)
        elif cand["type"] in SINGLE_CALL_KINDS:
            single.append(cand)
        else:
            grounded.append(cand)

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

    async def one(unit: list[dict]) -> None:
        if unit[0]["type"] in SINGLE_CALL_KINDS:
            commit([(unit[0], await llm_checks(ctx, ctx.store, unit[0], chunks))])
        else:
            commit(list(zip(unit, await grounded_batch_checks(ctx, unit, chunks))))

    await run_units(ctx, "verify", [[c] for c in single] + grounded_batches(grounded, chunks), one)
