"""Benchmark: golden's judge against human hallucination labels.

Two public human-annotated sets, one per run (see bench/JUDGE_DATA.md for sources, commits
and licences; neither is part of this repository, both are read where they lie):

- `--faithbench FaithBench.csv`: FaithBench (Bao et al., NAACL 2025), vectara/FaithBench
  commit cf89797d82812c23b5d5e5c121f1d9b8983bbbce: 800 summaries of 80 passages by 10 LLMs,
  each read by several human annotators. Only unanimous items are sampled: "hallucinated" =
  every annotator marked an Unwanted span (worst and best label Unwanted), "faithful" = no
  annotator marked anything (worst and best label Consistent); the disputed middle is left out.
  The contexts are the passage, the question is the instruction the summaries were written
  for. FaithBench chose passages on which automatic detectors disagree, so it is harder than
  everyday answers.
- `--ragtruth DIR`: RAGTruth (Niu et al., ACL 2024), ParticleMedia/RAGTruth commit
  c103204b9ce28d6bbad859304bf30de72b8ed8fe, `response.jsonl` and `source_info.jsonl`: QA
  responses of the test split (quality "good" or "incorrect_refusal"; truncated ones left
  out), "hallucinated" = at least one human-marked hallucination span. Where those two files
  cannot be had, bench/ragtruth_faithjudge.py rebuilds them for QA from vectara/FaithJudge's
  copy (552 test-split answers to 94 of the 150 test questions; see bench/JUDGE_DATA.md).
  `--split train` reads the train split instead (265 answers in that copy): the development
  set, where false alarms and misses are read and rules tuned; the test split only reports.

- `--begin begin_test_wow.tsv`: BEGIN (Dziri et al., TACL 2022), google/BEGIN-dataset commit
  6e65f0d5a1ed1b9574643a7640ff1678d4e979b5, `wow/begin_test_wow.tsv`: knowledge-grounded
  dialogue responses (Wizard of Wikipedia) read by human annotators; "hallucinated" = "Not
  fully attributable" to the knowledge snippet, "faithful" = "Fully attributable" ("Generic"
  left out). The previous turn is the question, the snippet the one context. Lower-cased text:
  names cannot be told by their capitals there.

Sample: the items sorted by a stable key, then a seeded `random.sample` of `--limit`/2
hallucinated and `--limit`/2 faithful ones (default 40, seed 15): fixed and balanced, so the
same file, size and seed always give the same answers. `IBM/mt-rag-benchmark` is kept for an
independent check and not used here.

Three setups (see bench/JUDGE_DATA.md for the commands):
- `--code-only`: no LLM at all: golden's code signals (`builder.score.signals`): an answer is
  hallucinated when a claim has a value (number, date, unit, quote, name) found in no context;
  a second row adds "most words new": a claim whose content words are at least 30% absent
  from every context (a signal reported here, not used by the judge);
- `--local-model qwen-1.5b`: the embedded model judges what code leaves open (run it under the
  shared model lock: `flock /work/notes/model.lock python bench/bench_judge.py ...`); once
  code finds an unsupported claim the answer is settled and the LLM is not asked about it;
- `--base-url URL --model M`: a stronger judge in the same role.

Printed per metric, judge against reference, over the answers the judge scored:
- hallucination: judge `hallucination_rate` = 1 (a claim unsupported) vs the human label:
  balanced accuracy (the mean of the recall on each label, 0.5 = chance), agreement and
  Cohen's kappa;
- settled by code: the share of claims code decided, and of answers no LLM call was needed
  for;
- refusal: judge's refusal verdict vs the reference "this answer is a refusal" (RAGTruth: its
  annotators flagged it `incorrect_refusal`, or it is the QA prompt's fallback sentence;
  FaithBench: never): agreement, kappa (undefined when the sample holds no refusal), and the
  judge's wrong-refusal rate on the other, substantive answers;
- how many answers the judge could not score, and the calls and time it took.
"""

from __future__ import annotations

import argparse
import csv
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


def load_ragtruth(folder: Path, n: int, seed: int, split: str = "test") -> list[dict]:
    """The fixed, balanced RAGTruth sample (see the module docstring) as plain records."""
    sources = {s["source_id"]: s for s in read_jsonl(folder / "source_info.jsonl")
               if s.get("task_type") == "QA"}
    responses = [r for r in read_jsonl(folder / "response.jsonl")
                 if r.get("source_id") in sources and r.get("split") == split
                 and r.get("quality", "good") in ("good", "incorrect_refusal")]
    responses.sort(key=lambda r: (len(str(r["id"])), str(r["id"])))
    picked = balanced([r for r in responses if r.get("labels")],
                      [r for r in responses if not r.get("labels")], n, seed,
                      "RAGTruth QA responses")
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


