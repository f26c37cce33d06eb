"""`--batch DIR`: a pass of a job that stages its uncached LLM requests instead of sending them.

The cache is the bridge. Every structured call already has a cache key (endpoint, model,
messages, parameters, output schema) and a cache hit never touches the network. So a batched
job is the same job run again and again:

1. **A pass** runs the whole job (generation or judging) with `BatchClient`: a call whose reply
   is cached (imported from a batch engine's results) is answered from the cache; a call that
   misses is written to a request file, exactly the body the live client would POST, with
   `custom_id` = its cache key, and returns a "deferred" result. Where a step of the job ends
   (`stop_if_deferred`, called by `generate.context.run_units`, and at the end of the job)
   a pass that staged anything stops: what follows would read replies that are not there yet.
2. **Everything the pass wrote to the database is rolled back** (the pass runs inside one
   transaction, `staged_pass`); only the staged requests are kept (`batch_requests`), then the
   request files are renamed into place and listed in the manifest. The next pass therefore
   starts from the same database as this one, replays the same decisions from the same cached
   replies, and gets one step further.
3. **The last pass** finds every reply cached, stages nothing and commits: it is a live run
   whose every call was a cache hit, so same inputs and same replies give the same candidates,
   live or batched.

A request already staged and still waiting for its results (its request file is there) is not
written again. A reply the live client would have followed with a larger retry or a repair
round makes the import add that follow-up request (`<cache key>-<step>`), staged by the next
pass. A final failure (refusal, invalid after the repair round...) is returned to the job like
a live failure within the batched job; once the job finishes, those calls are forgotten, so
the next run asks again as a live re-run would.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from builder.errors import InputError, JobError, JobStopped
from builder.llm.batch import manifest as manifest_mod
from builder.llm.batch.formats import MAX_BYTES, MAX_LINES, request_line
from builder.llm.client import OpenAIClient
from builder.llm.prompts import Prompt
from builder.llm.structured import MODES
from builder.llm.types import CallsDeferred, LLMResult, stop_if_deferred
from builder.store import batch as batch_store
from builder.store.db import Store
from builder.store.timeutil import utcnow

TEMP_PREFIX = ".staging-"


def output_path(output: type[BaseModel]) -> str:
    """Where the import finds a call's output model again: "module:Class"."""
    return f"{output.__module__}:{output.__qualname__}"


def fresh_state(mode: str, max_tokens: int) -> dict[str, Any]:
    """The structured-output state of a call's first request (see `read_reply`)."""
    return {"mode": mode, "max_tokens": max_tokens, "repaired": False, "enlarged": False,
            "content": None, "problem": None, "prompt_tokens": 0, "completion_tokens": 0,
            "attempts": 0}


