"""Ask the question writer again, with one change, for the spans a finished run asked: a paired
comparison on the same spans, free of the run-to-run noise of a whole new run.

    python bench/quality/replay_writer.py RUN.db OUT.jsonl --kinds duration \\
        --kind-text duration="a length of time: ..."
    python bench/quality/replay_writer.py RUN.db OUT.jsonl --kinds name --mask "…"
    python bench/quality/replay_writer.py RUN.db OUT.jsonl --kinds name,duration --kb-example

For every span of the given kinds that RUN.db's question stage asked (partner retries left
out), the writer is called with the change (`--kind-text KIND=TEXT` replaces the kind hint of
the `Answer:` line; `--mask TEXT` shows TEXT instead of a name span's answer; `--kb-example`
shows the run's verified item most like the span, chosen by `examples_for` below from every
item the run verified, so an upper bound on what a run could show; runs did this from a second
wave on until 2026-12-06), the wording is
chosen and read by the pipeline's own code (`questions._choose`, `roundtrip.round_trip`), and
one line per span gives the run's question and verdict beside the new ones. The calls go to the
embedded model through a copy of RUN.db (`--cache`, default OUT.jsonl's name + .db), so RUN.db
is never written and a second replay with the same change makes no call. Replayed with no
change against RUN.db's own replies it rebuilds the run's questions exactly (2026-12-05).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sqlite3
from pathlib import Path

from builder.generate import questions
from builder.generate.context import RunContext
from builder.generate.knowledge import KnowledgeIndex
from builder.generate.models import GenerateOptions, WrittenQuestions
from builder.generate.pipeline import _precheck
from builder.generate.roundtrip import round_trip
from builder.generate.runner import section_title
from builder.generate.spans import spans_of_chunk
from builder.llm.settings import LLMSettings
from builder.llm.setup import open_llm
from builder.store import Store
from builder.store import candidates as cstore
from builder.store.documents import list_chunks
from builder.text.values import find_values

from builder.generate.answers import Span
from builder.generate.candidate import kept_passed
from builder.generate.terms import jaccard, key_terms


def examples_for(ctx: RunContext, spans: list[Span]) -> dict[str, dict]:
    """Span id -> the run's verified single-hop item whose evidence shares most content words
    with the span's statement (of the same sort, a name for a name and a value for a value,
    where there is one; never one from the span's own statement), shown in the question
    prompt's worked-example slot. Ties go to the smallest candidate id."""
    done = sorted((c for c in kept_passed(cstore.load_candidates(ctx.store))
                   if c["type"] == "single_hop" and c.get("evidence")), key=lambda c: c["id"])
    options = []  # (item, its evidence, whether its answer is a value, the evidence's terms)
    for c in done:
        quote = c["evidence"][0].get("quote", "")
        if quote:
            options.append((c, quote, bool(find_values(c["answer"], c.get("language") or "en")),
                            key_terms(quote)))
    out = {}
    for span in spans:
        terms = key_terms(span.statement)
        others = [o for o in options if o[1] not in span.statement and span.statement not in o[1]]
        same = [o for o in others if o[2] == (span.kind != "name")]
        best = max(same or others, default=None, key=lambda o: jaccard(terms, o[3]))
        if best:
            c = best[0]
            out[span.id] = {"passage": best[1], "answer": c["answer"], "question": c["question"]}
    return out


def asked_spans(db: Path, kinds: set[str]):
    """(candidate row, span) for every span of `kinds` the run's question stage asked."""
    con = sqlite3.connect(db)
    cands = {r[0]: r for r in con.execute(
        "SELECT id, question, answer, verdict, rejection_reasons, duplicate_of FROM candidates "
        "WHERE type = 'single_hop'")}
    con.close()
    with Store(db) as store:
        chunks = list_chunks(store)
        infos = cstore.done_infos(store, questions.STAGE_QUESTION)
    titles = {c["id"]: section_title(c) or "" for c in chunks}
    spans = {s.id: s for c in chunks for s in spans_of_chunk(c, titles[c["id"]])}
    todo = [(cands[i["candidate_id"]], spans[i["span"]]) for i in infos
            if i.get("candidate_id") in cands and i.get("span") in spans
            and "partner" not in i and spans[i["span"]].kind in kinds]
    return KnowledgeIndex(chunks, titles), todo


def changed_vars(kind_text: dict[str, str], mask: str | None):
    original = questions.question_vars

    def question_vars(span, mention, partner):
        v = original(span, mention, partner)
        if span.kind in kind_text:
            v["kind"] = kind_text[span.kind]
        if mask is not None and span.kind == "name":
            v["answer"] = mask
        return v
    return question_vars


async def replay(db: Path, out: Path, cache: Path, kinds: set[str], kind_text: dict[str, str],
                 mask: str | None, kb_example: bool = False) -> None:
    kb, todo = asked_spans(db, kinds)
    write_vars = changed_vars(kind_text, mask)
    if not cache.exists():
        shutil.copy(db, cache)
    with Store(cache) as store, open_llm(store, LLMSettings(), job="replay") as llm, \
            out.open("w") as f:
        ctx = RunContext.create(store, llm, GenerateOptions(n=1))
        # the product's own choice, over every item the run verified (the copy holds them)
        examples = examples_for(ctx, [s for _, s in todo]) if kb_example else {}
        for cand, span in todo:
            mention = questions.mention_for(span, kb)
            new = await ask(ctx, kb, span, mention,
                            write_vars(span, mention, examples.get(span.id)))
            if new is None:
                continue
            f.write(json.dumps({
                "span": span.id, "kind": span.kind, "statement": span.statement,
                "old_q": cand[1], "old_a": cand[2], "old_v": "dup" if cand[5] else cand[3],
                "old_why": json.loads(cand[4] or "[]"), "new_q": new["question"],
                "new_a": new["answer"], "new_v": new["verdict"], "new_why": new["why"],
                "reader": new["reader"], "offered": new["offered"]},
                ensure_ascii=False) + "\n")
            f.flush()


async def ask(ctx: RunContext, kb: KnowledgeIndex, span: Span, mention: list[str],
              variables: dict) -> dict | None:
    """One span asked and read as a run asks it: the question call with `variables`, the
    wording chosen (`questions._choose`), the round trip; None when the call gave no reply."""
    res = await ctx.call("question", variables, WrittenQuestions)
    if not res.ok:
        return None
    q, a, problems, offered = questions._choose(span, res.value.questions, mention,
                                                _precheck(kb))
    if problems:
        verdict, why, read = "failed", f"form: {problems[0]}", ""
    else:
        r = await round_trip(ctx, q, a, span.chunk_id, span.language, kb)
        verdict, why, read = ("passed" if r.problem is None else "failed"), r.problem, r.answer
    return {"question": q, "answer": a, "verdict": verdict, "why": why, "reader": read,
            "offered": offered}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--kinds", required=True, help="span kinds, comma-separated")
    ap.add_argument("--kind-text", action="append", default=[], metavar="KIND=TEXT")
    ap.add_argument("--mask", help="shown to the writer instead of a name span's answer")
    ap.add_argument("--kb-example", action="store_true",
                    help="show the run's most similar verified item as the worked example")
    ap.add_argument("--cache", type=Path)
    args = ap.parse_args()
    kind_text = dict(kv.split("=", 1) for kv in args.kind_text)
    asyncio.run(replay(args.db, args.out, args.cache or args.out.with_suffix(".db"),
                       set(args.kinds.split(",")), kind_text, args.mask, args.kb_example))


if __name__ == "__main__":
    main()
