"""Planted bad candidates through the real verifier: how many pass (target: none).

    python bench/bench_planted.py [--local-model qwen-1.5b] [--base-url URL --model M]

The planted set is tests/support/planted.py: one candidate per way an item can be wrong
(fabricated evidence, one-chunk "multi-hop", answerable "unanswerable", tautology, an answer
that contradicts its evidence, an answer from another level of a rubric, the prompt's example
copied, an off-topic unanswerable), plus right items of the same shapes that should pass. The
unit test runs it with a scripted honest reader; this runs the verifier model golden would use,
and prints for each item the verdict and the check that decided, then the bad pass rate
(reference: 0%) and how many right items passed.
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
    from builder.generate.models import GenerateOptions
    from builder.generate.verify import verify_pending
    from builder.llm.settings import LLMSettings
    from builder.llm.setup import open_llm
    from builder.store.candidates import load_candidates, load_facts
    from tests.support.planted import build, good, planted

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--local-model", default="qwen-1.5b")
    ap.add_argument("--base-url", default=None)
    ap.add_argument("--model", default=None)
    args = ap.parse_args()
    settings = LLMSettings(local_model=args.local_model, base_url=args.base_url, model=args.model)

    with tempfile.TemporaryDirectory() as tmp:
        store = build(Path(tmp) / "planted.db")
        bad, right = planted(store), good(store)
        with open_llm(store, settings, job="bench-planted") as llm:
            ctx = RunContext.create(store, llm, GenerateOptions())
            facts = {f["id"]: f for f in load_facts(store)}
            started = time.monotonic()
            asyncio.run(verify_pending(ctx, load_candidates(store), facts))
            seconds = time.monotonic() - started
            model = llm.model_for("verifier")
        verdicts = {c["id"]: c for c in load_candidates(store)}

    print(f"planted set through {model} ({seconds:.0f} s)")
    passed_bad = 0
    for what, cand, expected in bad:
        got = verdicts[cand["id"]]
        decided = [r.split(":")[0] for r in got["rejection_reasons"]]
        passed_bad += got["verdict"] == "passed"
        mark = "REJECTED" if got["verdict"] == "failed" else "PASSED "
        other = "" if set(decided) & expected or got["verdict"] == "passed" else \
            f" (another check than {', '.join(sorted(expected))})"
        print(f"  {mark} {what}: {', '.join(decided) or '-'}{other}")
    right_passed = sum(verdicts[c["id"]]["verdict"] == "passed" for c in right)
    for cand in right:
        got = verdicts[cand["id"]]
        if got["verdict"] != "passed":
            print(f"  right item rejected: {got['question']!r}: {got['rejection_reasons']}")
    print(f"bad items passing: {passed_bad} of {len(bad)} ({passed_bad / len(bad):.0%}; "
          f"reference 0%); right items passing: {right_passed} of {len(right)}")


if __name__ == "__main__":
    main()
