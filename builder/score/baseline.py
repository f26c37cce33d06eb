"""A baseline run from golden's built-in retriever (SQLite FTS5 / BM25 over the ingested chunks),
so a new user can score end to end before wiring up their own RAG system.

Each golden item becomes one run line: `query_id` (or `query` for seed-format items, which
have no id), `retrieved_ids` best first, their BM25 `scores`, the chunk texts as `contexts`,
`latency_ms`, and with `answer` set an `answer` generated from those contexts by the LLM
(`prompts/baseline_answer.prompt`). A failed generation leaves `answer` out of that line and
is counted; it never stops the run -- unless the whole job cannot work (the key rejected, the
model unknown, the endpoint unreachable: the client's JobError), which ends it with nothing
written.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from builder.errors import InputError, JobError
from builder.llm.prompts import load_prompt
from builder.llm.types import LLM, BudgetExceeded
from builder.score.inputs import GoldenSet
from builder.score.report import write_outputs
from builder.store.db import Store
from builder.store.documents import count_chunks
from builder.store.search import search_chunks


class BaselineAnswer(BaseModel):
    answer: str


def retrieve(store: Store, golden: GoldenSet, k: int) -> list[dict[str, Any]]:
    """One run record per golden item, in golden order (no answers)."""
    if not count_chunks(store):
        raise InputError("the database has no ingested chunks: run `golden ingest` first",
                         path=str(store.path))
    records = []
    for item in golden.items.values():
        started = time.perf_counter()
        hits = search_chunks(store, item.query, k)
        latency = (time.perf_counter() - started) * 1000
        key = {"query": item.query} if item.seed else {"query_id": item.id}
        records.append({
            **key,
            "retrieved_ids": [h["id"] for h in hits],
            "scores": [round(float(h["score"]), 6) for h in hits],
            "contexts": [h["text"] for h in hits],
            "latency_ms": round(latency, 3),
        })
    return records


async def add_answers(records: list[dict[str, Any]], golden: GoldenSet, llm: LLM, *,
                      prompts_dir: str | None = None, concurrency: int = 4,
                      progress: Callable[[str], None] | None = None) -> int:
    """Generate an answer for each record (from `retrieve`, same order) in place; returns how
    many failed."""
    prompt = load_prompt("baseline_answer", prompts_dir)
    gate = asyncio.Semaphore(concurrency)
    failures = 0
    stopped = False

    async def one(qid: str, record: dict[str, Any]) -> None:
        nonlocal failures, stopped
        async with gate:
            if stopped:
                failures += 1
                return
            contexts = "\n\n".join(f"[{n}] {t}" for n, t in enumerate(record["contexts"], 1))
            started = time.perf_counter()
            try:
                result = await llm.structured(
                    prompt, {"question": golden.items[qid].query, "contexts": contexts or "(none)"},
                    BaselineAnswer, stage="baseline_answer", role="generator")
            except BudgetExceeded:
                stopped = True
                failures += 1
                return
            except JobError:
                # a rejected key, an unknown model, an unreachable endpoint: no answer can
                # come; say so (exit 1) instead of writing a run with every answer missing
                raise
            except Exception:  # one bad reply must never end the run
                failures += 1
                return
            record["latency_ms"] = round(record["latency_ms"]
                                         + (time.perf_counter() - started) * 1000, 3)
            if not result.ok:
                failures += 1
                return
            record["answer"] = result.value.answer
            if result.usage:
                record["prompt_tokens"] = result.usage.get("prompt_tokens")
                record["completion_tokens"] = result.usage.get("completion_tokens")

    await asyncio.gather(*(one(qid, rec) for qid, rec in zip(golden.items, records)))
    if progress and failures:
        progress(f"{failures} answer(s) could not be generated; those lines have no answer")
    return failures


def write_run(path: str | Path, records: list[dict[str, Any]]) -> None:
    """Write the run JSONL atomically (temp file then rename)."""
    write_outputs({str(path): "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)})
