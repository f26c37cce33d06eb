"""Stage 4: verification of every finished candidate. Code checks gate; LLM checks are recorded
and gate only on a NEGATIVE finding about what code cannot see.

Code checks (all gate):
- `evidence_in_chunk`: every evidence quote occurs in its chunk (tolerant match, spans.py);
- `numbers_grounded`: numbers and dates in the answer appear in the evidence or the question
  (or follow from two evidence numbers by one arithmetic step, for computed answers);
- `answer_supported`: at least half of the answer's content terms occur in evidence/question;
- `no_context_phrases`: no "according to the text"-style phrases (English and Chinese);
- `answer_not_in_question`; `length`; `language` (the question is written in the chunk's language);
- per type: multi_hop `hops_needed` (no cited chunk holds both the answer terms and most of the
  question terms) and `bridge_not_named`; temporal `uses_newer_value`; comparative
  `states_both_values`; ambiguous `names_both_readings` + `question_underspecified`;
  unanswerable `kb_does_not_answer` (no FTS5 top-5 chunk of the WHOLE KB contains all the
  question's content terms).

LLM checks (one `role="verifier"` call per candidate that passed the code checks; a candidate
that fails them gets no call):
- grounded kinds: answerable from the cited chunks + per-claim support. "not answerable" or any
  "not supported" claim gates (small verifiers say "supported" to nearly everything, so a "no"
  is informative and a "yes" is not);
- multi_hop: a passage that answers alone gates;
- unanswerable: "answered" gates only when its quote is really found in the passage it names
  (a bare "answered" from a weak model is recorded, not trusted).
A failed LLM call is recorded (passed None) and does not gate.
"""

from __future__ import annotations

import re

from builder.store import candidates as cstore
from builder.store.documents import chunks_by_id
from builder.store.search import search_chunks

from builder.generate.candidate import stable_id
from builder.generate.context import RunContext, run_units
from builder.generate.models import GroundedVerdict, MultiHopVerdict, UnanswerableVerdict
from builder.generate.spans import locate_span
from builder.generate.terms import (
    arithmetic_closure, dates, detect_language, key_terms, numbers, without_dates,
)

STAGE = "verify"
TOP_K_UNANSWERABLE = 5
CONTEXT_PHRASES = re.compile(
    r"\b(according to|based on|as (stated|mentioned|described) in|in|from) the (given |provided |above |"
    r"following )?(text|context|passage|document|article|excerpt|snippet|fact|facts|statement)s?\b"
    r"|\bthe (text|passage|context|document) (says|states|mentions)\b"
    r"|\b(mentioned|stated) (above|earlier)\b"
    r"|根据(上下文|文本|上文|段落|文章|材料|文档|以上|资料)|文中|上文|本文|该段|段落中|材料中", re.I)
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


def code_checks(store, cand: dict, facts: list[dict], chunks: dict[str, dict]) -> list[dict]:
    """Deterministic checks for one candidate; `facts` are its facts in hop order."""
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
        hits = search_chunks(store, q, k=TOP_K_UNANSWERABLE)
        need = key_terms(q)
        hit = next((h for h in hits if need and need <= key_terms(h["text"] + " " + (h.get("title") or ""))), None)
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
    inside = bool(a_terms) and (a_terms <= key_terms(q) or
                                (len(a.strip()) >= 3 and a.strip().casefold() in q.casefold()))
    out.append(check("answer_not_in_question", not inside,
                     "the question contains its answer" if inside else ""))

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
            q_terms = key_terms(q)
            named = [n for f in facts for n in (f.get("entities") or [])[:1]
                     if key_terms(n) and key_terms(n) <= q_terms]
            out.append(check("question_underspecified", not named,
                             f"the question names {named[0]!r}, so it has one reading" if named else ""))
    return out


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
    ctype = cand["type"]
    if ctype == "unanswerable":
        name = "verify_unanswerable"
        hits = search_chunks(store, cand["question"], k=TOP_K_UNANSWERABLE)
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
    name = "verify_grounded"
    res = await ctx.call(name, variables, GroundedVerdict, role="verifier")
    model = res.model or ctx.model("verifier", name)
    if not res.ok:
        return [_call_failed("llm_answerable", res.status, model)]
    v = res.value
    unsupported = [c.claim for c in v.claims if not c.supported]
    return [
        check("llm_answerable", v.answerable, "" if v.answerable else f"verifier: {v.reason or 'not answerable'}",
              source="llm", model=model),
        check("llm_claims_supported", not unsupported,
              f"verifier: unsupported claim {unsupported[0][:80]!r}" if unsupported else "",
              source="llm", model=model),
    ]


def verify_key(ctx: RunContext, cand: dict) -> str:
    names = ("verify_grounded", "verify_multi_hop", "verify_unanswerable")
    versions = {n: ctx.prompts[n].version for n in names}
    return stable_id(STAGE, cand["id"], versions)


def verdict_of(checks: list[dict]) -> tuple[str, list[str]]:
    reasons = [f"{c['check']}: {c['reason']}" if c["reason"] else c["check"]
               for c in checks if c.get("gate", True) and c["passed"] is False]
    return ("failed" if reasons else "passed"), reasons


async def verify_pending(ctx: RunContext, candidates: list[dict], facts_by_id: dict[str, dict]) -> None:
    """Verify every candidate whose verdict is still 'pending' (one transaction each)."""
    todo = [c for c in candidates if c["verdict"] == "pending"]
    if not todo:
        return
    need = {cid for c in todo for cid in c.get("chunk_ids") or []}
    need |= {e["chunk_id"] for c in todo for e in c.get("evidence") or []}
    chunks = chunks_by_id(ctx.store, need)

    async def one(cand: dict) -> None:
        facts = [facts_by_id[f] for f in cand.get("fact_ids") or [] if f in facts_by_id]
        checks = code_checks(ctx.store, cand, facts, chunks)
        if all(c["passed"] is not False for c in checks):
            checks += await llm_checks(ctx, ctx.store, cand, chunks)
        verdict, reasons = verdict_of(checks)
        cstore.record_verification(ctx.store, cand["id"], verification=checks, verdict=verdict,
                                   rejection_reasons=reasons, stage=STAGE, key=verify_key(ctx, cand))
        cand["verdict"], cand["verification"], cand["rejection_reasons"] = verdict, checks, reasons

    await run_units(ctx, "verify", todo, one)
