"""Chunking one long line with no sentence breaks: time against line length (issue 14, fault 5).

A line of 4, 8 and 16 MB (letters, digits, "+" and "/", as in base64 or minified data; and
CJK text without punctuation) is cut into 400-token chunks, each in a fresh process. Linear
time means each doubling doubles the time: prints seconds and the ratio to the 4 MB line of
the same run, in wall and CPU time (CPU time is steadier on a shared machine; reference: 2.0
and 4.0; before the fix, 4/8/16 MB took 7/16/46 s and 50 MB did not finish). Run by hand:  python bench/bench_long_line.py [--sizes 4,8,16]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALPHABETS = {"base64-like": "abcdefghijklmnopqrstuvwxyz0123456789+/",
             "cjk": "北京东京上海大阪"}


def one(kind: str, megabytes: float) -> dict:
    sys.path.insert(0, str(ROOT))
    from builder.ingest.blocks import markdown_blocks
    from builder.ingest.chunker import chunk_blocks
    from builder.ingest.tokens import encoding

    alphabet = ALPHABETS[kind]
    rng = random.Random(1)
    n = int(megabytes * 1_000_000 / len(alphabet[0].encode("utf-8")))
    text = "".join(rng.choice(alphabet) for _ in range(n))
    encoding()
    t0, c0 = time.perf_counter(), time.process_time()
    result = chunk_blocks(text, markdown_blocks(text), chunk_tokens=400, overlap=50)
    return {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
            "chunks": len(result.chunks)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4,8,16")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], float(args.one[1]))))
        return
    sizes = [float(s) for s in args.sizes.split(",")]
    print("one line, no sentence breaks, 400-token chunks; ratio to the smallest size, same run "
          "(linear: equal to the size ratio)")
    for kind in ALPHABETS:
        base = None
        for mb in sizes:
            out = subprocess.run([sys.executable, __file__, "--one", kind, str(mb)], check=True,
                                 capture_output=True, text=True)
            r = json.loads(out.stdout)
            base = base or r
            print(f"{kind:<12} {mb:>5.0f} MB {r['chunks']:>7} chunks {r['seconds']:>7.2f} s "
                  f"x{r['seconds'] / base['seconds']:.2f}, CPU {r['cpu']:>6.2f} s "
                  f"x{r['cpu'] / base['cpu']:.2f} (size x{mb / sizes[0]:.0f})")


if __name__ == "__main__":
    main()