class BatchClient(OpenAIClient):
    """`OpenAIClient` whose network path stages the request instead (see the module doc).

    Cache lookups, single flight for identical concurrent requests, request bodies and
    `--dry-run` estimates are the live client's own; only `_call_endpoint` differs. Costs are
    priced at the batch rates of `[prices]`.
    """

    batch = True

    def __init__(self, store: Store, settings, *, job: str, progress=None):
        super().__init__(store, settings, job=job, progress=progress)
        self.batch_dir = Path(settings.batch_dir).resolve()
        self.shown_dir = Path(settings.batch_dir)  # as the user wrote it, for messages
        self.deferred = 0                  # requests this pass needs that have no reply yet
        self.awaiting: Counter[str] = Counter()   # request file -> requests waiting there
        self.served_failures: set[str] = set()    # keys whose final failure this pass used
        self._handled: set[str] = set()    # custom ids this pass already staged or counted
        self._writer: RequestWriter | None = None

    async def _call_endpoint(self, prompt: Prompt, messages: list[dict], output: type[BaseModel],
                             model: str, call_params: dict, key: str, stage: str,
                             role: str) -> LLMResult:
        deferred = LLMResult(None, "deferred", model=model)
        latest = batch_store.latest_step(self.store, key)
        status = latest["status"] if latest else None
        if status == "done":
            outcome = batch_store.call_outcome(self.store, latest["call_id"]) \
                if latest["call_id"] else None
            if outcome is not None and outcome["status"] != "ok":
                self.served_failures.add(key)  # as a live failure: this job carries on
                self._stats["cached"] += 1
                return LLMResult(None, outcome["status"], error=outcome["error"],
                                 call_id=outcome["id"], cached=True, model=model,
                                 usage={"prompt_tokens": outcome["prompt_tokens"] or 0,
                                        "completion_tokens": outcome["completion_tokens"] or 0})
        if status in ("staged", "pending", "failed"):  # waiting, a follow-up, a retry
            custom_id, step, state = latest["custom_id"], latest["step"], latest["state"]
        else:  # never staged, or a chain that no longer serves (done/continued): ask afresh
            mode = self._modes.get(f"{self.endpoint}|{model}", MODES[0])
            custom_id, step, state = key, 0, fresh_state(mode, call_params["max_tokens"])
        if custom_id in self._handled:  # asked again this pass (not concurrently)
            return deferred
        self._handled.add(custom_id)
        self.deferred += 1
        if status == "staged" and latest["file"] and os.path.exists(latest["file"]):
            self.awaiting[latest["file"]] += 1  # written before; its results are not in yet
            return deferred
        if status in ("done", "continued"):
            self.writer.forget(key)
        convo = messages
        if state["repaired"]:
            convo = self._repair_convo(messages, state["content"], state["problem"])
        body = self._request(model, convo, state["mode"], output, call_params["temperature"],
                             state["max_tokens"])
        self.writer.add(custom_id, model, stage, body, {
            "custom_id": custom_id, "cache_key": key, "step": step, "job": self.job,
            "stage": stage, "prompt_name": prompt.name, "prompt_version": prompt.version,
            "role": role, "base_url": self.endpoint, "model": model,
            "params": {**call_params, "role": role}, "messages": messages,
            "output": output_path(output), "state": state,
        })
        return deferred

    @property
    def writer(self) -> "RequestWriter":
        if self._writer is None:
            self._writer = RequestWriter(self.batch_dir, self.job)
        return self._writer

    def summary(self) -> dict[str, Any]:
        """The live summary, with tokens and cost of every reply imported for this folder's
        requests (the whole batched job, priced at the batch rates when it was imported)."""
        totals = super().summary()
        if not self.dry_run:
            answered = batch_store.answered_totals(self.store, str(self.batch_dir))
            totals.update(prompt_tokens=answered["prompt_tokens"],
                          completion_tokens=answered["completion_tokens"],
                          cost_usd=answered["cost_usd"], batched_calls=answered["calls"])
        totals["pricing"] = "batch"
        return totals

    # -- the end of a pass ------------------------------------------------------------------

    def finish_staged(self) -> JobStopped:
        """After the pass was rolled back: keep what it staged, say what to do next."""
        files = self._writer.commit(self.store) if self._writer else []
        new = sum(f.lines for f in files)
        waiting = sum(self.awaiting.values())
        where = self.shown_dir
        parts = []
        if files:
            names = ", ".join(str(where / f.name) for f in files[:3])
            more = f" and {len(files) - 3} more" if len(files) > 3 else ""
            models = sorted({f.model for f in files})
            parts.append(f"staged {new} requests (round {files[0].round}) in {names}{more}")
            if waiting:
                parts.append(f"{waiting} staged earlier still await results")
            parts.append(f"next: `golden batch submit {where}` (OpenAI Batch API), or "
                         f"`vllm run-batch -i FILE -o FILE.results.jsonl --model {models[0]}` "
                         f"per file; then `golden batch import` the results and run this "
                         "command again")
        else:
            shown = ", ".join(str(where / Path(f).name) for f in sorted(self.awaiting)[:3])
            parts.append(f"nothing new to stage: {waiting} requests staged earlier await their "
                         f"results ({shown}); `golden batch fetch {where}` or run them, "
                         "`golden batch import` the results, then run this command again")
        return JobStopped("; ".join(parts))

    def finish_complete(self) -> None:
        """Nothing was deferred: the job finished and its writes are committed. Failures it
        was given are forgotten (a later run asks again), and the folder's manifest says the
        job finished."""
        for key in sorted(self.served_failures):
            batch_store.forget_chain(self.store, key)
        if (self.batch_dir / manifest_mod.NAME).exists():
            manifest = manifest_mod.load(self.batch_dir)
            manifest.finished[self.job] = utcnow()
            manifest_mod.save(self.batch_dir, manifest)

    def discard(self) -> None:
        if self._writer is not None:
            self._writer.discard()


@contextlib.contextmanager
def staged_pass(store: Store, client: BatchClient) -> Iterator[BatchClient]:
    """Run a job's pass inside one transaction (see the module doc): rolled back when it
    staged requests (then JobStopped names the files and the next command), committed when
    it found every reply cached (the job is done, exactly as a live run)."""
    try:
        with store.write():
            yield client
            stop_if_deferred(client)
    except CallsDeferred:
        pass
    except BaseException:
        client.discard()
        raise
    else:
        client.finish_complete()
        return
    raise client.finish_staged()


# ------------------------------------------------------------------------ request files

def _slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._-")[:60] or "model"


@dataclass
class _Part:
    name: str
    model: str
    tmp: Path
    handle: Any
    lines: int = 0
    bytes: int = 0
    sha: Any = field(default_factory=hashlib.sha256)
    stages: Counter = field(default_factory=Counter)


