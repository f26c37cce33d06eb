"""What a verified item costs with the embedded model, and how close the pipeline runs to the
server's raw speed (issue 30).

    python bench/bench_generate.py samples            # the demo's KB
    python bench/bench_generate.py /work/kbs/policy-en --n 20 [--threads 2]
    python bench/bench_generate.py samples --engine xllamacpp   # or llama-server, llama-cpp-python

Runs what a user runs, in a subprocess (`golden ingest KB`, `golden generate --n N`) on a fresh
database with the embedded model, then, in the same run, measures the server's raw speed on a
fixed prompt (prompt tokens/s with no reusable prefix, generated tokens/s under the same JSON
grammar the pipeline uses). Prints, per verified item: calls, prompt and completion tokens,
seconds; seconds to the first verified item; and the efficiency ratio = the run's LLM seconds
over what its tokens would cost at raw speed (1.0 = no overhead at all; prefix reuse can make it
lower). Machine-independent figures first: calls and tokens per verified item.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FIXED_PROMPT = " ".join(["The restocking fee applies to opened items returned after thirty days."]
                        * 30)


def golden(db: Path, *args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "builder.cli", "--db", str(db), *args],
                          cwd=ROOT, capture_output=True, text=True, env=env, check=False)


def raw_speed(threads: int) -> dict:
    """Prompt and generation tokens/s of the embedded server on a fixed prompt (two different
    prompts, so no prefix is reused; the reply constrained to a small JSON object)."""
    from pydantic import BaseModel

    from builder.llm.prompts import parse_prompt
    from builder.llm.settings import LLMSettings
    from builder.llm.setup import open_llm
    from builder.store.db import Store

    class Reply(BaseModel):
        answer: str

    os.environ["GOLDEN_LOCAL_THREADS"] = str(threads)
    out = {}

    async def probe(llm) -> None:
        # both calls in one event loop: the SDK client belongs to the loop it was made in
        for tag, text, max_tokens in (("prompt", FIXED_PROMPT, 8),
                                      ("generate", "Count from one to forty in words.", 200)):
            prompt = parse_prompt(f"name: speed{tag}\nversion: 1\nmax_tokens: {max_tokens}\n"
                                  f"--- user\n{{{{text}}}}\n", "speed.prompt")
            started = time.monotonic()
            res = await llm.structured(prompt, {"text": f"{tag} {text}"}, Reply,
                                       stage=f"speed-{tag}")
            out[tag] = {"seconds": time.monotonic() - started, **(res.usage or {})}

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "speed.db")
        with open_llm(store, LLMSettings(), job="bench") as llm:
            asyncio.run(probe(llm))
        store.close()
    p, g = out["prompt"], out["generate"]
    prompt_tps = p["prompt_tokens"] / max(p["seconds"], 1e-9)
    gen_seconds = max(g["seconds"] - g["prompt_tokens"] / prompt_tps, 1e-9)
    return {"prompt_tokens_per_s": round(prompt_tps, 1),
            "generated_tokens_per_s": round(g["completion_tokens"] / gen_seconds, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kb", help="a folder, or 'samples' for the demo's knowledge base")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--threads", type=int, default=None, help="GOLDEN_LOCAL_THREADS for both")
    ap.add_argument("--engine", choices=("auto", "llama-server", "xllamacpp", "llama-cpp-python"),
                    default="auto", help="the embedded server for both (GOLDEN_LOCAL_ENGINE; "
                    "auto: the first installed, as golden chooses)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    kb = ROOT / "samples" if args.kb == "samples" else Path(args.kb)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GOLDEN_"))}
    # the run and the speed probe use the same threads: chosen once, now, as the run would
    # choose them (after the run the load is high, and the probe would get one core)
    from builder.llm.llama_server import default_threads
    threads = args.threads or default_threads()
    env["GOLDEN_LOCAL_THREADS"] = str(threads)
    # the speed probe runs in this process, so it reads os.environ
    env["GOLDEN_LOCAL_ENGINE"] = os.environ["GOLDEN_LOCAL_ENGINE"] = args.engine
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "g.db"
        ingest = golden(db, "ingest", str(kb), env=env)
        if ingest.returncode:
            sys.exit(ingest.stderr)
        started = time.monotonic()
        run = golden(db, "generate", "--n", str(args.n), env=env)
        wall = time.monotonic() - started
        if run.returncode:
            sys.exit(run.stderr[-2000:])
        first = re.search(r"first verified item after (\d+) s", run.stdout)
        served = re.search(r"starting the local model server \([^,]+, ([^)]+)\)", run.stdout + run.stderr)
        con = sqlite3.connect(db)
        calls, prompt_tokens, completion_tokens = con.execute(
            "SELECT count(*), sum(prompt_tokens), sum(completion_tokens) FROM llm_calls "
            "WHERE status = 'ok'").fetchone()
        verified = con.execute("SELECT count(*) FROM candidates WHERE verdict = 'passed' AND "
                               "duplicate_of IS NULL").fetchone()[0]
        harder = con.execute("SELECT count(*) FROM candidates WHERE verdict = 'passed' AND "
                             "duplicate_of IS NULL AND type != 'single_hop'").fetchone()[0]
        con.close()
        kept = Path(tempfile.gettempdir()) / f"bench-generate-{kb.name}.db"
        subprocess.run(["sqlite3", str(db), f".backup {kept}"], check=False)
    speed = raw_speed(threads)
    raw_seconds = (prompt_tokens / speed["prompt_tokens_per_s"]
                   + completion_tokens / speed["generated_tokens_per_s"])
    v = max(verified, 1)
    fig = {
        "kb": kb.name, "n": args.n, "engine": served.group(1) if served else None,
        "threads": threads, "verified": verified,
        "harder": harder, "calls_per_verified": round(calls / v, 2),
        "prompt_tokens_per_verified": round(prompt_tokens / v),
        "completion_tokens_per_verified": round(completion_tokens / v),
        "seconds": round(wall, 1), "seconds_per_verified": round(wall / v, 1),
        "first_item_seconds": int(first.group(1)) if first else None,
        **speed, "efficiency": round(wall / raw_seconds, 2),
    }
    print(json.dumps(fig, indent=1))
    print(f"the run's database: {kept}")
    if args.json:
        args.json.write_text(json.dumps(fig, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