FAITHBENCH_QUESTION = ("Provide a concise summary of the following passage, covering the "
                      "core pieces of information described.")


def balanced(bad: list[dict], good: list[dict], n: int, seed: int, what: str) -> list[dict]:
    """`n`/2 of `bad` and the rest of `good`, drawn by one seeded generator (inputs sorted)."""
    half = n // 2
    if len(bad) < half or len(good) < n - half:
        raise SystemExit(f"not enough {what}: {len(bad)} hallucinated and {len(good)} "
                         f"faithful for n={n}")
    rng = random.Random(seed)
    return rng.sample(bad, half) + rng.sample(good, n - half)


def load_faithbench(path: Path, n: int, seed: int) -> list[dict]:
    """The fixed, balanced FaithBench sample (see the module docstring) as plain records."""
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    records = []
    for number, row in enumerate(rows, 1):
        labels = {row["worst-label"], row["best-label"]}
        if labels not in ({"Unwanted"}, {"Consistent"}):
            continue  # annotators disagreed, or only benign / questionable spans
        records.append({
            "id": f"faithbench-{number}", "question": FAITHBENCH_QUESTION,
            "answer": row["summary"].strip(), "contexts": [row["source"].strip()],
            "human_hallucination": labels == {"Unwanted"}, "refusal": False,
            "model": row["LLM"],
        })
    return balanced([r for r in records if r["human_hallucination"]],
                    [r for r in records if not r["human_hallucination"]], n, seed,
                    "unanimously labelled FaithBench summaries")


def load_begin(path: Path, n: int, seed: int) -> list[dict]:
    """The fixed, balanced BEGIN sample (see the module docstring) as plain records."""
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    records = []
    for number, row in enumerate(rows, 1):
        label = row["begin_label"].strip()
        if label not in ("Fully attributable", "Not fully attributable"):
            continue
        records.append({
            "id": f"begin-{number}", "question": row["message"].strip(),
            "answer": row["response"].strip(), "contexts": [row["knowledge"].strip()],
            "human_hallucination": label == "Not fully attributable", "refusal": False,
            "model": row["model_name"],
        })
    return balanced([r for r in records if r["human_hallucination"]],
                    [r for r in records if not r["human_hallucination"]], n, seed,
                    "attributable / not attributable BEGIN responses")


def balanced_accuracy(pairs: list[tuple[bool, bool]]) -> float | None:
    """Mean recall over the two reference labels (0.5 = chance whatever the balance)."""
    pos = [a for a, b in pairs if b]
    neg = [not a for a, b in pairs if not b]
    if not pos or not neg:
        return None
    return (sum(pos) / len(pos) + sum(neg) / len(neg)) / 2


def agreement_row(name: str, pairs: list[tuple[bool, bool]]) -> str:
    """One table row; `pairs` are (judge says yes, reference says yes). The last four columns
    count both yes, judge-only yes, reference-only yes and both no."""
    if not pairs:
        return f"{name:<22}{0:>5}{'–':>11}{'–':>11}{'–':>11}"
    agree = sum(a == b for a, b in pairs) / len(pairs)
    kappa = cohen_kappa(pairs)
    bacc = balanced_accuracy(pairs)
    cells = [sum(p == want for p in pairs)
             for want in ((True, True), (True, False), (False, True), (False, False))]
    return (f"{name:<22}{len(pairs):>5}{agree:>11.2f}"
            f"{('undefined' if kappa is None else f'{kappa:.2f}'):>11}"
            f"{('–' if bacc is None else f'{bacc:.2f}'):>11}"
            + "".join(f"{c:>7}" for c in cells))


HEADER = (f"{'metric':<22}{'n':>5}{'agreement':>11}{'kappa':>11}{'bal. acc.':>11}"
          f"{'both':>7}{'judge':>7}{'human':>7}{'none':>7}")
NEW_WORDS = 0.3  # "most words new" row: share of a claim's content words in no context


