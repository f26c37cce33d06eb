"""The end-of-run summary: what is in the pool per type (generated / verified / rejected, top
rejection reasons), what this run spent on the LLM, per-document coverage and the difficulty mix
reached. Counts cover the whole pool in scope (earlier runs included), because that is what
`--n` is measured against.
"""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.table import Table
from rich.text import Text

from builder.store import candidates as cstore
from builder.vocabulary import DIFFICULTIES, TYPES

from builder.generate.context import RunContext
from builder.generate.models import DocumentCoverage, GenerateSummary, TypeCounts


def _llm_summary(ctx: RunContext) -> dict:
    summary = getattr(ctx.llm, "summary", None)
    if callable(summary):
        try:
            return dict(summary())
        except Exception:  # a summary must never fail the run it reports on
            pass
    return {"calls": sum(ctx.calls.values())}


def build_summary(ctx: RunContext, chunks: list[dict], plan: dict[str, int], *,
                  stopped: str | None = None, dry_run: bool = False, estimate: dict | None = None,
                  seconds: float = 0.0) -> GenerateSummary:
    ids = {c["id"] for c in chunks}
    docs = {c["document_id"] for c in chunks}
    pool = [c for c in cstore.load_candidates(ctx.store)
            if (set(c.get("chunk_ids") or []) & ids) or
            (not c.get("chunk_ids") and c.get("document_id") in docs)]
    types = {t: TypeCounts(planned=plan.get(t, 0)) for t in TYPES if plan.get(t) or
             any(c["type"] == t for c in pool)}
    reasons: dict[str, Counter] = {t: Counter() for t in types}
    difficulty: Counter = Counter()
    per_doc_verified: Counter = Counter()
    for c in pool:
        tc = types[c["type"]]
        tc.generated += 1
        if c.get("duplicate_of"):
            tc.duplicates += 1
        elif c["verdict"] == "passed":
            tc.verified += 1
            per_doc_verified[c["document_id"]] += 1
            if c.get("difficulty"):
                difficulty[c["difficulty"]] += 1
        elif c["verdict"] == "failed":
            tc.rejected += 1
            for r in c.get("rejection_reasons") or []:
                reasons[c["type"]][r.split(":")[0]] += 1
    for t, tc in types.items():
        tc.top_reasons = reasons[t].most_common(3)
        if tc.verified < tc.planned and not dry_run:
            tc.note = "short"
    doc_of = {c["id"]: c["document_id"] for c in chunks}
    asked = Counter(doc_of[cid] for cid in {cid for c in pool for cid in c.get("chunk_ids") or []
                                            if cid in ids})
    per_doc_chunks = Counter(c["document_id"] for c in chunks)
    documents = [DocumentCoverage(document_id=d, chunks=per_doc_chunks[d],
                                  chunks_asked=asked[d], verified=per_doc_verified[d])
                 for d in sorted(per_doc_chunks)]
    notes = list(dict.fromkeys(ctx.notes))
    reached = sum(difficulty.values())
    target = ctx.options.difficulty
    t_total = sum(target.values()) or 1.0
    short = {}
    if reached and not dry_run:
        for d in DIFFICULTIES:
            want = round(reached * target.get(d, 0.0) / t_total)
            if difficulty[d] < want:
                short[d] = want - difficulty[d]
        mix = ", ".join(f"{d} {difficulty[d]} ({difficulty[d] / reached:.0%} vs target "
                        f"{target.get(d, 0.0) / t_total:.0%})" for d in DIFFICULTIES)
        verdict = ("short: " + ", ".join(f"{d} by {k}" for d, k in short.items())) if short \
            else "on target"
        notes.append(f"difficulty reached: {mix}; {verdict}")
    pending = sum(1 for c in pool if c["verdict"] == "pending")
    if pending and not dry_run:
        notes.append(f"{pending} candidates are still pending: their verifier call failed; "
                     "run the same command again to retry them")
    if estimate:
        notes.append("dry run: estimated calls per stage " +
                     ", ".join(f"{k}={v}" for k, v in estimate.items()))
    return GenerateSummary(
        n_target=ctx.options.n, plan=plan, types=types,
        difficulty={d: difficulty[d] for d in DIFFICULTIES},
        difficulty_target=ctx.options.difficulty, difficulty_short=short, documents=documents,
        spans=dict(ctx.spans.most_common()),
        llm=_llm_summary(ctx), llm_calls_by_stage=dict(estimate or ctx.calls),
        llm_failures=sum(ctx.failures.values()), seconds=round(seconds, 2), stopped=stopped,
        dry_run=dry_run, notes=notes,
    )


