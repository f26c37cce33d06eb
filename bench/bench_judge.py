"""Benchmark: golden's judge against human labels on RAGTruth (QA task, test split).

Source: RAGTruth, https://github.com/ParticleMedia/RAGTruth (MIT), commit
c103204b9ce28d6bbad859304bf30de72b8ed8fe, files `dataset/response.jsonl` (responses of six LLMs
with human-annotated hallucination spans) and `dataset/source_info.jsonl` (the question and
the passages each response was written from). See bench/RAGTRUTH.md; the files are not in
this repository. `IBM/mt-rag-benchmark` is kept for an independent check and not used here.

Sample: QA responses of the test split (quality "good" or "incorrect_refusal"; truncated ones
left out), sorted by id, then a seeded
`random.sample` of `--n`/2 responses with at least one human-marked hallucination span and
`--n`/2 without (default 40, seed 15): fixed and balanced, so the same files, n and seed
always give the same answers.

Each answer is judged by golden's own judge (`builder.score.judge`, aspects refusal and
faithfulness only) through golden's LLM client: the embedded model unless `--base-url` and
`--model` name another (run it under the shared model lock: `flock /work/notes/model.lock
python bench/bench_judge.py ...`). The passages are the contexts; the question is RAGTruth's.

Printed per metric, judge against reference, over the answers the judge scored:
- hallucination: judge `hallucination_rate` = 1 (faithfulness <= 2 of 5) vs humans' "has a
  hallucination span": agreement and Cohen's kappa;
- unsupported claim: judge found any claim unsupported (supported share < 1) vs the same
  human label;
- refusal: judge's refusal verdict vs the reference "this answer is a refusal": RAGTruth's
  annotators flagged it `incorrect_refusal`, or it is the QA prompt's fallback sentence
  ("Unable to answer based on given passages."): agreement, kappa (undefined when the sample
  holds no refusal), and the judge's wrong-refusal rate on the other, substantive answers;
- how many answers the judge could not score, and the calls and time it took.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from builder.review.agreement import cohen_kappa  # noqa: E402
from builder.score.judge import JudgeInput, JudgeProgress, judge_records  # noqa: E402

FALLBACK = re.compile(r"unable to answer based on (the )?given passages", re.IGNORECASE)
PASSAGE = re.compile(r"(?:^|\n)\s*passage \d+:\s*", re.IGNORECASE)


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_sample(folder: Path, n: int, seed: int, split: str = "test") -> list[dict]:
    """The fixed, balanced sample (see the module docstring) as plain records."""
    sources = {s["source_id"]: s for s in read_jsonl(folder / "source_info.jsonl")
               if s.get("task_type") == "QA"}
    responses = [r for r in read_jsonl(folder / "response.jsonl")
                 if r.get("source_id") in sources and r.get("split") == split
                 and r.get("quality", "good") in ("good", "incorrect_refusal")]
    responses.sort(key=lambda r: (len(str(r["id"])), str(r["id"])))
    rng = random.Random(seed)
    bad = [r for r in responses if r.get("labels")]
    good = [r for r in responses if not r.get("labels")]
    half = n // 2
    if len(bad) < half or len(good) < n - half:
        raise SystemExit(f"not enough QA responses: {len(bad)} with and {len(good)} without "
                         f"hallucination spans for n={n}")
    picked = rng.sample(bad, half) + rng.sample(good, n - half)
    records = []
    for r in picked:
        info = sources[r["source_id"]]["source_info"]
        passages = [p.strip() for p in PASSAGE.split(info.get("passages", "")) if p.strip()]
        records.append({
            "id": str(r["id"]), "question": info.get("question", ""), "answer": r["response"],
            "contexts": passages, "human_hallucination": bool(r.get("labels")),
            "refusal": (r.get("quality") == "incorrect_refusal"
                        or bool(FALLBACK.search(r["response"]))), "model": r.get("model"),
        })
    return records


def agreement_row(name: str, pairs: list[tuple[bool, bool]]) -> str:
    if not pairs:
        return f"{name:<22}{0:>5}{'–':>11}{'–':>9}"
    agree = sum(a == b for a, b in pairs) / len(pairs)
    kappa = cohen_kappa(pairs)
    return (f"{name:<22}{len(pairs):>5}{agree:>11.2f}"
            f"{('undefined' if kappa is None else f'{kappa:.2f}'):>11}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ragtruth", type=Path, required=True,
                    help="folder holding RAGTruth's response.jsonl and source_info.jsonl")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--base-url", default=None)
    ap.add_argument("--model", default=None)
    ap.add_argument("--api-key", default=None)
    ap.add_argument("--local-model", default=None)
    ap.add_argument("--concurrency", type=int, default=None)
    ap.add_argument("--dump", type=Path, default=None, help="write per-answer results as JSONL")
    args = ap.parse_args()

    import os

    from builder.config import load_config
    from builder.llm.settings import resolve_settings
    from builder.llm.setup import open_llm, progress_line
    from builder.store import Store

    records = load_sample(args.ragtruth, args.n, args.seed)
    settings = resolve_settings(
        {"base_url": args.base_url, "model": args.model, "api_key": args.api_key,
         "local_model": args.local_model, "concurrency": args.concurrency},
        os.environ, load_config(None))
    items = [JudgeInput(query_id=r["id"], question=r["question"], reference="",
                        answer=r["answer"], contexts=r["contexts"], answerable=True)
             for r in records]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.db") as store:
        with open_llm(store, settings, job="bench-judge") as llm:
            outcomes, judge = judge_records(
                llm, items, metrics=("refusal", "faithfulness"),
                concurrency=settings.concurrency, progress=JudgeProgress(progress_line))
            calls = llm.summary() if callable(getattr(llm, "summary", None)) else {}
    seconds = time.perf_counter() - started

    halluc, unsupported, refusal, wrong = [], [], [], []
    unscored = 0
    for r in records:
        out = outcomes[r["id"]]
        m = out.metrics
        unscored += bool(out.unscored)
        if "hallucination_rate" in m:
            halluc.append((m["hallucination_rate"] == 1.0, r["human_hallucination"]))
            unsupported.append((m["faithfulness_supported"] < 1.0, r["human_hallucination"]))
        if "wrong_refusal_rate" in m:
            said = m["wrong_refusal_rate"] == 1.0
            refusal.append((said, r["refusal"]))
            if not r["refusal"]:
                wrong.append(said)
        r["judge"] = {"metrics": m, "details": out.details, "unscored": out.unscored}

    bad = sum(r["human_hallucination"] for r in records)
    print(f"RAGTruth QA test split, {len(records)} answers ({bad} with human-marked "
          f"hallucinations, {sum(r['refusal'] for r in records)} refusals), seed "
          f"{args.seed}; judge model {judge.model}")
    print(f"{'metric':<22}{'n':>5}{'agreement':>11}{'kappa':>11}")
    print(agreement_row("hallucination", halluc))
    print(agreement_row("unsupported claim", unsupported))
    print(agreement_row("refusal", refusal))
    if wrong:
        print(f"wrong refusals on substantive answers: {sum(wrong)} of {len(wrong)} "
              f"({sum(wrong) / len(wrong):.0%})")
    print(f"answers with an aspect the judge could not score: {unscored} of {len(records)}")
    print(f"{calls.get('calls', '?')} LLM calls, {seconds:.0f} s "
          f"({seconds / max(1, len(records)):.1f} s per answer); a shared machine")
    if args.dump:
        args.dump.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


if __name__ == "__main__":
    main()