def code_only(records: list[dict]) -> None:
    """Setup (a): code signals alone, no LLM."""
    from builder.score.signals import Evidence, check_answer, content_terms

    values, new_words = [], []
    claims = decided = 0
    for r in records:
        checks = check_answer(r["answer"], r["contexts"], question=r["question"])
        evidence = Evidence(r["contexts"])
        flagged = any(c.verdict == "unsupported" for c in checks)
        novel = False
        for c in checks:
            terms = content_terms(c.claim)
            novel |= bool(terms) and len(terms - evidence.all_terms) / len(terms) >= NEW_WORDS
        values.append((flagged, r["human_hallucination"]))
        new_words.append((flagged or novel, r["human_hallucination"]))
        claims += len(checks)
        decided += sum(c.verdict is not None for c in checks)
        r["code"] = [{"claim": c.claim, "verdict": c.verdict, "reason": c.reason}
                     for c in checks]
    print(HEADER)
    print(agreement_row("code: values", values))
    print(agreement_row("code: + new words", new_words))
    print(f"claims settled by code: {decided} of {claims}; no LLM was used")


def main() -> None:
    ap = argparse.ArgumentParser()
    data = ap.add_mutually_exclusive_group(required=True)
    data.add_argument("--faithbench", type=Path,
                      help="FaithBench.csv of vectara/FaithBench (see bench/JUDGE_DATA.md)")
    data.add_argument("--ragtruth", type=Path,
                      help="folder holding RAGTruth's response.jsonl and source_info.jsonl")
    data.add_argument("--begin", type=Path,
                      help="BEGIN's wow/begin_test_wow.tsv (google/BEGIN-dataset)")
    ap.add_argument("--limit", "--n", dest="n", type=int, default=40,
                    help="answers sampled, half of each label [40]")
    ap.add_argument("--split", choices=("test", "train"), default="test",
                    help="RAGTruth split: test (report on it) or train (the dev set: tune on "
                         "it) [test]")
    ap.add_argument("--code-only", action="store_true",
                    help="code signals only: no LLM, no model needed")
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

    if args.faithbench:
        name = "FaithBench (unanimous labels)"
        records = load_faithbench(args.faithbench, args.n, args.seed)
    elif args.begin:
        name = f"BEGIN (Wizard of Wikipedia, {args.begin.name})"
        records = load_begin(args.begin, args.n, args.seed)
    else:
        name = f"RAGTruth QA {args.split} split"
        records = load_ragtruth(args.ragtruth, args.n, args.seed, args.split)
    if args.code_only:
        bad = sum(r["human_hallucination"] for r in records)
        print(f"{name}, {len(records)} answers ({bad} with human-marked hallucinations), "
              f"seed {args.seed}; code signals only")
        code_only(records)
        if args.dump:
            args.dump.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                         for r in records))
        return
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
                llm, items, metrics=("refusal", "faithfulness"), settle_hallucination=True,
                concurrency=settings.concurrency, progress=JudgeProgress(progress_line))
            calls = llm.summary() if callable(getattr(llm, "summary", None)) else {}
    seconds = time.perf_counter() - started

    halluc, refusal, wrong = [], [], []
    unscored = claims = by_code = no_call = 0
    for r in records:
        out = outcomes[r["id"]]
        m = out.metrics
        unscored += bool(out.unscored)
        if "hallucination_rate" in m:
            halluc.append((m["hallucination_rate"] == 1.0, r["human_hallucination"]))
        checked = (out.details.get("faithfulness") or {}).get("claims") or []
        claims += len(checked)
        by_code += sum(c.get("decided_by") == "code" for c in checked)
        no_call += all(c.get("decided_by") == "code" for c in checked)
        if "wrong_refusal_rate" in m:
            said = m["wrong_refusal_rate"] == 1.0
            refusal.append((said, r["refusal"]))
            if not r["refusal"]:
                wrong.append(said)
        r["judge"] = {"metrics": m, "details": out.details, "unscored": out.unscored}

    bad = sum(r["human_hallucination"] for r in records)
    print(f"{name}, {len(records)} answers ({bad} with human-marked "
          f"hallucinations, {sum(r['refusal'] for r in records)} refusals), seed "
          f"{args.seed}; judge model {judge.model}")
    print(HEADER)
    print(agreement_row("hallucination", halluc))
    print(agreement_row("refusal", refusal))
    print(f"claims decided by code: {by_code} of {claims}; answers settled without a claim "
          f"call: {no_call} of {len(records)}")
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
