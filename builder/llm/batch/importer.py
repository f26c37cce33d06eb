"""`golden batch import FILE...`: a batch engine's output and error lines into the LLM cache.

Each line is joined to its staged request on `custom_id` (order does not matter) and read
exactly as the live client reads a reply (`structured.read_reply`: refusal, truncation, the
output model's validation), then:

- a final outcome (ok, refusal, empty, truncated, invalid) is logged in `llm_calls` under the
  request's cache key, with the tokens of every step and its cost at the batch rate: an "ok"
  row is the cache entry the next pass reads;
- a reply the live client would follow up (cut off: twice the room, once; not valid: one
  repair round) adds that follow-up request, which the next pass stages;
- a line that did not run (an `error`, a status other than 200) is logged as a failed call
  and the request is staged again by the next pass, up to `max_retries` times like a live
  call's retries (then the failure is final); an error about `response_format` steps that
  request down the structured-output ladder (json_schema -> json_object -> text).

Idempotent: every line's id is remembered with its effects, so a file imported twice or two
overlapping files (vLLM run twice on one request file) store each reply once. A `custom_id`
golden never staged is counted and reported, never stored. Every file is read through first:
a malformed line stops the import before anything is stored, naming the file and line.
"""

from __future__ import annotations

import importlib
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from builder.errors import InputError
from builder.llm.batch.formats import ResultLine, read_results
from builder.llm.client import FORMAT_WORDS
from builder.llm.settings import LLMSettings
from builder.llm.structured import MODES, read_reply
from builder.store import batch as batch_store
from builder.store import llm_calls
from builder.store.db import Store

CHUNK = 500  # lines per transaction


@dataclass
class ImportReport:
    files: int = 0
    lines: int = 0
    stored: Counter = field(default_factory=Counter)      # llm_calls status -> replies logged
    follow_ups: Counter = field(default_factory=Counter)  # longer | repair
    restage: int = 0          # lines that did not run: staged again by the next pass
    failed_final: int = 0     # ... and had used up their retries
    duplicates: int = 0
    foreign: int = 0
    foreign_ids: list[str] = field(default_factory=list)

    def line(self) -> str:
        stored = sum(self.stored.values())
        kinds = ", ".join(f"{n} {s}" for s, n in self.stored.most_common())
        parts = [f"imported {self.lines} lines from {self.files} file(s): {stored} replies "
                 f"stored" + (f" ({kinds})" if kinds else "")]
        if self.follow_ups:
            parts.append(f"{sum(self.follow_ups.values())} follow-up requests for the next "
                         f"pass ({', '.join(f'{n} {k}' for k, n in sorted(self.follow_ups.items()))})")
        if self.restage:
            parts.append(f"{self.restage} failed (staged again by the next pass)")
        if self.failed_final:
            parts.append(f"{self.failed_final} failed for good (retries used up)")
        if self.duplicates:
            parts.append(f"{self.duplicates} duplicates skipped")
        if self.foreign:
            shown = ", ".join(self.foreign_ids)
            parts.append(f"{self.foreign} lines with a custom_id golden never staged here, "
                         f"ignored (e.g. {shown})")
        return "; ".join(parts)


@lru_cache(maxsize=64)
def output_model(path: str) -> type[BaseModel]:
    """The pydantic model a staged request's replies must fit ("module:Class", recorded at
    staging). Only golden's own modules are imported: the path comes from the database."""
    module_name, _, name = path.partition(":")
    if not module_name.startswith("builder.") or not name:
        raise InputError(f"staged request names an unknown output model {path!r}")
    try:
        target: Any = importlib.import_module(module_name)
        for part in name.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError):
        raise InputError(f"staged request names an output model this golden does not have "
                         f"({path}): import with the golden that staged it") from None
    if not (isinstance(target, type) and issubclass(target, BaseModel)):
        raise InputError(f"staged request names {path!r}, which is not an output model")
    return target


