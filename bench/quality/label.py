"""Record our reading of a quality run's unread verified items.

    python bench/quality/label.py KB DB "1 ok; 2 mismatch: asks the budget, answers when; 3 sentence_copy"

Items are numbered in the order `bench_quality.py --unread` lists them (unlabelled verified
candidates, as stored). Each `N CLASS[: note]` appends one label line to
bench/quality/labels/KB.jsonl; `ok` means correct and well formed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import bench_quality as bq  # noqa: E402


def main() -> None:
    kb, db, spec = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    path = bq.QUALITY / "labels" / f"{kb}.jsonl"
    labels = bq.load_labels(path)
    run = bq.read_run(db, None)
    unread = [c for c in run["candidates"] if not c.get("duplicate_of") and c["verdict"] == "passed"
              and bq.key(c["question"], c["answer"]) not in labels]
    rows = []
    for part in [p.strip() for p in spec.split(";") if p.strip()]:
        head, _, note = part.partition(":")
        num, cls = head.split()
        if cls not in bq.CLASSES:
            sys.exit(f"unknown class {cls!r}; known: {', '.join(bq.CLASSES)}")
        c = unread[int(num) - 1]
        rows.append({"question": c["question"], "answer": c["answer"], "type": c["type"],
                     "correct": cls == "ok", "class": cls, "note": note.strip()})
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} labels added to {path}")


if __name__ == "__main__":
    main()