class RequestWriter:
    """The request files of one pass: one series per model (a batch asks one model), a new
    file at MAX_LINES lines or MAX_BYTES bytes (the Batch API's limits). Written to temporary
    names; `commit` records the requests, lists the files in the manifest and renames them, in
    that order, so a crash at any point leaves either nothing or requests a later pass can
    stage again (a request recorded in a file that is not there is staged anew)."""

    def __init__(self, batch_dir: Path, job: str):
        if batch_dir.exists() and not batch_dir.is_dir():
            raise InputError("--batch names a file, not a folder", path=str(batch_dir))
        self.dir = batch_dir
        self.job = job
        self._parts: list[_Part] = []
        self._current: dict[str, _Part] = {}
        self._count: Counter[str] = Counter()
        self._rows_path = batch_dir / f"{TEMP_PREFIX}{os.getpid()}-rows.jsonl"
        self._forget: list[str] = []
        with self._writing():
            batch_dir.mkdir(parents=True, exist_ok=True)
            for stale in batch_dir.glob(f"{TEMP_PREFIX}*"):  # a pass that was killed
                stale.unlink(missing_ok=True)
            self.round = manifest_mod.load(batch_dir, required=False).rounds + 1
            self._rows = open(self._rows_path, "w", encoding="utf-8")

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """An OS error while the folder's files are written (a full disk, a read-only
        folder) is about the folder, not the database: a JobError naming it, with the
        temporary files deleted, so nothing is staged and the same command can run again."""
        try:
            yield
        except OSError as exc:
            self.discard()
            raise JobError(f"{exc.strerror or exc} (writing the batch request files; nothing "
                           "was staged: run the command again once it can be written)",
                           path=str(self.dir)) from exc

    def forget(self, cache_key: str) -> None:
        self._forget.append(cache_key)

    def add(self, custom_id: str, model: str, stage: str, body: dict[str, Any],
            row: dict[str, Any]) -> None:
        data = request_line(custom_id, body)
        with self._writing():
            part = self._current.get(model)
            if part is None or part.lines >= MAX_LINES or part.bytes + len(data) > MAX_BYTES:
                part = self._new_part(model)
            part.handle.write(data)
            part.lines += 1
            part.bytes += len(data)
            part.sha.update(data)
            part.stages[stage] += 1
            row["file"] = str(self.dir / part.name)
            row["batch_dir"] = str(self.dir)
            self._rows.write(json.dumps(row, ensure_ascii=False))
            self._rows.write("\n")

    def _new_part(self, model: str) -> _Part:
        self._count[model] += 1
        name = f"requests-r{self.round:03d}-{_slug(model)}-{self._count[model]}.jsonl"
        tmp = self.dir / f"{TEMP_PREFIX}{os.getpid()}-{name}"
        part = _Part(name=name, model=model, tmp=tmp, handle=open(tmp, "wb"))
        self._parts.append(part)
        self._current[model] = part
        return part

    def _close(self) -> None:
        for part in self._parts:
            if not part.handle.closed:
                part.handle.flush()
                os.fsync(part.handle.fileno())
                part.handle.close()
        if not self._rows.closed:
            self._rows.close()

    def _rows_iter(self) -> Iterator[dict[str, Any]]:
        with open(self._rows_path, encoding="utf-8") as handle:
            for text in handle:
                yield json.loads(text)

    def commit(self, store: Store) -> list[manifest_mod.RequestFile]:
        try:
            with self._writing():
                self._close()
            for key in self._forget:
                batch_store.forget_chain(store, key)
            batch_store.record_staged(store, self._rows_iter())
            manifest = manifest_mod.load(self.dir, required=False)
            now = utcnow()
            entries = [manifest_mod.RequestFile(
                name=p.name, round=self.round, job=self.job, model=p.model, lines=p.lines,
                bytes=p.bytes, sha256=p.sha.hexdigest(), stages=dict(p.stages), created_at=now)
                for p in self._parts]
            with self._writing():
                if entries:
                    manifest.rounds = self.round
                    manifest.files.extend(entries)
                    manifest.finished.pop(self.job, None)
                    manifest_mod.save(self.dir, manifest)
                for part in self._parts:
                    os.replace(part.tmp, self.dir / part.name)
            return entries
        finally:
            self.discard()

    def discard(self) -> None:
        """Close and delete whatever temporary files are left, even when closing fails (a
        full disk makes the last flush fail: the files are deleted all the same)."""
        handles = [p.handle for p in self._parts] + [getattr(self, "_rows", None)]
        for handle in handles:
            if handle is not None and not handle.closed:
                with contextlib.suppress(OSError):
                    handle.close()  # closes the file even when its last flush fails
        for part in self._parts:
            with contextlib.suppress(OSError):
                part.tmp.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self._rows_path.unlink(missing_ok=True)
