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
          "truncated", "empty", "refusal", "not_json")
# The client retries these; "not_json" (a 200 whose body is not JSON, e.g. a proxy's HTML
# page) is not retried within the call: it ends the call as 'error' at once.
TRANSPORT_FAULTS = ("429", "500", "timeout", "reset", "partial", "stall")
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
                 watch_db: str | None = None,
                 fault_for: Callable[[Hit], str | None] | None = None):
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
        self.retry_after = retry_after
        self.watch_db = watch_db
        self.fault_for = fault_for
        self.tag = ""
        self.log: list[Hit] = []
        self.matcher = PromptMatcher()
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

    def _latency(self, hit: Hit) -> float:
        lo, hi = self.latency
        if hi <= 0:
            return 0.0
        return random.Random(f"{self.seed}:lat:{hit.seq}").uniform(lo, hi)


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
        body = json.loads(self.rfile.read(length) or b"{}")
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
        if hit.prompt is None:
            self._send(400, {"error": {"message": "stub: unrecognised prompt",
                                       "type": "invalid_request_error"}})
            return
        name = hit.prompt
        variables = stub.matcher.match(body["messages"][:2])[1]
        content: str | None = json.dumps(stub.respond(name, variables), ensure_ascii=False)
        finish, refusal = "stop", None
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
        cut = fault if fault in ("partial", "stall") else None
        self._send(200, {
            "id": f"stub-{hit.seq}", "object": "chat.completion", "created": int(hit.at),
            "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content,
                                     "refusal": refusal}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }, cut=cut)

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
