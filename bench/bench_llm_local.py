"""Benchmark: the embedded local model (default qwen-0.5b) through golden's own client.

Reports: model fetch/assembly time (0 when cached), server start time (launch -> health check
passes), seconds per structured call, generation and prompt throughput (tokens/s over the
calls), and the server's peak RSS (VmHWM).

Run by hand:  GOLDEN_WHEELHOUSE=/tmp/models /work/venv/bin/python bench/bench_llm_local.py
              [--model qwen-0.5b] [--calls 8]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

CHUNK = (
    "The Northwind warehouse in Rotterdam opened in March 2019 and handles about 1,200 "
    "pallets a day. It runs two shifts, from 06:00 to 22:00, and is closed on Sundays. "
    "Returns are accepted within 30 days of delivery if the original packaging is intact; "
    "refunds are issued to the original payment method within 5 business days. In 2023 the "
    "warehouse switched its forklifts to lithium-ion batteries, cutting charging time from "
    "eight hours to ninety minutes. Questions about bulk orders go to the sales desk, which "
    "answers within one business day."
)


class Facts(BaseModel):
    facts: list[str]


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _reference_tok_s(model_name: str, messages: list[dict]) -> float:
    """Completion tokens/s of llama_cpp called directly, schema-constrained like golden."""
    from llama_cpp import Llama

    from builder.llm.llama_server import install_cpu_guard
    from builder.llm.local_models import ensure_model, resolve_local_model

    install_cpu_guard()  # the server's own setting on an AMX CPU, so both are compared alike
    spec = resolve_local_model(model_name)
    llama = Llama(str(ensure_model(spec, progress=lambda m: None)), n_ctx=spec.n_ctx, verbose=False)
    t = time.perf_counter()
    out = llama.create_chat_completion(
        messages=messages, max_tokens=256, temperature=0.2,
        response_format={"type": "json_object", "schema": Facts.model_json_schema()})
    return out["usage"]["completion_tokens"] / (time.perf_counter() - t)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="qwen-0.5b")
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--reference", action="store_true",
                        help="also time llama_cpp in-process on the same request (same run)")
    args = parser.parse_args()

    from builder.llm.local_models import ensure_model, resolve_local_model
    from builder.llm.prompts import parse_prompt
    from builder.llm.settings import LLMSettings
    from builder.llm.setup import open_llm
    from builder.store import Store

    t0 = time.perf_counter()
    ensure_model(resolve_local_model(args.model), progress=lambda m: print(m, file=sys.stderr))
    fetch_s = time.perf_counter() - t0

    prompt = parse_prompt(
        "name: bench_facts\nversion: 1\n--- system\nYou extract atomic facts from a text. Reply "
        "in JSON: {\"facts\": [\"...\"]}, at most five short facts.\n--- user\n"
        "Text (variant {{n}}):\n{{chunk}}\n", "bench.prompt")
    settings = LLMSettings(local_model=args.model, temperature=0.2, max_tokens=256)
    timings = []
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "b.db") as store:
        t0 = time.perf_counter()
        with open_llm(store, settings, job="bench", progress=lambda m: print(m, file=sys.stderr)) as llm:
            start_s = time.perf_counter() - t0
            pid = llm.local_server.pid

            async def one(n: int):
                t = time.perf_counter()
                result = await llm.structured(prompt, {"n": n, "chunk": CHUNK}, Facts)
                timings.append(time.perf_counter() - t)
                return result

            async def job():
                return [await one(n) for n in range(args.calls)]  # sequential: per-call latency

            results = asyncio.run(job())
            summary = llm.summary()
            rss = _peak_rss_mb(pid)
    gen_s = sum(timings)
    ok = sum(r.ok for r in results)
    print(f"model {args.model}: fetch/assemble {fetch_s:.1f} s (0 if cached), "
          f"server start {start_s:.2f} s")
    print(f"{args.calls} structured calls: {ok} ok, {gen_s / args.calls:.2f} s per call "
          f"(min {min(timings):.2f}, max {max(timings):.2f}); statuses {summary['failures'] or 'all ok'}")
    print(f"tokens: {summary['prompt_tokens']} prompt, {summary['completion_tokens']} completion; "
          f"end-to-end {summary['completion_tokens'] / gen_s:.1f} completion tok/s, "
          f"{(summary['prompt_tokens'] + summary['completion_tokens']) / gen_s:.1f} total tok/s")
    print(f"server peak RSS {rss:.0f} MB")
    if args.reference:
        ref = _reference_tok_s(args.model, prompt.render({"n": 0, "chunk": CHUNK}))
        ours = summary["completion_tokens"] / gen_s
        print(f"reference (llama_cpp in-process, same run): {ref:.1f} completion tok/s; "
              f"golden / reference {ours / ref:.2f}")
    sample = next((r.value.facts for r in results if r.ok), None)
    print(f"sample output: {sample}")


if __name__ == "__main__":
    main()
