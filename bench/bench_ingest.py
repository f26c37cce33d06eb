"""Ingest throughput against raw tiktoken, and the cost of re-ingesting an unchanged corpus.

Generates ~50 MB of Markdown (headings, paragraphs, lists, code fences, tables; fixed seed)
in a temporary folder, then in the same process, `--runs` times (default 2):
  1. raw: one `encode_ordinary` call per file (read included) -- the reference; measured
     before AND after the ingest, and averaged, so a load change on a shared machine during
     the run does not favour either side;
  2. `ingest_paths` into a fresh database (read, chunk, count, write, FTS index);
  3. `ingest_paths` again on the unchanged corpus.
Prints MB/s, the ratio ingest/raw throughput in wall clock and in CPU time (a busy shared
machine distorts wall time; CPU time is steadier; it includes the chunking worker processes
of a parallel ingest), target >= 0.5; re-ingest as % of the first
(target <= 10 %) and peak RSS. Run by hand:  python bench/bench_ingest.py [--mb 50] [--runs 2]
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
import time
from pathlib import Path

from builder.ingest.pipeline import ingest_paths
from builder.ingest.tokens import encoding
from builder.store import Store

FILE_BYTES = 100_000


def _vocabulary() -> list[str]:
    """English words with their natural frequencies: the running text of Python's own
    reference topics (shipped with the stdlib, so the corpus is the same everywhere)."""
    import re

    from pydoc_data.topics import topics

    return [w.lower() for w in re.findall(r"[A-Za-z]+", " ".join(topics.values()))]


def _sentence(rng: random.Random, words: list[str]) -> str:
    picked = rng.choices(words, k=rng.randint(6, 24))
    picked[0] = picked[0].capitalize()
    if rng.random() < 0.3:
        picked.insert(rng.randint(1, len(picked) - 1), str(rng.randint(1, 2025)))
    if rng.random() < 0.3:
        k = rng.randint(1, len(picked) - 1)
        picked[k] += ","
    return " ".join(picked) + rng.choice(".....?!")


def _document(rng: random.Random, words: list[str]) -> str:
    out: list[str] = [f"# {_sentence(rng, words)[:-1]}"]
    size = 0
    while size < FILE_BYTES:
        r = rng.random()
        if r < 0.10:
            block = "#" * rng.randint(2, 3) + " " + " ".join(rng.choices(words, k=4)).title()
        elif r < 0.16:
            lines = [f"    {rng.choice(words)}({rng.choice(words)}, {rng.randint(0, 99)})"
                     for _ in range(rng.randint(3, 25))]
            block = "```python\n" + "\n".join(lines) + "\n```"
        elif r < 0.21:
            rows = [f"| {rng.choice(words)} | {rng.randint(1, 999)} | {_sentence(rng, words)} |"
                    for _ in range(rng.randint(2, 15))]
            block = "| name | value | note |\n|---|---:|---|\n" + "\n".join(rows)
        elif r < 0.30:
            block = "\n".join(f"- {_sentence(rng, words)}" for _ in range(rng.randint(2, 8)))
        else:
            block = " ".join(_sentence(rng, words) for _ in range(rng.randint(1, 8)))
        out.append(block)
        size += len(block) + 2
    return "\n\n".join(out) + "\n"


def generate(folder: Path, megabytes: float, seed: int = 7) -> int:
    rng = random.Random(seed)
    words = _vocabulary()
    written = 0
    n = 0
    while written < megabytes * 1e6:
        sub = folder / f"part{n // 100:02d}"
        sub.mkdir(exist_ok=True)
        data = _document(rng, words).encode("utf-8")
        (sub / f"doc{n:04d}.md").write_bytes(data)
        written += len(data)
        n += 1
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--serial", action="store_true",
                        help="also time a serial ingest (no chunking workers) in each run")
    args = parser.parse_args()
    enc = encoding()  # load the BPE once, outside every timing
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp, "kb")
        corpus.mkdir()
        size = generate(corpus, args.mb)
        mb = size / 1e6
        files = sorted(corpus.rglob("*.md"))
        print(f"corpus: {len(files)} files, {mb:.1f} MB")

        def raw_pass() -> tuple[float, float, int]:
            t0, c0 = time.perf_counter(), time.process_time()
            n = sum(len(enc.encode_ordinary(f.read_text("utf-8"))) for f in files)
            return time.perf_counter() - t0, time.process_time() - c0, n

        def cpu() -> float:
            """CPU time of this process and of its finished children (chunking workers)."""
            kids = resource.getrusage(resource.RUSAGE_CHILDREN)
            return time.process_time() + kids.ru_utime + kids.ru_stime

        for run in range(1, args.runs + 1):
            raw1, raw1_cpu, tokens = raw_pass()
            store = Store(Path(tmp, f"bench{run}.db"))
            t0, c0 = time.perf_counter(), cpu()
            first = ingest_paths(store, [str(corpus)])
            ingest, ingest_cpu = time.perf_counter() - t0, cpu() - c0
            raw2, raw2_cpu, _ = raw_pass()
            raw, raw_cpu = (raw1 + raw2) / 2, (raw1_cpu + raw2_cpu) / 2
            print(f"run {run}: raw tiktoken encode_ordinary: {raw:.2f} s ({raw_cpu:.2f} s CPU; "
                  f"before/after {raw1:.2f}/{raw2:.2f} s), {mb / raw:.2f} MB/s, {tokens} tokens")
            print(f"run {run}: ingest: {ingest:.2f} s ({ingest_cpu:.2f} s CPU, workers "
                  f"included), "
                  f"{mb / ingest:.2f} MB/s, {first.documents_added} documents, "
                  f"{first.chunks_added} chunks")
            print(f"run {run}: ratio ingest/raw throughput: {raw / ingest:.2f}x wall "
                  f"(target >= 0.5x); {raw_cpu / ingest_cpu:.2f}x in CPU time")

            if args.serial:
                serial_store = Store(Path(tmp, f"serial{run}.db"))
                t0 = time.perf_counter()
                ingest_paths(serial_store, [str(corpus)], parallel_min_chars=None)
                serial = time.perf_counter() - t0
                serial_store.close()
                print(f"run {run}: serial ingest (reference): {serial:.2f} s, "
                      f"{raw / serial:.2f}x raw; parallel/serial speed-up {serial / ingest:.2f}x")

            t0 = time.perf_counter()
            again = ingest_paths(store, [str(corpus)])
            reingest = time.perf_counter() - t0
            assert again.documents_unchanged == len(files) and again.chunks_added == 0
            print(f"run {run}: re-ingest unchanged: {reingest:.2f} s = "
                  f"{100 * reingest / ingest:.1f}% of the first ingest (target <= 10%)")
            store.close()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"peak RSS: {peak:.0f} MB" + (f" (largest worker process: {kids:.0f} MB)"
                                            if kids else ""))


if __name__ == "__main__":
    main()
