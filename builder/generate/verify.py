"""Stage 4: verification of every finished candidate. Code checks gate; LLM checks are recorded
and gate only on a NEGATIVE finding about what code cannot see.

Code checks (all gate):
- `evidence_in_chunk`: every evidence quote occurs in its chunk (tolerant match, spans.py);
- `numbers_grounded`: numbers and dates in the answer appear in the evidence or the question
  (or follow from two evidence numbers by one arithmetic step, for computed answers);
- `answer_supported`: at least half of the answer's content terms occur in evidence/question;
- `no_context_phrases`: no "according to the text"-style phrases (English and Chinese);
- `answer_not_in_question` (for a yes/no question, only a value of the answer stated in the
  question counts: "Is pickup free?" / "Pickup is free at all stores." is fine); `length`; `language` (the question is written in the chunk's language);
- `no_example_words`: the question uses no word of the writing prompt's worked example that the
  KB never mentions (a small model copying the example);
- single_hop asking for a value: `names_subject` (the question names the table row, or one of
  the fact's entities: "What is the shipping cost in the US?" for Express's $18.95 has two
  answers);
- per type: multi_hop `hops_needed` (no cited chunk holds both the answer terms and most of the
  question terms) and `bridge_not_named`; temporal `uses_newer_value`; comparative
  `states_both_values`; ambiguous `names_both_readings` + `question_underspecified`;
  unanswerable `kb_does_not_answer` (`absence.chunk_answering`: no FTS5 top-5 chunk of the
  WHOLE KB contains all the question's content terms, a numbered name like "Trailhead 4"
  counting as one phrase).

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

import re

from builder.store import candidates as cstore
from builder.store.documents import chunks_by_id
from builder.store.search import absent_terms, phrase_share, search_chunks

from builder.generate.absence import chunk_answering
from builder.generate.candidate import stable_id
from builder.generate.context import RunContext, run_units
from builder.generate.models import GroundedBatchVerdict, MultiHopVerdict, UnanswerableVerdict
from builder.generate.spans import locate_span
from builder.generate.terms import (
    STOPWORDS, answer_target, arithmetic_closure, dates, detect_language,
    key_terms, numbers, table_fact, tokens, without_dates,
)

STAGE = "verify"
TOP_K_LLM_UNANSWERABLE = 3  # of absence.TOP_K, the passages the verifier reads (prompt tokens cost time)
MAX_BATCH_CHUNKS = 3   # distinct cited chunks shown to one verify_grounded call
MAX_BATCH_ITEMS = 4    # candidates judged by one verify_grounded call
SINGLE_CALL_KINDS = ("multi_hop", "unanswerable")  # every other kind is judged in batches
CONTEXT_PHRASES = re.compile(
    r"\b(according to|based on|as (stated|mentioned|described) in|in|from) the (given |provided |above |"
    r"following )?(text|context|passage|document|article|excerpt|snippet|fact|facts|statement)s?\b"
    r"|\bthe (text|passage|context|document) (says|states|mentions)\b"
    r"|\b(mentioned|stated) (above|earlier)\b"
    r"|根据(上下文|文本|上文|段落|文章|材料|文档|以上|资料)|文中|上文|本文|该段|段落中|材料中", re.I)
YES_NO = re.compile(r"^(is|are|was|were|do|does|did|can|could|will|would|should|has|have|had|"
                    r"may|must)\b", re.I)
MAX_QUESTION = 300
MAX_ANSWER = {"reasoning": 600, "ambiguous": 600, "temporal": 500, "comparative": 500}


def check(name: str, passed: bool | None, reason: str = "", *, source: str = "code",
          model: str | None = None, gate: bool = True) -> dict:
    return {"check": name, "passed": passed, "reason": reason, "source": source, "model": model,
            "gate": gate}


def _call_failed(name: str, status: str, model: str | None) -> dict:
    """A verifier call that failed: recorded with passed=None, and it never gates."""
    return check(name, None, f"verifier call failed ({status})", source="llm", model=model,
                 gate=False)


def code_checks(store, cand: dict, facts: list[dict], chunks: dict[str, dict],
                example_text: str = "") -> list[dict]:
    """Deterministic checks for one candidate; `facts` are its facts in hop order;
    `example_text` the system text of the prompt that wrote it (for `no_example_words`)."""
    ctype, q, a = cand["type"], cand["question"], cand["answer"]
    out: list[dict] = []
    ev = cand.get("evidence") or []
    missing = [e["quote"][:60] for e in ev
               if e["chunk_id"] not in chunks or locate_span(chunks[e["chunk_id"]]["text"], e["quote"]) is None]
    out.append(check("evidence_in_chunk", not missing,
                     f"evidence not found in its chunk: {missing[0]!r}" if missing else ""))
    bad = CONTEXT_PHRASES.search(q) or CONTEXT_PHRASES.search(a)
    out.append(check("no_context_phrases", bad is None,
                     f"refers to its source: {bad.group(0)!r}" if bad else ""))
    q_ok = 4 <= len(q) <= MAX_QUESTION
    a_ok = 1 <= len(a) <= MAX_ANSWER.get(ctype, 400)
    out.append(check("length", q_ok and a_ok,
                     "" if q_ok and a_ok else f"question {len(q)} chars, answer {len(a)} chars"))
    lang = (cand.get("language") or "en").split("-")[0]
    got = detect_language(q)
    out.append(check("language", got == lang or lang not in ("en", "zh"),
                     "" if got == lang else f"question is in {got}, chunk is {lang}"))
    if ctype == "unanswerable":
        hit = chunk_answering(store, q)
        out.append(check("kb_does_not_answer", hit is None,
                         f"chunk {hit['id']} contains every term of the question" if hit else ""))
        return out

    evidence_text = " ".join(e["quote"] for e in ev)
    allowed = arithmetic_closure(numbers(evidence_text) | numbers(q))
    stray = sorted(numbers(a) - allowed)
    stray_dates = sorted(set(dates(a)) - set(dates(evidence_text)) - set(dates(q)))
    out.append(check("numbers_grounded", not stray and not stray_dates,
                     f"answer states {', '.join(stray + stray_dates)} which no evidence states"
                     if stray or stray_dates else ""))
    a_terms = key_terms(a)
    support = key_terms(evidence_text) | key_terms(q)
    share = len(a_terms & support) / len(a_terms) if a_terms else 1.0
    out.append(check("answer_supported", share >= 0.5,
                     "" if share >= 0.5 else f"only {share:.0%} of the answer's terms are in the evidence"))
    if YES_NO.match(q):  # "Is pickup free?" / "Pickup is free.": only a stated value leaks
        inside = bool(numbers(a)) and numbers(a) <= numbers(q)
    else:
        inside = bool(a_terms) and (a_terms <= key_terms(q) or
                                    (len(a.strip()) >= 3 and a.strip().casefold() in q.casefold()))
    out.append(check("answer_not_in_question", not inside,
                     "the question contains its answer" if inside else ""))
    if example_text:
        copied = _example_words(store, q, example_text)
        out.append(check("no_example_words", not copied,
                         f"uses {copied[0]!r} from the prompt's example, which the knowledge "
                         "base never mentions" if copied else ""))
    subjects = _value_subjects(store, cand, facts) if ctype == "single_hop" else []
    if subjects:
        named = any((key_terms(re.sub(r"\(.*?\)", " ", s)) or key_terms(s)) & key_terms(q)
                    for s in subjects)
        out.append(check("names_subject", named, "" if named else
                         f"the question does not name {subjects[0]!r}, whose value it asks for"))

    if ctype == "multi_hop":
        out.extend(_multi_hop_checks(cand, facts, chunks))
    elif ctype == "temporal" and len(facts) >= 2:
        newer, older = facts[0], facts[1]
        new_vals = numbers(without_dates(newer["evidence"])) - numbers(without_dates(older["evidence"]))
        old_vals = numbers(without_dates(older["evidence"])) - numbers(without_dates(newer["evidence"]))
        said = numbers(a)
        ok = bool(new_vals & said) or (not new_vals)
        reason = ""
        if not ok:
            reason = ("answer uses the older value" if old_vals & said else
                      "answer does not state the current value")
        out.append(check("uses_newer_value", ok, reason))
    elif ctype in ("comparative", "ambiguous") and len(facts) >= 2:
        va = numbers(without_dates(facts[0]["evidence"]))
        vb = numbers(without_dates(facts[1]["evidence"]))
        said = numbers(a)
        name = "states_both_values" if ctype == "comparative" else "names_both_readings"
        ok = bool(said & va) and bool(said & vb)
        if ctype == "comparative" and not ok:
            ok = bool(said & (arithmetic_closure(va | vb) - va - vb))  # "3 days longer"
        out.append(check(name, ok, "" if ok else "answer does not give the value of each side"))
        if ctype == "ambiguous":
            named = _names_a_reading(q, [(f.get("entities") or [""])[0] for f in facts[:2]])
            out.append(check("question_underspecified", not named,
                             f"the question names {named[0]!r}, so it has one reading" if named else ""))
    return out


def _value_subjects(store, cand: dict, facts: list[dict]) -> list[str]:
    """Who a value question must name: the row of a table cell, or the entities of a prose fact
    whose value is the answer ("Express costs $18.95 ..." asked as "What is the shipping cost in
    the US?" has two answers) -- except names found in a fifth of all chunks or more (the
    business itself: "Northwind"). Empty when the answer is not a value of the fact."""
    if not facts:
        return []
    text = facts[0]["text"]
    cell = table_fact(text)
    if cell:
        return [cell[0]]
    target = answer_target(text)
    if target and target.strip() == cand["answer"].strip():
        return [e for e in facts[0].get("entities") or [] if phrase_share(store, e) < 0.2]
    return []


def _example_words(store, question: str, example_text: str) -> list[str]:
    """Question words (5+ letters) that come from the prompt's worked example and occur nowhere
    in the KB.
    Small models copy the example when the facts confuse them (measured: "For how long can I
    borrow a ... book?" from the library example, asked of a returns policy)."""
    example_terms = key_terms(example_text)
    words = [w for w in dict.fromkeys(tokens(question))  # 5+ letters: not "long", "cost"
             if len(w) >= 5 and w not in STOPWORDS and key_terms(w) & example_terms]
    return absent_terms(store, words) if words else []


def _names_a_reading(question: str, names: list[str]) -> list[str]:
    """The readings an ambiguous question names: those whose distinctive words (not shared with
    the other reading, parenthetical details dropped) all occur in it. "Sleeping bag (20 °F)"
    next to "Sleeping pad" is named by "How much does a sleeping bag cost?"."""
    q_terms = key_terms(question)
    bases = [key_terms(re.sub(r"\(.*?\)", " ", n)) for n in names]
    named = []
    for i, name in enumerate(names):
        others = set().union(*(b for j, b in enumerate(bases) if j != i))
        own = bases[i] - others
        if (own and own <= q_terms) or (key_terms(name) and key_terms(name) <= q_terms):
            named.append(name)
    return named


def _multi_hop_checks(cand: dict, facts: list[dict], chunks: dict[str, dict]) -> list[dict]:
    out = []
    cids = cand.get("chunk_ids") or []
    if len(set(cids)) < 2:
        return [check("hops_needed", False, "cites fewer than two chunks")]
    q_terms, a_terms = key_terms(cand["question"]), key_terms(cand["answer"])
    alone = None
    for cid in cids:
        c_terms = key_terms(chunks[cid]["text"] + " " + (chunks[cid].get("title") or "")) if cid in chunks else set()
        covers_answer = a_terms <= c_terms
        covers_question = len(q_terms & c_terms) / len(q_terms) if q_terms else 1.0
        if covers_answer and covers_question >= 0.7:
            alone = cid
            break
    out.append(check("hops_needed", alone is None,
                     f"chunk {alone} alone answers it" if alone else ""))
    if len(facts) >= 2:
        shared = {n for n in facts[0].get("entities") or []} & {n for n in facts[1].get("entities") or []}
        shared = {n for n in shared if key_terms(n)}
        named = [n for n in shared if key_terms(n) <= q_terms]
        if shared:
            out.append(check("bridge_not_named", not named,
                             f"the question names the bridge {named[0]!r}" if named else ""))
    return out


def _passages(chunk_list: list[dict]) -> str:
    return "\n\n".join(f'<passage number="{i}">\n{c["text"]}\n</passage>'
                       for i, c in enumerate(chunk_list, 1))


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


def _items(batch: list[dict]) -> str:
    return "\n\n".join(f'<item number="{i}">\nQuestion: {c["question"]}\n'
                        f'Reference answer: {c["answer"]}\n</item>'
                        for i, c in enumerate(batch, 1))


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
    """The worked examples of the prompts that wrote a candidate: in each system section, the
    lines from the first one starting with "Example" up to "Reply with" (the convention every
    generation prompt follows)."""
    out = []
    for name in prompt_names:
        if name not in ctx.prompts:
            continue
        for role, text in ctx.prompts[name].sections:
            inside = False
            for line in text.splitlines() if role == "system" else []:
                if line.startswith("Reply with"):
                    inside = False
                elif line.startswith("Example"):
                    inside = True
                if inside:
                    out.append(line)
    return "\n".join(out)


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
