"""What the production-log tests share: log lines in each format, and a scripted judge.

The scripted judge reads the texts the model would read and decides like a careful one would
on these records: a claim is supported when its first words occur in a context, a chunk is
useful when it shares a word with the question, relevancy is 5 unless the answer says
"unrelated", and refusals are recognised by code (the phrase file) before it is asked.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

from tests.fakes import ScriptedLLM

PLANTED = {"email": "jane.roe@example.com", "phone": "+44 20 7946 0958",
           "card": "4111 1111 1111 1111"}


def log_line(rid: str, query: str, answer: str | None = "An answer.", *,
             at: str = "2025-03-02T10:00:00Z", contexts: list[str] | None = None,
             ids: list[str] | None = None, **over) -> dict:
    """One line of golden's own log format."""
    line = {"id": rid, "timestamp": at, "query": query, "answer": answer}
    if contexts is not None:
        line["contexts"] = contexts
    if ids is not None:
        line["retrieved_ids"] = ids
    return {**line, **over}


def write_lines(path: Path, rows) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def phoenix_span(trace: str, span: str, parent: str | None, kind: str, start: str, end: str,
                 attributes: dict) -> dict:
    """A span as Phoenix exports it (and the OpenTelemetry SDK prints it): one per line."""
    return {"name": kind.lower(), "context": {"trace_id": trace, "span_id": span},
            "span_kind": kind, "parent_id": parent, "start_time": start, "end_time": end,
            "status_code": "OK", "status_message": "", "attributes": attributes,
            "events": [], "conversation": None}


def otlp_value(value) -> dict:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": value}


def otlp_line(spans: list[dict]) -> dict:
    """An OTLP/JSON line as the OpenTelemetry Collector's file exporter writes it; each span
    given as {traceId, spanId, parentSpanId?, name, start, end (ns), attributes (dict)}."""
    out = []
    for s in spans:
        entry = {"traceId": s["traceId"], "spanId": s["spanId"], "name": s["name"],
                 "kind": 1, "startTimeUnixNano": str(s["start"]),
                 "endTimeUnixNano": str(s["end"]),
                 "attributes": [{"key": k, "value": otlp_value(v)}
                                for k, v in s["attributes"].items()],
                 "status": {}}
        if s.get("parentSpanId"):
            entry["parentSpanId"] = s["parentSpanId"]
        out.append(entry)
    return {"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "rag-api"}}]},
        "scopeSpans": [{"scope": {"name": "openinference"}, "spans": out}]}]}


_WORD = re.compile(r"[a-z]{4,}")


def log_judge(prompt: str, v, role: str):
    """The scripted judge described in the module docstring."""
    if prompt == "judge_refusal":
        return {"refusal": False, "reason": "scripted"}
    if prompt == "judge_claim":
        evidence = v["evidence"].lower()
        return {"supported": " ".join(v["claim"].lower().split()[:3]) in evidence,
                "reason": "scripted"}
    if prompt == "judge_relevancy":
        return {"score": 1 if "unrelated" in v["answer"].lower() else 5, "reason": "scripted"}
    if prompt == "judge_context":
        shared = set(_WORD.findall(v["question"].lower())) & set(_WORD.findall(
            v["passage"].lower()))
        return {"useful": bool(shared), "reason": "shares " + ", ".join(sorted(shared))
                if shared else "no word of the question"}
    raise AssertionError(prompt)


def patch_judge(monkeypatch, llm: ScriptedLLM | None = None) -> ScriptedLLM:
    """Make `golden logs evaluate` use a scripted judge (no server, no network)."""
    import builder.llm.setup as setup

    llm = llm or ScriptedLLM(log_judge)

    @contextlib.contextmanager
    def fake_open_llm(store, settings, *, job, **kwargs):
        yield llm

    monkeypatch.setattr(setup, "open_llm", fake_open_llm)
    return llm
