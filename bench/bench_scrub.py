"""Benchmark: what `golden logs import` scrubs, on a labelled set of our own
(`bench/scrub_labels/`, written by `make_labels.py` there): recall per kind on the positives
and the false-positive rate on hard negatives (order numbers, versions, UUIDs, timestamps,
prices, ISBNs, tracking numbers, long integers, hex hashes, code), plus the throughput of
`Scrubber.text` on the whole set.

A positive counts as found when its value is gone from the scrubbed text and the kind's
placeholder is there (a phone scrubbed as a card is a miss for phones). A negative is a false
positive when the scrubber changes its text at all.

    python bench/bench_scrub.py [--show-misses]

Targets (issue 32): recall >= 0.95 on every kind, false positives <= 2% of negatives.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from builder.logs.personal_data import PLACEHOLDERS as PERSONAL  # noqa: E402
from builder.logs.scrub import Scrubber  # noqa: E402
from builder.logs.secrets import PLACEHOLDERS as SECRETS  # noqa: E402

LABELS = Path(__file__).parent / "scrub_labels"
PLACEHOLDERS = {**PERSONAL, **SECRETS}


def read(name: str) -> list[dict]:
    with open(LABELS / name, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    positives, negatives = read("positives.jsonl"), read("negatives.jsonl")

    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    misses = []
    started = time.perf_counter()
    for row in positives:
        out = Scrubber().text(row["text"])
        total[row["kind"]] += 1
        if row["value"] not in out and PLACEHOLDERS[row["kind"]] in out:
            found[row["kind"]] += 1
        else:
            misses.append((row["kind"], row["form"], row["text"], out))
    fp_by: dict[str, list] = defaultdict(list)
    neg_by: Counter[str] = Counter()
    for row in negatives:
        out = Scrubber().text(row["text"])
        neg_by[row["category"]] += 1
        if out != row["text"]:
            fp_by[row["category"]].append((row["text"], out))
    elapsed = time.perf_counter() - started

    print(f"labelled set: {len(positives)} positives, {len(negatives)} hard negatives")
    print(f"{'kind':<16} {'found':>6} {'of':>4} {'recall':>7}")
    for kind in sorted(total):
        print(f"{kind:<16} {found[kind]:>6} {total[kind]:>4} {found[kind] / total[kind]:>7.3f}")
    print(f"{'all':<16} {sum(found.values()):>6} {len(positives):>4} "
          f"{sum(found.values()) / len(positives):>7.3f}")
    fps = sum(len(v) for v in fp_by.values())
    print(f"\nfalse positives: {fps} of {len(negatives)} negatives ({fps / len(negatives):.1%})")
    for category in sorted(neg_by):
        print(f"  {category:<18} {len(fp_by[category]):>3} of {neg_by[category]}")
    n = len(positives) + len(negatives)
    print(f"\nthroughput: {n / elapsed:,.0f} texts/s ({elapsed * 1e6 / n:.0f} us a text, "
          "a fresh Scrubber each)")
    if args.show_misses:
        for kind, form, text, out in misses:
            print(f"MISS {kind} {form}: {text!r} -> {out!r}")
        for category, rows in fp_by.items():
            for text, out in rows:
                print(f"FP {category}: {text!r} -> {out!r}")


if __name__ == "__main__":
    main()
