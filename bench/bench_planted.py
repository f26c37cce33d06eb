"""Planted bad items (single-hop and harder) through the real checks and reader: how many pass (target: none).

    python bench/bench_planted.py [--local-model qwen-1.5b] [--base-url URL --model M]

The planted set is tests/support/planted.py: one question per way a written question can be
wrong (it holds its answer, copies its heading, refers to "the document", asks another level of
a rubric, asks something the retrieved sentences answer differently...), plus right questions of
the same shapes that should pass. The unit test runs them with a scripted honest reader; this
runs the reader model golden would use (`pipeline.judge_question`: the code checks, then the
retrieval round trip), prints each verdict and the check that decided, then the bad pass rate
(reference: 0%) and how many right questions passed. Then the planted harder items
(`planted_harder`: a composer's mistaken reply over verified parts -- a multi-hop one chunk
answers, an unanswerable the knowledge base answers...; and comparatives and differences, which
code writes, over parts that give a bad one: asked in the same words, one stating the other's
value) through the real reader the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    from builder.generate.context import RunContext
    from builder.generate.knowledge import KnowledgeIndex
    from builder.generate.models import GenerateOptions
    from builder.generate.pipeline import judge_question
    from builder.llm.settings import LLMSettings
    from builder.llm.setup import open_llm
    from builder.store.documents import list_chunks
    from tests.support.planted import (build, compose_planted, good_single, planted_harder,
                                       planted_single)

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--local-model", default="qwen-1.5b")
    ap.add_argument("--base-url", default=None)
    ap.add_argument("--model", default=None)
    args = ap.parse_args()
    settings = LLMSettings(local_model=args.local_model, base_url=args.base_url, model=args.model)

    with tempfile.TemporaryDirectory() as tmp:
        store = build(Path(tmp) / "planted.db")
        chunks = list_chunks(store)
        kb = KnowledgeIndex(chunks, {c["id"]: c["title"] for c in chunks})
        bad, right = planted_single(store), good_single(store)
        with open_llm(store, settings, job="bench-planted") as llm:
            ctx = RunContext.create(store, llm, GenerateOptions())
            started = time.monotonic()

            async def run_all():
                # one event loop for every call: the SDK client is bound to the loop it was
                # made in, and one left behind by an earlier loop is closed on a dead one
                bad_reasons = [await judge_question(ctx, kb, q, sp) for _, q, sp, _ in bad]
                right_reasons = [await judge_question(ctx, kb, q, sp) for q, sp in right]
                harder = [(item, await compose_planted(store, llm, item))
                          for item in planted_harder(store)]
                return bad_reasons, right_reasons, harder

            bad_reasons, right_reasons, harder = asyncio.run(run_all())
            seconds = time.monotonic() - started
            model = llm.model_for("verifier")

    print(f"planted set through {model} ({seconds:.0f} s)")
    for (what, _, _, expected), reasons in zip(bad, bad_reasons):
        decided = sorted({r.split(":")[0] for r in reasons})
        mark = "REJECTED" if reasons else "PASSED  "
        other = "" if set(decided) & expected or not reasons else \
            f" (another check than {', '.join(sorted(expected))})"
        print(f"  {mark} {what}: {', '.join(decided) or '-'}{other}")
    for (question, _), reasons in zip(right, right_reasons):
        if reasons:
            print(f"  right question rejected: {question!r}: {reasons}")
    passed_bad = sum(not r for r in bad_reasons)
    right_passed = sum(not r for r in right_reasons)
    print(f"bad questions passing: {passed_bad} of {len(bad)} ({passed_bad / len(bad):.0%}; "
          f"reference 0%); right questions passing: {right_passed} of {len(right)}")
    for item, row in harder:
        decided = sorted({r.split(":")[0] for r in row["rejection_reasons"]})
        mark = "REJECTED" if row["verdict"] == "failed" else "PASSED  "
        print(f"  {mark} {item.kind}: {item.what}: {', '.join(decided) or '-'}")
    bad_h = [row for item, row in harder if item.bad]
    right_h = [row for item, row in harder if not item.bad]
    passed_h = sum(r["verdict"] == "passed" for r in bad_h)
    print(f"bad harder items passing: {passed_h} of {len(bad_h)} (reference 0%); right harder "
          f"items passing: {sum(r['verdict'] == 'passed' for r in right_h)} of {len(right_h)}")


if __name__ == "__main__":
    main()