class _Importer:
    def __init__(self, store: Store, settings: LLMSettings):
        self.store = store
        self.settings = settings
        self.report = ImportReport()
        self._modes = llm_calls.load_response_modes(store)
        key = settings.api_key.get_secret_value() if settings.api_key else None
        self._key = key if key and len(key) >= 6 else None

    def scrub(self, text: str | None) -> str | None:
        if text is None or self._key is None:
            return text
        return text.replace(self._key, "[redacted]")

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        price = self.settings.price_for(model)
        return price.cost(prompt_tokens, completion_tokens, batch=True) if price else None

    def call(self, req: dict, state: dict, *, status: str, error: str | None = None,
             raw: str | None = None, parsed: dict | None = None) -> dict[str, Any]:
        """The llm_calls row of an outcome, as the live client logs one."""
        model = req["model"]
        tokens = state["prompt_tokens"], state["completion_tokens"]
        return {
            "cache_key": req["cache_key"], "job": req["job"], "stage": req["stage"],
            "prompt_name": req["prompt_name"], "prompt_version": req["prompt_version"],
            "base_url": req["base_url"], "model": model,
            "params": {**(req["params"] or {}), "max_tokens_used": state["max_tokens"],
                       "batch": True},
            "messages": req["messages"], "schema_name": req["output"].rpartition(":")[2],
            "response_format": state["mode"], "raw_response": self.scrub(raw), "parsed": parsed,
            "status": status, "error": self.scrub(error), "prompt_tokens": tokens[0],
            "completion_tokens": tokens[1], "latency_ms": None,
            "cost_usd": self.cost(model, *tokens) if status != "error" else None,
            "attempts": state["attempts"],
        }

    def apply(self, res: ResultLine) -> None:
        report = self.report
        if batch_store.reply_seen(self.store, res.reply_id):
            report.duplicates += 1
            return
        req = batch_store.request(self.store, res.custom_id)
        if req is None:
            report.foreign += 1
            if len(report.foreign_ids) < 3:
                report.foreign_ids.append(res.custom_id[:80])
            return
        if req["status"] in ("done", "continued"):
            report.duplicates += 1
            batch_store.note_reply(self.store, res.reply_id, res.custom_id, "duplicate")
            return
        state = dict(req["state"] or {})
        state["attempts"] = state.get("attempts", 0) + 1
        if res.completion is None:
            self.failed(req, state, res)
            return
        usage = res.completion.get("usage") or {}
        state["prompt_tokens"] += usage.get("prompt_tokens") or 0
        state["completion_tokens"] += usage.get("completion_tokens") or 0
        reading = read_reply(res.completion, output_model(req["output"]),
                             enlarged=state["enlarged"], repaired=state["repaired"],
                             max_tokens=state["max_tokens"])
        if reading.status in ("longer", "repair"):
            nxt = dict(state)
            if reading.status == "longer":
                nxt.update(enlarged=True, max_tokens=state["max_tokens"] * 2)
            else:
                nxt.update(repaired=True, content=reading.content, problem=reading.error)
            step = req["step"] + 1
            follow = {**req, "custom_id": f"{req['cache_key']}-{step}", "step": step,
                      "state": nxt, "file": None, "call_id": None, "staged_at": None}
            batch_store.settle(self.store, req, reply_id=res.reply_id, outcome="continued",
                               status="continued", state=state, follow_up=follow)
            report.follow_ups[reading.status] += 1
            return
        call = self.call(req, state, status=reading.status, error=reading.error, raw=res.raw,
                         parsed=reading.parsed)
        batch_store.settle(self.store, req, reply_id=res.reply_id, outcome=reading.status,
                           status="done", state=state, call=call)
        report.stored[reading.status] += 1
        if reading.status == "ok":
            endpoint_model = f"{req['base_url']}|{req['model']}"
            if self._modes.get(endpoint_model) != state["mode"]:
                self._modes[endpoint_model] = state["mode"]
                llm_calls.save_response_mode(self.store, endpoint_model, state["mode"])

    def failed(self, req: dict, state: dict, res: ResultLine) -> None:
        """A line whose request did not run: logged as a failed call; staged again (a format
        complaint one step down the ladder) until the retries are used up."""
        where = f"HTTP {res.status_code}: " if res.status_code else ""
        code = f" ({res.code})" if res.code and str(res.code) != str(res.status_code) else ""
        error = f"batch: {where}{res.error}{code}"[:500]
        about_format = res.status_code in (400, 422) and bool(FORMAT_WORDS.search(res.error or ""))
        if about_format and state["mode"] != MODES[-1]:
            state["mode"] = MODES[MODES.index(state["mode"]) + 1]
        final = state["attempts"] > self.settings.max_retries
        call = self.call(req, state, status="error", error=error)
        batch_store.settle(self.store, req, reply_id=res.reply_id, outcome="failed",
                           status="done" if final else "failed", state=state, call=call)
        if final:
            self.report.failed_final += 1
        else:
            self.report.restage += 1


def result_files(args: list[str]) -> list[Path]:
    """The files named, a folder standing for its fetched `*.results.jsonl` / `*.errors.jsonl`."""
    files: list[Path] = []
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            found = sorted([*path.glob("*.results.jsonl"), *path.glob("*.errors.jsonl")])
            if not found:
                raise InputError("no *.results.jsonl or *.errors.jsonl files in this folder",
                                 path=arg)
            files.extend(found)
        else:
            files.append(path)
    return files


def import_results(store: Store, paths: list[Path], settings: LLMSettings) -> ImportReport:
    """Import output/error files (see the module doc); returns what was done."""
    lines = 0
    for path in paths:  # every line checked before anything is stored
        for _ in read_results(path):
            lines += 1
    importer = _Importer(store, settings)
    importer.report.files, importer.report.lines = len(paths), lines
    for path in paths:
        pending: list[ResultLine] = []
        for _, res in read_results(path):
            pending.append(res)
            if len(pending) >= CHUNK:
                _apply_chunk(store, importer, pending)
                pending = []
        _apply_chunk(store, importer, pending)
    return importer.report


def _apply_chunk(store: Store, importer: _Importer, lines: list[ResultLine]) -> None:
    if not lines:
        return
    with store.write():
        for res in lines:
            importer.apply(res)
