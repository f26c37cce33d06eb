"""Rebuild RAGTruth's QA files for `bench_judge.py --ragtruth DIR` from copies that are small
enough to be had where RAGTruth's own `dataset/*.jsonl` (tens of MB) are not.

- `--faithjudge ragtruth_qa.jsonl`: vectara/FaithJudge's `eval_data/ragtruth_qa.jsonl`, one line
  per RAGTruth QA source: `source_id`, `source` (`question`, `passages`) and `responses`
  (`response`, `model`, `labels`: RAGTruth's human-marked hallucination spans, unchanged).
  It holds no split and no `quality` flag.
- `--test-split FILE`: a list (JSON array or JSONL) of RAGTruth response records that carry
  `source_id` and `split`, e.g. ReDeEP's `log/test_llama2_7B/llama2_7B_response_chunk.json`
  (RAGTruth's whole test split for one model: 450 sources, 150 per task). A source listed there
  as `test` is written as test; every other source as train. RAGTruth splits by source: all six
  answers to a source share it.

Writes `response.jsonl` and `source_info.jsonl` in RAGTruth's layout into `--out` (response
ids are `<source_id>-<model>`; no `quality` field, so the loader reads them as "good").
Either both files are written whole or none is. See bench/JUDGE_DATA.md for the commits.

    python bench/ragtruth_faithjudge.py --faithjudge ragtruth_qa.jsonl \
        --test-split llama2_7B_response_chunk.json --out /work/data/ragtruth
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path


class BadInput(Exception):
    """A line the conversion cannot use; the message names the file and line."""


def read_records(path: Path) -> list[tuple[int, dict]]:
    """(line number, record) for a JSONL file, or for a JSON array (line 1 for all)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot read: {exc}") from None
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BadInput(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None
        return [(1, r) for r in rows]
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append((n, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise BadInput(f"{path}:{n}: not JSON: {exc.msg}") from None
    return out


def sources_in_test(path: Path) -> set[str]:
    """The source ids `path` lists in RAGTruth's test split."""
    found = set()
    for n, r in read_records(path):
        if not isinstance(r, dict) or "source_id" not in r or "split" not in r:
            raise BadInput(f"{path}:{n}: a record without source_id and split")
        if r["split"] == "test":
            found.add(str(r["source_id"]))
    return found


def convert(faithjudge: Path, tests: set[str]) -> tuple[list[dict], list[dict]]:
    """(sources, responses) in RAGTruth's layout, in the order of `faithjudge`."""
    sources, responses = [], []
    for n, row in read_records(faithjudge):
        try:
            sid = str(row["source_id"])
            info = {"question": row["source"]["question"], "passages": row["source"]["passages"]}
            answers = [(a["model"], a["response"], a["labels"]) for a in row["responses"]]
        except (KeyError, TypeError):
            raise BadInput(f"{faithjudge}:{n}: not a FaithJudge RAGTruth QA line (source_id, "
                           "source.question, source.passages, responses[model, response, "
                           "labels])") from None
        split = "test" if sid in tests else "train"
        sources.append({"source_id": sid, "task_type": "QA", "source_info": info})
        responses += [{"id": f"{sid}-{model}", "source_id": sid, "model": model,
                       "labels": labels, "split": split, "response": text}
                      for model, text, labels in answers]
    return sources, responses


def write_all(out: Path, files: dict[str, list[dict]]) -> None:
    """Write every file to a temporary name first, then rename: none half-written."""
    out.mkdir(parents=True, exist_ok=True)
    staged = []
    try:
        for name, rows in files.items():
            fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.")
            staged.append((tmp, out / name))
            os.chmod(tmp, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        for tmp, final in staged:
            os.replace(tmp, final)
    finally:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--faithjudge", type=Path, required=True,
                    help="FaithJudge's eval_data/ragtruth_qa.jsonl")
    ap.add_argument("--test-split", type=Path, required=True,
                    help="RAGTruth response records with source_id and split")
    ap.add_argument("--out", type=Path, required=True, help="folder for the two files")
    args = ap.parse_args(argv)
    try:
        tests = sources_in_test(args.test_split)
        sources, responses = convert(args.faithjudge, tests)
    except BadInput as exc:
        print(exc, file=sys.stderr)
        return 2
    write_all(args.out, {"source_info.jsonl": sources, "response.jsonl": responses})
    in_test = [r for r in responses if r["split"] == "test"]
    print(f"{len(sources)} QA sources, {len(responses)} responses; test split: "
          f"{len({r['source_id'] for r in in_test})} sources, {len(in_test)} responses "
          f"({sum(bool(r['labels']) for r in in_test)} with human-marked hallucinations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
