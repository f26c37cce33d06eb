"""A fault-injecting OpenAI-compatible endpoint on 127.0.0.1, for the reliability tests.

`StubEndpoint` serves `POST /v1/chat/completions` from a thread (stdlib `ThreadingHTTPServer`,
HTTP/1.1 keep-alive, one thread per connection). It recognises which prompt a request was
rendered from (it matches the messages against the templates in `prompts/`, so it also reads
the variables back) and answers with the scripted "ideal" model of
`tests/support/scripted_kb.py`, so `golden generate` pointed at it produces valid structured
replies. On top of that it injects faults at set rates:

    429       HTTP 429 with a Retry-After header
    500       HTTP 500 with an OpenAI-style error body
    timeout   no reply until `timeout_sleep` seconds have passed (set it past the client's
              --timeout), then the connection is closed
    reset     the request is read, then the TCP connection is reset (SO_LINGER 0)
    partial   200 headers and half the body, then the connection is reset
    stall     200 headers and half the body, then nothing until `timeout_sleep` has passed
    trickle   200 headers, then the body one byte every `trickle_every` seconds (0.5), never
              idle long enough for a per-read timeout; the connection is closed after
              `trickle_for` seconds (60) so a client without an overall deadline still ends
    not_json  200 with an HTML body (a proxy's error page)
    bad_json  200, content that holds no JSON object
    bad_schema 200, a JSON object that fails every generation output model
    truncated 200, finish_reason "length" and the first half of the reply
    empty     200, empty content
    refusal   200, `message.refusal` set and no content

Which fault a request gets is a pure function of (seed, request body, how many times this body
was seen before), so a run is reproducible whatever order concurrent requests arrive in. The
first `clean_first` requests are never faulted (the client picks its response-format mode on
the first replies; a 500 then would mean "format unsupported", not a server fault).

Every request is recorded in `log` (a `Hit` each): prompt name, whether it was the client's
repair round, max_tokens, the fault injected, and -- when `watch_db` is set -- whether the
database already held a committed 'ok' llm_calls row for exactly these messages when the
request arrived (`already_cached`): a request for work already answered and committed, i.e. a
repeated call the cache should have served.

The same server is a stand-in for the OpenAI Batch API (`BatchAPI`): `POST /v1/files`
(multipart upload, purpose "batch"), `GET /v1/files/{id}` and `/content`, `POST /v1/batches`,
`GET /v1/batches/{id}` and `GET /v1/batches` (a cursor page). A batch runs every line of its
input file through the same scripted model and faults as the chat endpoint (`run_batch`) and
reports "in_progress" for `batch_polls` retrievals before it is "completed" (or `batch_status`
when set: "expired", "failed"...). Its output file is shuffled (OpenAI does not promise an
order); lines that did not run go to the error file. `run_batch(lines, shape="vllm")` writes
what `vllm run-batch` writes instead: one file, input order, `error` a string or an object.

No network beyond the loopback interface; the server stops with `stop()` / the context manager.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import socket
import sqlite3
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from builder.generate.context import PROMPT_NAMES
from builder.llm.prompts import load_prompt

FAULTS = ("429", "500", "timeout", "reset", "partial", "stall", "bad_json", "bad_schema",
          "truncated", "empty", "refusal", "not_json", "trickle")
# The client retries these; "not_json" (a 200 whose body is not JSON, e.g. a proxy's HTML
# page) is not retried within the call: it ends the call as 'error' at once.
TRANSPORT_FAULTS = ("429", "500", "timeout", "reset", "partial", "stall", "trickle")
# Fails FactsOutput, QuestionsOutput, EvolvedQuestion and the three verdict models alike.
BAD_SCHEMA = {"facts": "x", "questions": 5, "question": 7, "answerable": "maybe",
              "answered": "maybe", "items": "x"}
_REPAIR_START = "Your reply could not be used"


# ---------------------------------------------------------------- recognising prompts

class PromptMatcher:
    """Which prompt (and which variable values) produced a list of chat messages.

    Each prompt's system and user templates become regexes (`{{var}}` -> a lazy group); the
    system message may carry the client's format instructions after the template.
    """

    def __init__(self, names: tuple[str, ...] = PROMPT_NAMES, prompts_dir: str | None = None):
        self._patterns = []
        for name in names:
            prompt = load_prompt(name, prompts_dir)
            parts = dict(prompt.sections)
            self._patterns.append((name, _template_regex(parts.get("system", ""), suffix=True),
                                   _template_regex(parts.get("user", ""))))

    def match(self, messages: list[dict]) -> tuple[str, dict[str, str]] | None:
        system = next((m["content"] for m in messages if m.get("role") == "system"), "")
        user = next((m["content"] for m in messages if m.get("role") == "user"), "")
        for name, sys_re, user_re in self._patterns:
            ms, mu = sys_re.fullmatch(system), user_re.fullmatch(user)
            if ms and mu:
                return name, {**ms.groupdict(), **mu.groupdict()}
        return None


def _template_regex(template: str, suffix: bool = False) -> re.Pattern:
    out, seen, pos = [], set(), 0
    for m in re.finditer(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", template):
        out.append(re.escape(template[pos:m.start()]))
        name = m.group(1)
        out.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
        seen.add(name)
        pos = m.end()
    out.append(re.escape(template[pos:]))
    if suffix:
        out.append(r"(?:\n\n.*)?")
    return re.compile("".join(out), re.DOTALL)


def ideal_reply(name: str, variables: Mapping[str, str]) -> dict:
    """The scripted ideal model of the generation tests (one place for that logic)."""
    from tests.support.scripted_kb import ideal

    return ideal(name, variables, "generator")


# ---------------------------------------------------------------- the log

@dataclass
class Hit:
    """One HTTP request as the stub saw it."""

    seq: int
    at: float                  # time.time() on arrival
    tag: str                   # `StubEndpoint.tag` at arrival (e.g. which run of the test)
    prompt: str | None         # recognised prompt name (None: not recognised)
    repair: bool               # the client's repair round (last message is the repair prompt)
    max_tokens: int | None
    body_hash: str             # sha256 of the canonical request body
    messages_json: str         # the messages as the client stores them in llm_calls.messages
    fault: str                 # "ok" or one of FAULTS
    call_key: str = ""         # the call's own messages (a repair round's minus its last two)
    already_cached: bool = False


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def expected_statuses(hits: list[Hit], max_retries: int) -> tuple[Counter, Counter]:
    """The llm_calls statuses the client must record for these requests, by replaying its
    documented policy (builder/llm/client.py) over what the stub did, call by call:

    - 429 / 500 / timeout / reset / partial / stall are retried: a call ends 'error' only
      after `max_retries + 1` of them in a row within one send (a 429 then a success is a
      retry, not a failure); not_json ends it as 'error' at once;
    - bad_json / bad_schema get one repair round: 'invalid' when the repair reply is bad too;
    - truncated gets one retry with twice the room: 'truncated' when that is cut off too;
    - empty -> 'empty', refusal -> 'refusal' at once; a good reply -> 'ok'.

    Requests are grouped into calls by their own messages (repair rounds and the larger retry
    carry the same ones); calls with equal messages are assumed not to overlap in time.
    Returns (statuses, retried): `retried` counts, per transport fault, the requests that
    the client must have retried (each one back-off sleep; a 429's sleep is its Retry-After).
    """
    statuses: Counter = Counter()
    retried: Counter = Counter()
    by_call: dict[str, list[Hit]] = {}
    for hit in sorted(hits, key=lambda h: h.seq):
        by_call.setdefault(hit.call_key, []).append(hit)
    for seq in by_call.values():
        failures_in_send = 0
        repaired = enlarged = False
        for hit in seq:
            if hit.fault in TRANSPORT_FAULTS:
                failures_in_send += 1
                if failures_in_send > max_retries:
                    statuses["error"] += 1
                    failures_in_send, repaired, enlarged = 0, False, False
                else:
                    retried[hit.fault] += 1
                continue
            failures_in_send = 0
            end = None
            if hit.fault == "ok":
                end = "ok"
            elif hit.fault == "not_json":
                end = "error"
            elif hit.fault in ("empty", "refusal"):
                end = hit.fault
            elif hit.fault == "truncated":
                if enlarged:
                    end = "truncated"
                enlarged = True
            elif hit.fault in ("bad_json", "bad_schema"):
                if repaired:
                    end = "invalid"
                repaired = True
            if end is not None:
                statuses[end] += 1
                repaired = enlarged = False
    return statuses, retried


# ---------------------------------------------------------------- the server

class StubEndpoint:
    """See the module docstring. Use as a context manager; `url` is the base URL (…/v1)."""

    def __init__(self, respond: Callable[[str, Mapping[str, str]], dict] = ideal_reply, *,
                 faults: Mapping[str, float] | None = None, seed: int = 0,
                 latency: tuple[float, float] = (0.0, 0.0), clean_first: int = 10,
                 timeout_sleep: float = 2.0, retry_after: str = "1",
                 trickle_every: float = 0.5, trickle_for: float = 60.0,
                 watch_db: str | None = None,
                 fault_for: Callable[[Hit], str | None] | None = None,
                 prompts: tuple[str, ...] = PROMPT_NAMES):
        unknown = set(faults or {}) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}")
        if sum((faults or {}).values()) > 1:
            raise ValueError("fault rates add up to more than 1")
        self.respond = respond
        self.faults = dict(faults or {})
        self.seed = seed
        self.latency = latency
        self.clean_first = clean_first
        self.timeout_sleep = timeout_sleep
        self.trickle_every = trickle_every
        self.trickle_for = trickle_for
        self.retry_after = retry_after
        self.watch_db = watch_db
        self.fault_for = fault_for
        self.tag = ""
        self.log: list[Hit] = []
        self.chat_requests = 0  # POSTs to /chat/completions (batch runs not counted)
        self.batch_api = BatchAPI(self)
        self.matcher = PromptMatcher(prompts)
        self._lock = threading.Lock()
        self._seen: Counter[str] = Counter()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> str:
        stub = self

        class Handler(_Handler):
            endpoint = stub

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True,
                                        name="stub-endpoint")
        self._thread.start()
        return self.url

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "StubEndpoint":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- summaries -----------------------------------------------------------------------------

    def hits(self, tag: str | None = None) -> list[Hit]:
        with self._lock:
            return [h for h in self.log if tag is None or h.tag == tag]

    def injected(self, tag: str | None = None) -> Counter:
        """How many requests got each fault ("ok" for none)."""
        return Counter(h.fault for h in self.hits(tag))

    def last_prompt(self) -> str | None:
        with self._lock:
            return self.log[-1].prompt if self.log else None

    # -- deciding ----------------------------------------------------------------------------

    def _register(self, body: dict) -> Hit:
        messages = body.get("messages") or []
        body_hash = hashlib.sha256(_canonical(body).encode()).hexdigest()
        repair = bool(messages) and messages[-1].get("role") == "user" and \
            str(messages[-1].get("content", "")).startswith(_REPAIR_START)
        found = self.matcher.match(messages[:2] if repair else messages)
        with self._lock:
            seq = len(self.log)
            nth = self._seen[body_hash]
            self._seen[body_hash] += 1
            hit = Hit(seq=seq, at=time.time(), tag=self.tag, prompt=found[0] if found else None,
                      repair=repair, max_tokens=body.get("max_tokens"), body_hash=body_hash,
                      messages_json=json.dumps(messages, ensure_ascii=False), fault="ok",
                      call_key=_canonical(messages[:-2] if repair else messages))
            hit.fault = self._choose(hit, nth)
            if self.watch_db and not repair:
                hit.already_cached = self._cached(hit.messages_json)
            self.log.append(hit)
        return hit

    def _choose(self, hit: Hit, nth: int) -> str:
        if self.fault_for is not None:
            forced = self.fault_for(hit)
            if forced is not None:
                return forced
        if hit.seq < self.clean_first or not self.faults:
            return "ok"
        draw = random.Random(f"{self.seed}:{hit.body_hash}:{nth}").random()
        edge = 0.0
        for name in FAULTS:
            edge += self.faults.get(name, 0.0)
            if draw < edge:
                return name
        return "ok"

    def _cached(self, messages_json: str) -> bool:
        try:
            conn = sqlite3.connect(f"file:{self.watch_db}?mode=ro", uri=True, timeout=30)
        except sqlite3.Error:
            return False
        try:
            row = conn.execute("SELECT 1 FROM llm_calls WHERE status = 'ok' AND messages = ?"
                               " LIMIT 1", (messages_json,)).fetchone()
            return row is not None
        except sqlite3.Error:  # no table yet
            return False
        finally:
            conn.close()

    def completion(self, body: dict, hit: Hit) -> dict | None:
        """The chat.completion the scripted model gives for `body` under `hit.fault` (one of
        the reply faults, or "ok"); None when the messages match no prompt."""
        if hit.prompt is None:
            return None
        variables = self.matcher.match(body["messages"][:2])[1]
        content: str | None = json.dumps(self.respond(hit.prompt, variables), ensure_ascii=False)
        finish, refusal, fault = "stop", None, hit.fault
        if fault == "bad_json":
            content = "Here you go: {facts: [unquoted, broken"
        elif fault == "bad_schema":
            content = json.dumps(BAD_SCHEMA)
        elif fault == "truncated":
            content, finish = content[: len(content) // 2], "length"
        elif fault == "empty":
            content = ""
        elif fault == "refusal":
            content, refusal = None, "I can't help with that request."
        return {
            "id": f"stub-{hit.seq}", "object": "chat.completion", "created": int(hit.at),
            "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content,
                                     "refusal": refusal}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }

    def run_batch(self, lines: list[str], *, shape: str = "openai") -> tuple[list[dict], list[dict]]:
        """Run request lines (OpenAI Batch API input) through the scripted model and faults:
        (output lines, error lines) as the Batch API writes them (output shuffled), or, with
        shape "vllm", all lines in input order in the first list as `vllm run-batch` writes
        them (a failed request: `error` a string, or an ErrorResponse object for a 5xx)."""
        outputs: list[dict] = []
        errors: list[dict] = []
        for text in lines:
            if not text.strip():
                continue
            request = json.loads(text)
            body = request["body"]
            hit = self._register(body)
            n = hit.seq
            if hit.fault in TRANSPORT_FAULTS or hit.fault == "not_json":
                if shape == "vllm":
                    error = ("engine error: the request was aborted" if hit.fault != "500" else
                             {"error": {"message": "stub internal error", "type": "InternalServerError",
                                        "param": None, "code": 500}})
                    outputs.append({"id": f"vllm-{n}", "custom_id": request["custom_id"],
                                    "response": {"status_code": 500 if isinstance(error, dict) else 400,
                                                 "request_id": f"vllm-batch-{n}", "body": None},
                                    "error": error})
                else:
                    errors.append({"id": f"batch_req_{n}", "custom_id": request["custom_id"],
                                   "response": {"status_code": 500, "request_id": f"req_{n}",
                                                "body": {"error": {"message": "stub internal error",
                                                                   "type": "server_error"}}},
                                   "error": None})
                continue
            payload = self.completion(body, hit)
            if payload is None:
                line = {"id": f"batch_req_{n}", "custom_id": request["custom_id"],
                        "response": {"status_code": 400, "request_id": f"req_{n}",
                                     "body": {"error": {"message": "stub: unrecognised prompt",
                                                        "type": "invalid_request_error"}}},
                        "error": None}
                (outputs if shape == "vllm" else errors).append(line)
                continue
            prefix = "vllm-" if shape == "vllm" else "batch_req_"
            outputs.append({"id": f"{prefix}{n}", "custom_id": request["custom_id"],
                            "response": {"status_code": 200, "request_id": f"req_{n}",
                                         "body": payload},
                            "error": None})
        if shape != "vllm":
            random.Random(f"{self.seed}:order:{len(self.log)}").shuffle(outputs)
        return outputs, errors

    def _latency(self, hit: Hit) -> float:
        lo, hi = self.latency
        if hi <= 0:
            return 0.0
        return random.Random(f"{self.seed}:lat:{hit.seq}").uniform(lo, hi)


class BatchAPI:
    """The Batch API stand-in (see the module doc). State lives in memory; `uploads` and
    `batches_created` let tests count what the client did."""

    def __init__(self, stub: StubEndpoint):
        self.stub = stub
        self.files: dict[str, dict] = {}       # id -> {"meta": FileObject, "content": bytes}
        self.batches: dict[str, dict] = {}     # id -> Batch object
        self.polls: Counter[str] = Counter()
        self.batch_polls = 1                   # retrievals that still say "in_progress"
        self.batch_status: str | None = None   # force an end state ("expired", "failed")
        self.uploads = 0
        self.batches_created = 0
        self.fail_next: str | None = None      # "batches.create": answer it with HTTP 500
        self._lock = threading.Lock()

    # -- HTTP ------------------------------------------------------------------------------

    def post(self, handler: "_Handler", raw: bytes) -> None:
        path = handler.path.split("?")[0].rstrip("/")
        if path == "/v1/files":
            self._upload(handler, raw)
        elif path == "/v1/batches":
            self._create(handler, json.loads(raw or b"{}"))
        else:
            handler._send(404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}})

    def get(self, handler: "_Handler") -> None:
        path, _, query = handler.path.partition("?")
        parts = path.rstrip("/").split("/")[2:]   # after /v1
        with self._lock:
            if parts[:1] == ["files"] and len(parts) == 2 and parts[1] in self.files:
                handler._send(200, self.files[parts[1]]["meta"])
            elif parts[:1] == ["files"] and len(parts) == 3 and parts[2] == "content" \
                    and parts[1] in self.files:
                handler._send(200, None, raw=self.files[parts[1]]["content"],
                              content_type="application/octet-stream")
            elif parts == ["batches"]:
                data = sorted(self.batches.values(), key=lambda b: b["created_at"], reverse=True)
                handler._send(200, {"object": "list", "data": data, "has_more": False,
                                    "first_id": data[0]["id"] if data else None,
                                    "last_id": data[-1]["id"] if data else None})
            elif parts[:1] == ["batches"] and len(parts) == 2 and parts[1] in self.batches:
                handler._send(200, self._retrieve(parts[1]))
            else:
                handler._send(404, {"error": {"message": f"no such object {path}",
                                              "type": "invalid_request_error"}})

    # -- files -------------------------------------------------------------------------------

    def _upload(self, handler: "_Handler", raw: bytes) -> None:
        from email.parser import BytesParser
        from email.policy import HTTP

        ctype = handler.headers.get("content-type", "")
        message = BytesParser(policy=HTTP).parsebytes(
            f"Content-Type: {ctype}\r\n\r\n".encode() + raw)
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[name] = (part.get_filename(), part.get_payload(decode=True))
        if "file" not in fields or fields.get("purpose", (None, b""))[1] != b"batch":
            handler._send(400, {"error": {"message": "upload a file with purpose 'batch'",
                                          "type": "invalid_request_error"}})
            return
        filename, content = fields["file"]
        with self._lock:
            self.uploads += 1
            file_id = f"file-{len(self.files) + 1}"
            meta = {"id": file_id, "object": "file", "bytes": len(content),
                    "created_at": int(time.time()), "filename": filename or "upload.jsonl",
                    "purpose": "batch", "status": "processed"}
            self.files[file_id] = {"meta": meta, "content": content}
        handler._send(200, meta)

    def _add_file(self, name: str, lines: list[dict]) -> str:
        content = b"".join(json.dumps(x, ensure_ascii=False).encode() + b"\n" for x in lines)
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = {"meta": {"id": file_id, "object": "file", "bytes": len(content),
                                        "created_at": int(time.time()), "filename": name,
                                        "purpose": "batch_output", "status": "processed"},
                               "content": content}
        return file_id

    # -- batches -----------------------------------------------------------------------------

    def _create(self, handler: "_Handler", body: dict) -> None:
        with self._lock:
            if self.fail_next == "batches.create":
                self.fail_next = None
                handler._send(500, {"error": {"message": "stub: batch not created",
                                              "type": "server_error"}})
                return
            source = self.files.get(body.get("input_file_id"))
            if source is None or body.get("endpoint") != "/v1/chat/completions" \
                    or body.get("completion_window") != "24h":
                handler._send(400, {"error": {"message": "bad batch request",
                                              "type": "invalid_request_error"}})
                return
            self.batches_created += 1
            batch_id = f"batch_{len(self.batches) + 1}"
            lines = source["content"].decode("utf-8").splitlines()
            models = {json.loads(x)["body"].get("model") for x in lines if x.strip()}
            if len(models) > 1:  # as OpenAI: one model per batch
                handler._send(400, {"error": {"message": f"a batch asks one model, got {sorted(models)}",
                                              "type": "invalid_request_error"}})
                return
            self.batches[batch_id] = {
                "id": batch_id, "object": "batch", "endpoint": body["endpoint"],
                "input_file_id": body["input_file_id"], "completion_window": "24h",
                "status": "validating", "created_at": int(time.time()) * 1000 + len(self.batches),
                "metadata": body.get("metadata"), "output_file_id": None, "error_file_id": None,
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                "_lines": lines,
            }
            shown = {k: v for k, v in self.batches[batch_id].items() if not k.startswith("_")}
        handler._send(200, shown)

    def _retrieve(self, batch_id: str) -> dict:
        batch = self.batches[batch_id]
        self.polls[batch_id] += 1
        if batch["status"] in ("validating", "in_progress"):
            if self.polls[batch_id] <= self.batch_polls:
                batch["status"] = "in_progress"
            else:
                self._finish(batch)
        return {k: v for k, v in batch.items() if not k.startswith("_")}

    def _finish(self, batch: dict) -> None:
        end = self.batch_status or "completed"
        lines = batch["_lines"]
        if end == "failed":  # rejected as a whole: no output at all
            batch.update(status="failed", request_counts={"total": len(lines), "completed": 0,
                                                          "failed": 0})
            return
        if end == "expired":  # the first half ran; the rest expired
            ran, expired = lines[: len(lines) // 2], lines[len(lines) // 2:]
        else:
            ran, expired = lines, []
        outputs, errors = self.stub.run_batch(ran)
        for text in expired:
            errors.append({"id": f"batch_req_x{len(errors)}", "custom_id": json.loads(text)["custom_id"],
                           "response": None,
                           "error": {"code": "batch_expired",
                                     "message": "This request could not be executed before the "
                                                "completion window expired."}})
        batch["output_file_id"] = self._add_file(f"{batch['id']}_output.jsonl", outputs) if outputs else None
        batch["error_file_id"] = self._add_file(f"{batch['id']}_error.jsonl", errors) if errors else None
        batch["status"] = end
        batch["request_counts"] = {"total": len(lines), "completed": len(outputs),
                                   "failed": len(errors)}


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        pass  # a client that timed out, reset or was killed mid-request: expected here


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    endpoint: StubEndpoint

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        if self.path.startswith(("/v1/files", "/v1/batches")):
            self.endpoint.batch_api.post(self, raw)
            return
        body = json.loads(raw or b"{}")
        self.endpoint.chat_requests += 1
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        stub = self.endpoint
        hit = stub._register(body)
        delay = stub._latency(hit)
        if delay:
            time.sleep(delay)
        fault = hit.fault
        if fault == "429":
            self._send(429, {"error": {"message": "rate limited by the stub",
                                       "type": "rate_limit_error", "code": "rate_limit_exceeded"}},
                       headers={"Retry-After": stub.retry_after})
            return
        if fault == "500":
            self._send(500, {"error": {"message": "stub internal error", "type": "server_error"}})
            return
        if fault == "timeout":
            stub._stopping.wait(stub.timeout_sleep)
            self.close_connection = True
            return
        if fault == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        if fault == "not_json":
            self._send(200, None, raw=b"<html><body>502 Bad Gateway</body></html>",
                       content_type="text/html")
            return
        payload = stub.completion(body, hit)
        if payload is None:
            self._send(400, {"error": {"message": "stub: unrecognised prompt",
                                       "type": "invalid_request_error"}})
            return
        cut = fault if fault in ("partial", "stall", "trickle") else None
        self._send(200, payload, cut=cut)

    def do_GET(self) -> None:  # noqa: N802
        self.endpoint.batch_api.get(self)

    def _send(self, status: int, payload: dict | None, headers: dict | None = None, *,
              raw: bytes | None = None, content_type: str = "application/json",
              cut: str | None = None) -> None:
        data = raw if raw is not None else json.dumps(payload, ensure_ascii=False).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if cut is None:
                self.wfile.write(data)
                return
            if cut == "trickle":
                self._trickle(data)
                return
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            if cut == "stall":
                self.endpoint._stopping.wait(self.endpoint.timeout_sleep)
            else:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.connection.close()
            self.close_connection = True
        except OSError:  # the client gave up (timeout) or was killed
            self.close_connection = True

    def _trickle(self, data: bytes) -> None:
        """One byte of `data` every `trickle_every` seconds, for at most `trickle_for`."""
        stub = self.endpoint
        deadline = time.monotonic() + stub.trickle_for
        for k in range(len(data)):
            self.wfile.write(data[k:k + 1])
            self.wfile.flush()
            if stub._stopping.wait(stub.trickle_every) or time.monotonic() > deadline:
                break
        self.close_connection = True
