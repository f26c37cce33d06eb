"""Benchmark `--batch`: staging and importing at scale, and how many staging rounds a full
`golden generate --n 2000` needs. No network: replies come from a scripted model.

On a generated knowledge base of 20,000 chunks (pre-chunked JSONL, ingested once):

(a) staging: one `--batch` pass of the LLM layer (`BatchClient` inside `staged_pass`, as a job
    runs it) asks 100,000 distinct structured calls (the facts prompt over the chunks, five
    variants each), none cached: every one is written to a request file. Throughput
    (requests/s) and the pass's peak RSS. Target: 100,000 staged in under 60 s, peak RSS
    under 300 MB (the ratio to those targets is printed).
(b) import: vLLM-shaped results for all of them (a valid reply per line, written before the
    timer starts), `golden batch import`ed: lines/s and peak RSS, same targets' RSS.
(c) the same pass again, every reply now cached: it stages nothing and completes.
(d) rounds: `golden generate --n 2000 --batch DIR` on the same knowledge base, a scripted
    model (`pure_model`) answering each round's files through the stub's batch runner, until
    the job finishes: staging rounds, requests per round, seconds per pass (a
    pass replays the job from the cache, so later passes take longer; it holds the
    database's write lock that long). `--rounds-chunks N` runs (d) on a knowledge base of N
    chunks instead: a pass replays the job from the cache, span planning included.

Each phase runs in its own process (peak RSS is that process's ru_maxrss).

    python bench/bench_batch.py [--chunks 20000] [--requests 100000] [--n 2000] [--rounds-chunks N]
                                [--skip-rounds | --rounds-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_S = 60.0
TARGET_RSS_MB = 300.0
VARIANTS = 5

PRODUCTS = ["Trail Pro", "Summit", "Ridge", "Canyon", "Alpine", "Harbor", "Meadow", "Granite"]
WORDS = ("policy members order shipping return warranty discount account support store plan "
         "service customer delivery refund exchange item price fee week month").split()


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def chunk_text(rng: random.Random, i: int) -> str:
    """A paragraph with the shapes facts come from: prices, durations, names, plain rules."""
    p = f"{rng.choice(PRODUCTS)} {i % 97}"
    sentences = [
        f"The {p} costs ${rng.randint(5, 400)} per {rng.choice(['year', 'month', 'order'])}.",
        f"Returns of the {p} are accepted within {rng.choice([14, 30, 45, 60])} days of purchase.",
        f"Members of the {rng.choice(['Gold', 'Basic', 'Silver'])} plan get a "
        f"{rng.randint(5, 25)}% discount on the {p}.",
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(25, 60))).capitalize() + ".",
        f"Standard shipping of the {p} takes {rng.randint(2, 9)} days and costs ${rng.randint(3, 20)}.",
    ]
    rng.shuffle(sentences)
    return " ".join(sentences)


def build_kb(db: Path, chunks: int) -> None:
    from click.testing import CliRunner

    from builder.cli import golden

    rng = random.Random(7)
    src = db.parent / "kb.jsonl"
    with open(src, "w", encoding="utf-8") as out:
        for i in range(chunks):
            doc = i // 10
            out.write(json.dumps({"id": f"d{doc}-c{i % 10}", "text": chunk_text(rng, i),
                                  "source": f"doc-{doc}.md", "title": f"Catalogue {doc}"}) + "\n")
    res = CliRunner().invoke(golden, ["--db", str(db), "ingest", str(src)])
    assert res.exit_code == 0, res.output


# ------------------------------------------------------------------------ phases (children)

def pure_model(name: str, v, role: str):
    """bench_generate's sentence model, except that round-trip answers are a pure function of
    the request (the tests' ideal model remembers the answer of each question it wrote, and
    two items with one question text then get the answer of whichever was written last: an
    order the live run and the batched run need not share). Answers with the cloze's fill
    when there is one, else with the passage sentence sharing most words with the question."""
    from bench.bench_generate import sentence_model
    from tests.support.scripted_kb import _cloze_fill, _passage_texts

    if name != "roundtrip":
        return sentence_model(name, v, role)
    texts = _passage_texts(v["passages"])
    if (fill := _cloze_fill(v["question"], "\n".join(texts))) is not None:
        return {"passage": next((i for i, t in enumerate(texts, 1) if fill in t), 1),
                "answer": fill}
    asked = set(v["question"].lower().split())
    best = max(((len(asked & set(sent.lower().split())), -i, sent)
                for i, t in enumerate(texts, 1) for sent in t.split(". ")), default=None)
    if best is None or best[0] < 3:
        return {"passage": 0, "answer": ""}
    return {"passage": -best[1], "answer": best[2].strip()}


def _settings(batch_dir: Path):
    from builder.llm.settings import LLMSettings

    return LLMSettings(base_url="https://api.openai.com/v1", model="gpt-4o-mini",
                       batch_dir=str(batch_dir))


async def _ask_all(client, requests: int, store) -> None:
    from builder.generate.models import FactsOutput
    from builder.llm.prompts import load_prompt
    from builder.store.documents import list_chunks

    prompt = load_prompt("facts")
    chunks = list_chunks(store)
    sem = asyncio.Semaphore(64)

    async def one(i: int) -> None:
        chunk = chunks[i % len(chunks)]
        async with sem:
            await client.structured(prompt, {"chunk": chunk["text"],
                                             "title": f"{chunk['title']} (v{i // len(chunks)})",
                                             "language": "English"}, FactsOutput, stage="facts")

    for start in range(0, requests, 5000):
        await asyncio.gather(*(one(i) for i in range(start, min(requests, start + 5000))))


def phase_stage(db: Path, batch_dir: Path, requests: int) -> dict:
    from builder.errors import JobStopped
    from builder.llm.batch.staging import BatchClient, staged_pass
    from builder.store import Store

    store = Store(db)
    client = BatchClient(store, _settings(batch_dir), job="generate")
    started = time.perf_counter()
    outcome = "completed"
    try:
        with staged_pass(store, client):
            asyncio.run(_ask_all(client, requests, store))
    except JobStopped:
        outcome = "staged"
    wall = time.perf_counter() - started
    staged = store.query("SELECT count(*) AS n FROM batch_requests WHERE status = 'staged'")[0]["n"]
    files = sorted(p.name for p in batch_dir.glob("requests-*.jsonl"))
    return {"wall": wall, "rss_mb": rss_mb(), "outcome": outcome, "staged": staged,
            "files": files, "cached": client.summary()["cached"]}


def write_results(batch_dir: Path) -> int:
    """vLLM-shaped results for every request file: one valid FactsOutput per line."""
    lines = 0
    for path in sorted(batch_dir.glob("requests-*.jsonl")):
        if path.name.endswith((".results.jsonl", ".errors.jsonl")):
            continue
        out_path = path.with_name(path.name.removesuffix(".jsonl") + ".results.jsonl")
        with open(path, encoding="utf-8") as src, open(out_path, "w", encoding="utf-8") as out:
            for n, text in enumerate(src):
                req = json.loads(text)
                passage = req["body"]["messages"][-1]["content"].split("<passage>\n")[-1]
                sentence = passage.split(". ")[0].strip() + "."
                content = json.dumps({"facts": [{"fact": sentence, "evidence": sentence,
                                                 "entities": [], "dates": []}]})
                out.write(json.dumps({
                    "id": f"vllm-{path.name}-{n}", "custom_id": req["custom_id"],
                    "response": {"status_code": 200, "request_id": f"r{n}", "body": {
                        "id": f"c{n}", "object": "chat.completion", "created": 0,
                        "model": req["body"]["model"],
                        "choices": [{"index": 0, "finish_reason": "stop", "message": {
                            "role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": 400, "completion_tokens": 40,
                                  "total_tokens": 440}}},
                    "error": None}) + "\n")
                lines += 1
    return lines


def phase_import(db: Path, batch_dir: Path) -> dict:
    from builder.llm.batch.importer import import_results, result_files
    from builder.llm.settings import LLMSettings
    from builder.store import Store

    store = Store(db)
    started = time.perf_counter()
    report = import_results(store, result_files([str(batch_dir)]), LLMSettings())
    wall = time.perf_counter() - started
    return {"wall": wall, "rss_mb": rss_mb(), "lines": report.lines,
            "stored": sum(report.stored.values()), "duplicates": report.duplicates}


def phase_rounds(db: Path, batch_dir: Path, n: int) -> dict:
    from click.testing import CliRunner

    from builder.cli import golden
    from tests.stub_endpoint import StubEndpoint
    from tests.support.batch_engine import new_request_files, run_file

    stub = StubEndpoint(respond=lambda name, v: pure_model(name, v, "generator"))
    runner = CliRunner()
    args = ["--db", str(db), "generate", "--n", str(n), "--base-url", "https://api.openai.com/v1",
            "--model", "gpt-4o-mini", "--batch", str(batch_dir)]
    seen: set[str] = set()
    passes, per_round, pass_s, import_s = 0, [], [], 0.0
    while True:
        t0 = time.perf_counter()
        res = runner.invoke(golden, args)
        pass_s.append(time.perf_counter() - t0)
        passes += 1
        print(f"    pass {passes}: {pass_s[-1]:.1f} s", file=sys.stderr, flush=True)
        assert res.exit_code == 0, res.output
        if "staged" not in res.output and "nothing new" not in res.output:
            summary = res.output
            break
        files = new_request_files(batch_dir, seen)
        per_round.append(sum(1 for f in files for _ in open(f)))
        results = [r for f in files for r in run_file(stub, f)]
        t0 = time.perf_counter()
        res = runner.invoke(golden, ["--db", str(db), "batch", "import", *map(str, results)])
        import_s += time.perf_counter() - t0
        assert res.exit_code == 0, res.output
        if passes > 200:
            raise SystemExit("more than 200 passes")
    verified = [line for line in summary.splitlines() if "verified" in line.lower()][:3]
    return {"rounds": len(per_round), "passes": passes, "per_round": per_round,
            "pass_s": pass_s, "import_s": import_s, "rss_mb": rss_mb(), "summary": verified}


def phase_live(db: Path, n: int) -> dict:
    """The reference for (d): the same job live, the same scripted model answering in-process
    (tests/fakes.py), on a copy of the same knowledge base."""
    from builder.generate.models import GenerateOptions
    from builder.generate.runner import run_generate
    from builder.store import Store
    from tests.fakes import ScriptedLLM

    store = Store(db)
    llm = ScriptedLLM(pure_model, model="gpt-4o-mini")
    t0 = time.perf_counter()
    summary = run_generate(store, llm, GenerateOptions(n=n, facts="llm"))
    wall = time.perf_counter() - t0
    rows = store.query("SELECT id, verdict, duplicate_of FROM candidates ORDER BY id")
    return {"wall": wall, "calls": len(llm.calls), "verified": summary.verified_total,
            "rss_mb": rss_mb(), "candidates": [list(r.values()) for r in rows]}


def _candidates(db: Path) -> list[list]:
    from builder.store import Store

    with Store(db) as store:
        return [list(r.values()) for r in store.query(
            "SELECT id, verdict, duplicate_of FROM candidates ORDER BY id")]


# ----------------------------------------------------------------------------- the driver

def child(phase: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--phase", phase, *args],
                          stdout=subprocess.PIPE, text=True, cwd=ROOT)  # stderr: progress
    if proc.returncode != 0:
        raise SystemExit(f"phase {phase} failed (exit {proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def staging_and_import(tmp: Path, chunks: int, requests: int) -> None:
    """(a), (b) and (c) on a knowledge base of `chunks` chunks (tmp/kb.db)."""
    db = tmp / "kb.db"
    t0 = time.perf_counter()
    build_kb(db, chunks)
    print(f"knowledge base: {chunks} chunks ingested in {time.perf_counter() - t0:.1f} s ({tmp})")
    jobs = tmp / "jobs"
    common = ["--db", str(db), "--dir", str(jobs), "--requests", str(requests)]
    s = child("stage", *common)
    print(f"(a) staging: {s['staged']} requests in {s['wall']:.1f} s = "
          f"{s['staged'] / s['wall']:.0f} requests/s, {len(s['files'])} files, peak RSS "
          f"{s['rss_mb']:.0f} MB; vs target: time {s['wall'] * 100_000 / requests / TARGET_S:.2f}x "
          f"of 60 s per 100,000, RSS {s['rss_mb'] / TARGET_RSS_MB:.2f}x of 300 MB")
    lines = child("results", *common)["lines"]
    i = child("import", *common)
    print(f"(b) import: {i['lines']} lines in {i['wall']:.1f} s = {i['lines'] / i['wall']:.0f} "
          f"lines/s ({i['stored']} stored), peak RSS {i['rss_mb']:.0f} MB "
          f"({i['rss_mb'] / TARGET_RSS_MB:.2f}x of 300 MB); results written: {lines} lines")
    c = child("stage", *common)
    print(f"(c) the same pass, all cached: {c['outcome']} in {c['wall']:.1f} s "
          f"({c['cached']} cache hits, {c['cached'] / c['wall']:.0f}/s), peak RSS "
          f"{c['rss_mb']:.0f} MB", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=20_000)
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rounds-chunks", type=int, default=None,
                    help="knowledge base size for (d) and its live reference [--chunks]")
    ap.add_argument("--skip-rounds", action="store_true")
    ap.add_argument("--rounds-only", action="store_true", help="(d) only, not (a)-(c)")
    ap.add_argument("--phase", default=None)
    ap.add_argument("--db")
    ap.add_argument("--dir")
    a = ap.parse_args()
    if a.phase:
        db, d = Path(a.db), Path(a.dir)
        result = {"stage": lambda: phase_stage(db, d, a.requests),
                  "results": lambda: {"lines": write_results(d)},
                  "import": lambda: phase_import(db, d),
                  "rounds": lambda: phase_rounds(db, d, a.n),
                  "live": lambda: phase_live(db, a.n)}[a.phase]()
        print(json.dumps(result))
        return

    tmp = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    if not a.rounds_only:
        staging_and_import(tmp, a.chunks, a.requests)
    if a.skip_rounds:
        return
    rounds_chunks = a.rounds_chunks or a.chunks
    kb_copy, kb_live = tmp / "kb-clean.db", tmp / "kb-live.db"
    if rounds_chunks == a.chunks and (tmp / "kb.db").exists():
        shutil.copy(tmp / "kb.db", kb_copy)
    else:
        (tmp / "rounds-kb").mkdir()
        build_kb(tmp / "rounds-kb" / "kb.db", rounds_chunks)
        shutil.copy(tmp / "rounds-kb" / "kb.db", kb_copy)
    shutil.copy(kb_copy, kb_live)
    # the reference first: its figure stands even if the passes are stopped part-way
    live = child("live", "--db", str(kb_live), "--dir", str(tmp), "--n", str(a.n))
    print(f"(d) reference, the same job live (scripted model in-process) on {rounds_chunks} "
          f"chunks: {live['wall']:.1f} s, {live['calls']} calls, {live['verified']} verified",
          flush=True)
    r = child("rounds", "--db", str(kb_copy), "--dir", str(tmp / "rounds"), "--n", str(a.n))
    total = sum(r["pass_s"])
    print(f"(d) generate --n {a.n} --batch on {rounds_chunks} chunks: {r['rounds']} staging "
          f"rounds ({r['passes']} passes), "
          f"{sum(r['per_round'])} requests, per round {r['per_round']}")
    print(f"    seconds per pass {[round(x, 1) for x in r['pass_s']]} (max {max(r['pass_s']):.1f}: "
          f"the longest write-lock hold), imports {r['import_s']:.1f} s, peak RSS "
          f"{r['rss_mb']:.0f} MB")
    print(f"    all passes together {total:.1f} s = {total / live['wall']:.1f}x the live run; "
          f"longest pass {max(r['pass_s']) / live['wall']:.2f}x; same candidates: "
          f"{_candidates(kb_copy) == live['candidates']}")
    print("    " + " | ".join(r["summary"]))


if __name__ == "__main__":
    main()
