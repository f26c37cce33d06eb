"""What the scoring tests share: tiny golden/run files and a scripted judge (the CLI runner is
the `golden_cli` fixture of tests/conftest.py)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from tests.fakes import ScriptedLLM

GOLDEN = [
    {"id": "q1", "query": "What colour is the sky?", "expected_answer": "Blue.",
     "relevant_chunk_ids": ["c1"], "type": "single_hop", "difficulty": "easy"},
    {"id": "q2", "query": "How do A and B differ?", "expected_answer": "A is older than B.",
     "relevant_chunk_ids": ["c2", "c3"], "type": "multi_hop", "difficulty": "hard"},
    {"id": "q3", "query": "Who founded Z?", "expected_answer": "The sources do not say.",
     "relevant_chunk_ids": [], "type": "unanswerable", "difficulty": "medium"},
]

RUN = [
    {"query_id": "q1", "retrieved_ids": ["c9", "c1"], "contexts": ["noise", "The sky is blue."],
     "answer": "The sky is blue.", "latency_ms": 10, "cost": 0.002},
    {"query_id": "q2", "retrieved_ids": ["c2", "c7"], "contexts": ["A is old.", "unrelated"],
     "answer": "B is older than A.", "latency_ms": 30, "cost": 0.004},
    {"query_id": "q3", "retrieved_ids": ["c5"], "contexts": ["Z makes tea."],
     "answer": "I cannot find that in the sources.", "latency_ms": 20},
]


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def judge_replies(prompt: str, variables, role: str):
    """A deterministic judge for RUN: q1 right and faithful, q2 wrong and unfaithful, q3 a
    correct refusal."""
    answer = variables.get("answer", "")
    if prompt == "judge_refusal":
        return {"refusal": "cannot find" in answer, "reason": "scripted"}
    if prompt == "judge_claim":  # only what code leaves open reaches it
        return {"reason": "scripted", "supported": "sky" in variables["claim"]}
    if prompt == "judge_relevancy":
        return {"score": 5, "reason": "on topic"}
    if prompt == "judge_correctness":
        return {"score": 5 if "sky" in answer else 2, "reason": "compared with the reference"}
    if prompt == "judge_context":
        return {"useful": variables["passage"] not in ("noise", "unrelated"), "reason": "s"}
    raise AssertionError(prompt)


def scripted_open_llm(llm: ScriptedLLM):
    """A stand-in for builder.llm.setup.open_llm that yields `llm` (no server, no network)."""

    @contextlib.contextmanager
    def fake_open_llm(store, settings, *, job, **kwargs):
        yield llm

    return fake_open_llm
