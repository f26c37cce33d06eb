"""Quality of generated candidates on public knowledge bases nobody on the team wrote.

    python bench/quality/extract_kbs.py --out ~/golden-kbs      # once: KBs out of fetched repos
    python bench/bench_quality.py handbook [--n 20] [--local-model qwen-0.5b]
    python bench/bench_quality.py handbook --unread             # print unlabelled items to read

Runs what a new user runs, as subprocesses (`golden ingest KB`, `golden generate --n N`) on a
fresh database, times the generation (process wall), and prints:

- generated, verified (passed, not a duplicate), yield = verified / generated, and why the
  others were dropped (top rejection reasons, the run's notes);
- **precision = correct and well-formed / verified**, from labels: our own reading of every
  verified item, kept in `bench/quality/labels/<kb>.jsonl` as
  `{"question", "answer", "type", "correct", "class", "note"}` keyed by the candidate's text,
  so a regression on an item already read shows at once; items not read yet are counted,
  bounded (precision between "all wrong" and "all right") and listed by `--unread`;
- LLM calls and seconds per correct item, the failure classes of the incorrect items, and
  the type and difficulty mix of what was verified.

`--reuse` keeps the database of the last run of this KB and model and only re-runs
generation on it after clearing everything generated (the LLM cache stays): quick to
iterate on code checks, but its seconds and calls are not a fresh run's (it says so).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUALITY = ROOT / "bench" / "quality"
sys.path.insert(0, str(ROOT))

# Why an incorrect item is incorrect (the failure classes of issue 12, plus the rest).
CLASSES = {
    "ok": "correct and well formed",
    "tautology": "the answer adds nothing the question does not say",
    "sentence_copy": "a vague question answered by restating the evidence sentence",
    "heading_subject": "a heading or rubric dimension as subject; the question cannot tell which level/section",
    "mismatch": "the answer fits the evidence but not the question",
    "wrong": "the answer is wrong or contradicts its evidence",
    "not_unique": "several places in the KB answer it differently; the question does not pin its subject down",
    "bad_hard_type": "a multi-hop/reasoning/comparative/ambiguous/temporal item that is not what its type says",
    "stale": "a superseded fact asked as current",
    "example_copy": "the prompt's own example copied",
    "off_domain": "an unanswerable question a user of this KB would not ask",
    "answerable": "an 'unanswerable' item the KB does answer",
    "unclear": "the question is ungrammatical, vague or not standalone",
    "language": "question or answer in the wrong language",
}


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """The Wilson score interval (95%) of a proportion k/n. A run verifies 15-25 items, so
    one run's precision is known to about +-0.2: the same code on two machines of one kind
    read 17 of 25 and 10 of 25 right on the development handbook (2026-12-06), and targets
    and comparisons must be read against this interval, not the point figure."""
    if n <= 0:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return round(max(0.0, centre - half), 3), round(min(1.0, centre + half), 3)


def kb_dir(name: str, root: Path) -> Path:
    if Path(name).is_dir():
        return Path(name)
    path = root / name
    if not path.is_dir():
        sys.exit(f"bench_quality: no KB at {path}; run bench/quality/extract_kbs.py --out {root}")
    return path


def key(question: str, answer: str) -> str:
    norm = lambda s: " ".join(re.sub(r"[^\w\s]", " ", s.casefold()).split())  # noqa: E731
    return norm(question) + " || " + norm(answer)


def load_labels(path: Path) -> dict[str, dict]:
    labels: dict[str, dict] = {}
    if path.exists():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                row = json.loads(line)
                if row.get("class") not in CLASSES:
                    sys.exit(f"{path}:{n}: unknown class {row.get('class')!r}")
                labels[key(row["question"], row["answer"])] = row
    return labels


def golden(db: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "builder.cli", "--db", str(db), *args]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"bench_quality: {' '.join(args[:2])} failed ({proc.returncode}):\n"
                 f"{proc.stderr[-2000:]}")
    return proc


def reset_generated(db: Path) -> None:
    """Everything generation wrote goes; documents, chunks and the LLM cache stay."""
    con = sqlite3.connect(db)
    with con:
        for table in ("review_log", "candidate_tags", "candidates", "facts", "stage_done"):
            con.execute(f"DELETE FROM {table}")
    con.close()


def read_run(db: Path, since: str | None) -> dict:
    from builder.store import candidates as cstore
    from builder.store.db import Store
    from builder.store.documents import list_chunks
    from builder.generate.questions import STAGE_QUESTION

    with Store(db) as store:
        cands = cstore.load_candidates(store)
        calls = store.query("SELECT stage, status, prompt_tokens, completion_tokens FROM llm_calls" +
                            (" WHERE created_at >= ?" if since else ""), [since] if since else [])
        chunks = {c["id"]: c for c in list_chunks(store)}
        asked = cstore.done_infos(store, STAGE_QUESTION)
    return {"candidates": cands, "calls": calls, "chunks": chunks, "asked": asked}


def by_span_kind(run: dict, verified: list[dict], correct: list[dict]) -> dict[str, str]:
    """Single-hop questions by the kind of answer span they were asked for (a name, an amount, a
    duration...): "asked/verified/correct". Where a knowledge base spends its calls: on some,
    most name spans fail and most values pass (bench/RESULTS.md, 2026-12-06)."""
    from builder.generate.runner import section_title
    from builder.generate.spans import spans_of_chunk

    kinds = {s.id: s.kind for c in run["chunks"].values()
             for s in spans_of_chunk(c, section_title(c) or "")}
    ok, good = {c["id"] for c in verified}, {c["id"] for c in correct}
    tally: dict[str, list[int]] = {}
    for info in run["asked"]:
        kind = kinds.get(info.get("span"))
        if kind is None:
            continue
        t = tally.setdefault(kind, [0, 0, 0])
        t[0] += 1
        t[1] += info.get("candidate_id") in ok
        t[2] += info.get("candidate_id") in good
    return {k: "/".join(map(str, t)) for k, t in sorted(tally.items(), key=lambda kv: -kv[1][0])}


def kind_of(cand: dict) -> str:
    """The item's type, and for a reasoning item how code built it: a threshold of a limit
    ("reasoning/limit": within the limit?; "reasoning/value" for the exact-value thresholds of
    the 2026-12-05 test run, `threshold_value.md`, since removed) or a difference of two values
    ("reasoning"). Thresholds are one part's question and a sentence: a reader of the figures
    should see how many of the harder items they are."""
    names = cand.get("prompts") or {}
    if "threshold_value.md" in names:
        return f"{cand['type']}/value"
    if any(n in names for n in ("threshold_ceiling.md", "threshold_floor.md")):
        return f"{cand['type']}/limit"
    return cand["type"]


def evidence_of(cand: dict, chunks: dict) -> list[str]:
    out = []
    for e in cand.get("evidence") or []:
        out.append(f"[{e['chunk_id']}] {e['quote']}")
    if not out:
        for cid in cand.get("chunk_ids") or []:
            out.append(f"[{cid}] {chunks.get(cid, {}).get('text', '')[:600]}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kb", help="a KB name from bench/quality/kbs.toml, or a folder")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--local-model", default=None, help="qwen-0.5b, qwen-1.5b, or a .gguf path")
    ap.add_argument("--generate-args", default="", help="extra `golden generate` options")
    ap.add_argument("--kbs", type=Path, default=Path(os.environ.get("GOLDEN_KBS",
                                                                   Path.home() / "golden-kbs")))
    ap.add_argument("--db", type=Path, default=None)
    ap.add_argument("--labels", type=Path, default=None)
    ap.add_argument("--reuse", action="store_true", help="keep the LLM cache of the last run")
    ap.add_argument("--report-only", action="store_true", help="read the last run's database")
    ap.add_argument("--unread", action="store_true", help="print the unlabelled verified items")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args()

    name = Path(args.kb).name
    kb = kb_dir(args.kb, args.kbs)
    model = args.local_model or "default"
    db = args.db or Path("/tmp/golden-quality") / f"{name}-{Path(model).stem}.db"
    labels_path = args.labels or QUALITY / "labels" / f"{name}.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GOLDEN_"))}
    if args.local_model:
        env["GOLDEN_LOCAL_MODEL"] = args.local_model

    seconds, since = None, None
    if not args.report_only:
        db.parent.mkdir(parents=True, exist_ok=True)
        if args.reuse and db.exists():
            reset_generated(db)
        else:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
        golden(db, "ingest", str(kb), env=env)
        since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        started = time.monotonic()
        proc = golden(db, "generate", "--n", str(args.n), *args.generate_args.split(), env=env)
        seconds = time.monotonic() - started
        print(proc.stdout)

    run = read_run(db, since)
    cands = run["candidates"]
    generated = [c for c in cands if not c.get("duplicate_of")]
    verified = [c for c in generated if c["verdict"] == "passed"]
    rejected = [c for c in generated if c["verdict"] == "failed"]
    labels = load_labels(labels_path)
    read = [(c, labels.get(key(c["question"], c["answer"]))) for c in verified]
    correct = [c for c, lab in read if lab and lab["correct"]]
    unread = [c for c, lab in read if lab is None]
    classes = Counter(lab["class"] for _, lab in read if lab and not lab["correct"])
    reasons = Counter(r.split(":")[0] for c in rejected for r in c.get("rejection_reasons") or [])

    n_v = len(verified)
    fig = {
        "kb": name, "model": model, "n": args.n, "generated": len(generated),
        "verified": n_v, "rejected": len(rejected),
        "yield": round(n_v / len(generated), 3) if generated else None,
        "read": n_v - len(unread), "correct": len(correct), "unread": len(unread),
        "precision": round(len(correct) / n_v, 3) if n_v and not unread else None,
        "precision_interval": wilson(len(correct), n_v) if n_v and not unread else None,
        "precision_bounds": [round(len(correct) / n_v, 3) if n_v else None,
                             round((len(correct) + len(unread)) / n_v, 3) if n_v else None],
        "calls": len(run["calls"]), "seconds": round(seconds, 1) if seconds else None,
        "fresh": not args.reuse and not args.report_only,
        "failure_classes": dict(classes.most_common()),
        "rejection_reasons": dict(reasons.most_common(8)),
        "verified_types": dict(Counter(c["type"] for c in verified)),
        "correct_types": dict(Counter(c["type"] for c in correct)),
        "verified_difficulty": dict(Counter(c.get("difficulty") for c in verified)),
        "harder_share": round(sum(c["type"] != "single_hop" for c in verified) / n_v, 3)
        if n_v else None,
        "precision_by_type": {t: f"{sum(1 for c in correct if c['type'] == t)}/{k}"
                              for t, k in Counter(c["type"] for c, lab in read if lab).items()},
        "precision_by_kind": {t: f"{sum(1 for c in correct if kind_of(c) == t)}/{k}"
                              for t, k in Counter(kind_of(c) for c, lab in read if lab).items()
                              if t != "single_hop"},
        "by_span_kind": by_span_kind(run, verified, correct),
        "prompt_tokens": sum(c["prompt_tokens"] or 0 for c in run["calls"]),
        "completion_tokens": sum(c["completion_tokens"] or 0 for c in run["calls"]),
    }
    if n_v:
        fig["calls_per_verified"] = round(fig["calls"] / n_v, 2)
        fig["prompt_tokens_per_verified"] = round(fig["prompt_tokens"] / n_v)
    if correct:
        fig["calls_per_correct"] = round(fig["calls"] / len(correct), 1)
        if seconds:
            fig["seconds_per_correct"] = round(seconds / len(correct), 1)

    print(f"KB {name} ({kb}), model {model}, n={args.n}")
    print(f"  generated {fig['generated']}, verified {n_v} (yield {fig['yield']}), "
          f"rejected {len(rejected)}: {fig['rejection_reasons']}")
    if unread:
        print(f"  read {fig['read']} of {n_v}: correct {len(correct)}; precision between "
              f"{fig['precision_bounds'][0]} and {fig['precision_bounds'][1]} "
              f"({len(unread)} unread: --unread lists them)")
    else:
        lo, hi = fig["precision_interval"] or (None, None)
        print(f"  precision {fig['precision']} ({len(correct)} of {n_v} correct; "
              f"95% interval {lo}-{hi})")
    print(f"  verified types {fig['verified_types']}, correct {fig['correct_types']}, "
          f"difficulty {fig['verified_difficulty']}")
    print(f"  failure classes {fig['failure_classes']}")
    print(f"  harder items by how they were built (correct/read) {fig['precision_by_kind']}")
    print(f"  single-hop by answer span (asked/verified/correct) {fig['by_span_kind']}")
    print(f"  harder share {fig['harder_share']}, precision by type {fig['precision_by_type']}; "
          f"per verified item: {fig.get('calls_per_verified')} calls, "
          f"{fig.get('prompt_tokens_per_verified')} prompt tokens")
    print(f"  LLM calls {fig['calls']}, seconds {fig['seconds']}"
          + ("" if fig["fresh"] else " (NOT a fresh run: cached calls)")
          + (f", per correct item: {fig.get('calls_per_correct')} calls, "
             f"{fig.get('seconds_per_correct')} s" if correct else ""))
    if args.json:
        args.json.write_text(json.dumps(fig, indent=1), encoding="utf-8")
    if args.unread:
        for c in unread:
            print("\n" + json.dumps({"question": c["question"], "answer": c["answer"],
                                     "type": c["type"]}, ensure_ascii=False))
            for line in evidence_of(c, run["chunks"]):
                print("    " + line.replace("\n", " ")[:700])


if __name__ == "__main__":
    main()
