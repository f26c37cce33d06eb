"""Benchmark the generation pipeline without a model: ingest samples/handbook, run
`run_generate` with a scripted model that splits chunks into sentence facts and phrases
questions by template, and print LLM calls, estimated tokens and calls per verified candidate
per type. Also times the hand-written MinHash/LSH dedup against datasketch (if installed) on
synthetic questions, as a ratio measured in the same run.

Runs the pipeline twice: facts from the (scripted) LLM, and facts cut out by code.

    python bench/bench_generate.py [--n 60] [--dedup 5000]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from click.testing import CliRunner  # noqa: E402

from builder.cli import golden  # noqa: E402
from builder.generate import dedup  # noqa: E402
from builder.generate.models import GenerateOptions  # noqa: E402
from builder.generate.runner import run_generate  # noqa: E402
from builder.ingest.tokens import count_tokens  # noqa: E402
from builder.store import Store  # noqa: E402
from builder.text.language import HAN_CHAR  # noqa: E402
from tests.fakes import ScriptedLLM  # noqa: E402
from tests.support.scripted_kb import ideal  # noqa: E402

_SENT = re.compile(r"(?<=[.!?。！？])\s*|\n+")
_NAME = re.compile(r"\b[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*")


def sentence_model(name, v, role):
    if name == "facts":
        facts = []
        for s in _SENT.split(v["chunk"]):
            s = s.strip(" -*#|")
            if len(s.split()) >= 5 or (HAN_CHAR.search(s) and len(s) >= 8):
                ents = [m.group(0) for m in _NAME.finditer(s) if m.start() > 0][:3]
                facts.append({"fact": s, "evidence": s, "entities": ents, "dates": []})
        return {"facts": facts[:8]}
    if name == "evolve_comparative":
        return {"question": "How do these compare: " + " ".join(v["fact_a"].split()[:4]) + " and "
                + " ".join(v["fact_b"].split()[:4]) + "?", "answer": f"{v['fact_a']} {v['fact_b']}"}
    if name == "evolve_temporal":
        return {"question": "What is the current rule on " + " ".join(v["newer_fact"].split()[:4]) + "?",
                "answer": v["newer_fact"]}
    return ideal(name, v, role)


def count_call_tokens(llm_calls, prompts):
    total = 0
    for name, variables, _ in llm_calls:
        msgs = prompts[name].render(variables)
        total += sum(count_tokens(m["content"]) for m in msgs) + 150  # + a typical reply
    return total


def bench_pipeline(n: int, facts: str) -> None:
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "g.db")
    res = CliRunner().invoke(golden, ["--db", db, "ingest", str(ROOT / "samples" / "handbook")])
    assert res.exit_code == 0, res.output
    store = Store(db)
    chunks = store.query("SELECT count(*) AS n FROM chunks")[0]["n"]
    llm = ScriptedLLM(sentence_model)
    t0 = time.perf_counter()
    summary = run_generate(store, llm, GenerateOptions(n=n, facts=facts))
    wall = time.perf_counter() - t0
    from builder.generate.context import PROMPT_NAMES
    from builder.llm.prompts import load_prompt
    prompts = {p: load_prompt(p) for p in PROMPT_NAMES}
    tokens = count_call_tokens(llm.calls, prompts)
    verified = summary.verified_total
    print(f"pipeline, facts={facts}: {chunks} chunks, n={n}: {verified} verified in {wall:.2f} s "
          "(scripted model)")
    print(f"  LLM calls {len(llm.calls)} ({dict(Counter(c[0] for c in llm.calls))})")
    print(f"  ~{tokens} tokens (prompt tokens counted + 150 per reply)")
    print(f"  calls per verified candidate {len(llm.calls) / max(verified, 1):.2f}, "
          f"tokens per verified {tokens / max(verified, 1):.0f}")
    for t, tc in summary.types.items():
        print(f"  {t:13} planned {tc.planned:3} generated {tc.generated:3} verified {tc.verified:3} "
              f"rejected {tc.rejected:3} dup {tc.duplicates:2} {tc.top_reasons}")
    print(f"  difficulty {summary.difficulty}; docs covered "
          f"{sum(1 for d in summary.documents if d.verified)}/{len(summary.documents)}")
    again = ScriptedLLM(sentence_model)
    t0 = time.perf_counter()
    run_generate(store, again, GenerateOptions(n=n, facts=facts))
    print(f"  rerun: {len(again.calls)} LLM calls, {time.perf_counter() - t0:.2f} s")


def bench_dedup(count: int) -> None:
    rng = random.Random(1)
    vocab = ["".join(rng.choice("abcdefghijklmnoprstuw") for _ in range(rng.randint(3, 9)))
             for _ in range(3000)]
    pool = []
    for i in range(count):
        if pool and rng.random() < 0.2:  # a near or exact duplicate of an earlier question
            words = rng.choice(pool)["question"].rstrip("?").split()
            if rng.random() < 0.5:
                words[rng.randrange(len(words))] = rng.choice(vocab)
            q = " ".join(words).upper() + "?"
        else:
            q = " ".join(rng.choice(vocab) for _ in range(12)) + "?"
        pool.append({"id": f"c{i:06d}", "question": q, "answer": "same answer", "verdict": "passed",
                     "verification": [], "created_at": "", "duplicate_of": None})
    t0 = time.perf_counter()
    pairs = dedup.find_duplicates(pool)
    ours = time.perf_counter() - t0
    print(f"dedup: {count} questions, {len(pairs)} duplicates, golden {ours:.2f} s")
    try:
        from datasketch import MinHash, MinHashLSH
    except ImportError:
        print("  datasketch not installed: no reference ratio")
        return
    t0 = time.perf_counter()
    lsh = MinHashLSH(threshold=0.8, num_perm=64)
    for c in pool:
        m = MinHash(num_perm=64)
        for s in dedup.shingles(c["question"]):
            m.update(s.encode("utf-8"))
        lsh.insert(c["id"], m)
        lsh.query(m)
    ref = time.perf_counter() - t0
    print(f"  datasketch MinHash+LSH (signatures + index + query only) {ref:.2f} s; "
          f"golden/datasketch = {ours / ref:.2f}x")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--dedup", type=int, default=5000)
    args = ap.parse_args()
    for facts in ("llm", "text"):
        bench_pipeline(args.n, facts)
    bench_dedup(args.dedup)
