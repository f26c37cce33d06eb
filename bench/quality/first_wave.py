"""Ask the first wave of a run again for several seeds: what a user waits for before the first
verified item, measured without a whole run for each seed.

    python bench/quality/first_wave.py RUN.db OUT.jsonl --seeds 0-9 [--n 20]

For each seed the span order of `golden generate --n N --seed SEED` with the embedded model is
planned by the product's own code (`plan_spans`, then `_take` for the first wave), and the
first wave's spans are asked and read as a run asks them (`questions._choose`,
`roundtrip.round_trip`). The calls go through a copy of RUN.db (`--cache`, default OUT.jsonl's
name + .db), whose cache answers a span asked before (another seed, or another version of the
code run with the same cache) without a call: two orderings compared through one cache differ
only where they ask different spans. One line per seed: the spans and how many passed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
from pathlib import Path

from builder.generate import questions
from builder.generate.context import RunContext
from builder.generate.knowledge import KnowledgeIndex
from builder.generate.models import GenerateOptions
from builder.generate.pipeline import FIRST_WAVE, _take
from builder.generate.plan import for_run
from builder.generate.runner import section_title
from builder.generate.spans import plan_spans
from builder.llm.settings import LLMSettings
from builder.llm.setup import open_llm
from builder.store import Store
from builder.store.documents import list_chunks
from replay_writer import ask  # this folder: the script's own directory is on sys.path


def seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


async def first_waves(db: Path, out: Path, cache: Path, seed_list: list[int], n: int) -> None:
    if not cache.exists():
        shutil.copy(db, cache)
    plan, _ = for_run(GenerateOptions(n=n), local=True)
    with Store(cache) as store, open_llm(store, LLMSettings(), job="first-wave") as llm, \
            out.open("w") as f:
        chunks = list_chunks(store)
        titles = {c["id"]: section_title(c) or "" for c in chunks}
        kb = KnowledgeIndex(chunks, titles)
        ctx = RunContext.create(store, llm, GenerateOptions(n=n))
        for seed in seed_list:
            batch, _ = _take(plan_spans(chunks, titles, seed, plan), FIRST_WAVE, kb)
            rows = []
            for span in batch:
                mention = questions.mention_for(span, kb)
                new = await ask(ctx, kb, span, mention,
                                questions.question_vars(span, mention, None)) or {}
                rows.append({"span": span.id, "kind": span.kind, "answer": span.answer,
                             "question": new.get("question", ""),
                             "verdict": new.get("verdict", "failed"), "why": new.get("why")})
            f.write(json.dumps({"seed": seed, "passed": sum(r["verdict"] == "passed"
                                                             for r in rows), "spans": rows},
                               ensure_ascii=False) + "\n")
            f.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--seeds", default="0-9", help="a seed or a range, 0-9")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--cache", type=Path)
    args = ap.parse_args()
    asyncio.run(first_waves(args.db, args.out, args.cache or args.out.with_suffix(".db"),
                            seeds(args.seeds), args.n))


if __name__ == "__main__":
    main()