def render_summary(summary: GenerateSummary, console: Console) -> None:
    """Tables on `console`: per type, LLM spend, difficulty, per document. Document ids and
    rejection reasons are printed as plain text (never markup)."""
    title = "golden generate — dry run (estimate)" if summary.dry_run else "golden generate"
    t = Table(title=title, title_justify="left")
    t.add_column("type", no_wrap=True, min_width=12)
    for col in ("planned", "generated", "verified", "rejected", "duplicates"):
        t.add_column(col, justify="right", no_wrap=True)
    for name, tc in summary.types.items():
        t.add_row(name, str(tc.planned), str(tc.generated), str(tc.verified), str(tc.rejected),
                  str(tc.duplicates))
    total = summary.verified_total
    t.add_row("total", str(sum(summary.plan.values())),
              str(sum(tc.generated for tc in summary.types.values())), str(total),
              str(sum(tc.rejected for tc in summary.types.values())),
              str(sum(tc.duplicates for tc in summary.types.values())))
    console.print(t)
    for name, tc in summary.types.items():
        if tc.top_reasons:
            reasons = ", ".join(f"{r} ({n})" for r, n in tc.top_reasons)
            console.print(Text(f"  {name} rejected for: {reasons}"))

    llm = summary.llm
    calls = llm.get("calls", sum(summary.llm_calls_by_stage.values()))
    tokens = (llm.get("prompt_tokens") or 0) + (llm.get("completion_tokens") or 0)
    cost = llm.get("cost_usd")
    per = f"{calls / total:.2f}" if total and not summary.dry_run else "-"
    line = (f"LLM: {calls} calls ({', '.join(f'{k} {v}' for k, v in summary.llm_calls_by_stage.items()) or 'none'}), "
            f"{tokens} tokens, cost {'$%.4f' % cost if cost is not None else 'n/a'}, "
            f"{per} calls (this run) per verified candidate, {summary.llm_failures} failed calls; "
            f"{summary.seconds:.1f} s")
    console.print(Text(line))
    if not summary.dry_run:
        reached = sum(summary.difficulty.values()) or 1
        diff = ", ".join(f"{d} {summary.difficulty.get(d, 0)} ({summary.difficulty.get(d, 0) / reached:.0%}, "
                         f"target {summary.difficulty_target.get(d, 0):.0%})"
                         for d in summary.difficulty_target)
        short = ", ".join(f"{d} short by {k}" for d, k in summary.difficulty_short.items())
        console.print(Text(f"Difficulty of verified candidates: {diff}"
                           + (f"; {short}" if short else "")))
        if summary.spans:
            console.print(Text(f"Answer spans found by code: {sum(summary.spans.values())} ("
                               + ", ".join(f"{k} {v}" for k, v in summary.spans.items()) + ")"))
        _per_item(summary, console)
    d = Table(title="coverage per document", title_justify="left")
    for col in ("document", "chunks", "chunks asked", "verified"):
        d.add_column(col, justify="left" if col == "document" else "right")
    for doc in summary.documents:
        d.add_row(Text(doc.document_id), str(doc.chunks), str(doc.chunks_asked), str(doc.verified))
    console.print(d)
    for note in summary.notes:
        console.print(Text(f"note: {note}"))
    if summary.stopped:
        console.print(Text(f"stopped early ({summary.stopped}); run the command again to resume"))


def _per_item(summary: GenerateSummary, console: Console) -> None:
    """What one verified item cost this run: calls, prompt and completion tokens, seconds; and
    how long the first one took. Machine-independent figures first (calls, tokens)."""
    llm = summary.llm
    total = summary.verified_total
    if not total:
        return
    calls = llm.get("calls", sum(summary.llm_calls_by_stage.values())) - llm.get("cached", 0)
    harder = sum(tc.verified for t, tc in summary.types.items() if t != "single_hop")
    parts = [f"{calls / total:.1f} calls",
             f"{(llm.get('prompt_tokens') or 0) / total:,.0f} prompt tokens",
             f"{(llm.get('completion_tokens') or 0) / total:,.0f} completion tokens",
             f"{summary.seconds / total:.1f} s"]
    first = (f"; first verified item after {summary.first_item_seconds:.0f} s"
             if summary.first_item_seconds is not None else "")
    console.print(Text(f"Per verified item: {', '.join(parts)}{first}; harder items "
                       f"{harder} of {total} ({harder / total:.0%})"))
