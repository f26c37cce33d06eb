"""`OpenAIClient`: the one LLM client, over the openai SDK's AsyncOpenAI.

What a call to `structured()` guarantees:

- Cache first: an 'ok' row in `llm_calls` with the same key (endpoint, model, messages,
  parameters, output schema) is returned without any network call.
- At most `concurrency` requests in flight; our own retries (the SDK's are off, so each one is
  counted): exponential backoff with jitter on 429 (honouring Retry-After), 5xx, timeouts and
  connection errors, up to `max_retries`. `timeout` bounds each request as a whole, from
  sending it to the last byte of the reply (not only the wait between two bytes).
- Structured output ladder json_schema -> json_object -> text, walked once per endpoint+model
  and remembered (in memory and in the `meta` table).
- One repair round on a reply that does not validate; one retry with twice the room on a
  truncated reply (finish_reason "length"), never parsing a partial object.
- Failures are values: the call is logged with its status and reason and a failed LLMResult is
  returned, so one bad reply never ends a run. The exceptions are job-level problems --
  a rejected key (401/403), an unknown model (404), an exhausted quota, an endpoint unreachable
  for several calls in a row, or a spent `--budget` -- which raise JobError / BudgetExceeded.
- The API key is only handed to the SDK; it is scrubbed from everything stored or reported.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import hashlib
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx2
import openai
from pydantic import BaseModel, ValidationError

from builder.errors import InputError, JobError
from builder.llm.model_params import sampling_params
from builder.llm.prompts import Prompt, load_prompt
from builder.llm.settings import LLMSettings
from builder.llm.structured import MODES, cache_schema, read_reply, response_format, schema_text
from builder.llm.types import BudgetExceeded, LLMResult
from builder.store import llm_calls
from builder.store.db import Store

T = TypeVar("T", bound=BaseModel)

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0
RETRY_AFTER_CAP_S = 120.0
UNREACHABLE_CALLS = 3          # calls in a row that could not connect (after retries) -> JobError
DRY_RUN_COMPLETION_TOKENS = 300  # assumed reply size for --dry-run estimates
FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|schema|strict|structured",
                           re.IGNORECASE)


def cache_key(endpoint: str, model: str, messages: list[dict], params: Mapping[str, Any],
              schema: Mapping[str, Any]) -> str:
    """sha256 over a canonical JSON of everything that determines the reply."""
    blob = json.dumps({"endpoint": endpoint, "model": model, "messages": messages,
                       "params": dict(params), "schema": schema},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def safe_url(url: str) -> str:
    """The URL without user info, query or fragment (where proxies sometimes carry secrets)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass
class _Reply:
    """One request after our retries: a completion, or why there is none."""

    completion: dict | None = None  # the decoded chat.completion body
    raw: str | None = None
    kind: str = "ok"           # ok | format | unreachable | timeout | error | fatal
    reason: str | None = None
    attempts: int = 0
    fatal: JobError | None = None


@dataclass
class _Outcome:
    status: str
    value: BaseModel | None = None
    parsed: dict | None = None
    error: str | None = None
    raw: str | None = None
    mode: str | None = None
    max_tokens: int | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 0
    fatal: JobError | None = None


class OpenAIClient:
    """Implements `builder.llm.types.LLM` against any OpenAI-compatible endpoint.

    One instance per job. Not thread-safe; safe for many concurrent tasks on one event loop.
    If the caller runs several event loops in turn (several `asyncio.run`), the SDK client and
    the semaphore are rebuilt for each loop.
    """

    batch = False  # priced at the standard rates; `BatchClient` (llm/batch/) prices at batch rates

    def __init__(self, store: Store, settings: LLMSettings, *, job: str, local: bool = False,
                 http_client_factory: Callable[[], Any] | None = None,
                 progress: Callable[[str], None] | None = None,
                 sleep: Callable[[float], Any] | None = None):
        if not settings.base_url and not settings.dry_run and not self.batch:
            raise InputError("no LLM endpoint: pass --base-url or let golden run the local model")
        self.store = store
        self.settings = settings
        self.job = job
        self.local = local
        self.dry_run = settings.dry_run
        self.endpoint = "local" if local else safe_url(settings.base_url or "") or "batch"
        self._api_key = settings.api_key.get_secret_value() if settings.api_key else None
        self._http_client_factory = http_client_factory
        self._progress = progress or (lambda m: print(f"golden: {m}", file=sys.stderr))
        self._sleep = sleep or asyncio.sleep
        self.local_server = None  # set by open_llm when it runs the embedded server
        self._sdk: openai.AsyncOpenAI | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sem: asyncio.Semaphore | None = None
        self._inflight: dict[str, asyncio.Future] = {}
        self._modes = llm_calls.load_response_modes(store)
        self._confirmed = set(self._modes)
        self._format_prompt = load_prompt("llm_format")
        self._repair_prompt = load_prompt("llm_repair")
        self._fatal: JobError | None = None
        self._unreachable_streak = 0
        self._warned_price: set[str] = set()
        self._started = time.monotonic()
        self._stats = Counter()
        self._cost = 0.0
        self._failures: Counter[str] = Counter()
        self._errors: Counter[str] = Counter()
        if settings.budget_usd is not None and not local:
            unpriced = sorted(m for m in settings.configured_models() if settings.price_for(m) is None)
            if unpriced:
                raise InputError(f"--budget needs a price for {', '.join(unpriced)}: add "
                                 f'[prices."{unpriced[0]}"] input_per_mtok / output_per_mtok '
                                 "to golden.toml")

    # -- the LLM protocol -------------------------------------------------------------------

    def model_for(self, role: str = "generator", stage: str | None = None) -> str:
        model = self.settings.params_for(role, stage).model
        if not model:
            raise InputError("no model configured: pass --model or set GOLDEN_MODEL")
        return model

    async def structured(self, prompt: Prompt, variables: Mapping[str, Any], output: type[T], *,
                         stage: str | None = None, role: str = "generator") -> LLMResult[T]:
        if self._fatal is not None:
            raise self._fatal
        stage = stage or prompt.name
        params = self.settings.params_for(role, stage, prompt.max_tokens)
        model = self.model_for(role, stage)
        messages = prompt.render(dict(variables))
        call_params = {"temperature": params.temperature, "max_tokens": params.max_tokens}
        key = cache_key(self.endpoint, model, messages, call_params, cache_schema(output))
        self._stats["calls"] += 1

        hit = llm_calls.find_cached(self.store, key)
        if hit is not None:
            try:
                value = output.model_validate(hit["parsed"])
            except ValidationError:
                pass  # the model changed shape since; ask again
            else:
                self._stats["cached"] += 1
                usage = {"prompt_tokens": hit["prompt_tokens"] or 0,
                         "completion_tokens": hit["completion_tokens"] or 0}
                return LLMResult(value, "ok", call_id=hit["id"], cached=True, model=model,
                                 usage=usage)

        if self.dry_run:
            return self._estimate(messages, output, model, params.max_tokens)

        # Single flight: an identical request already in flight (two candidates asking the same
        # question of the same passages) is awaited, not sent twice.
        while (flight := self._inflight.get(key)) is not None:
            try:
                shared = await asyncio.shield(flight)
            except asyncio.CancelledError:
                if flight.cancelled() and not asyncio.current_task().cancelling():
                    continue  # its sender stopped (budget, Ctrl-C, a fatal error): send it here
                raise
            self._stats["cached"] += 1
            return dataclasses.replace(shared, cached=True)
        flight = asyncio.get_running_loop().create_future()
        self._inflight[key] = flight
        try:
            result = await self._call_endpoint(prompt, messages, output, model, call_params,
                                               key, stage, role)
        except BaseException:
            flight.cancel()
            raise
        else:
            flight.set_result(result)
            return result
        finally:
            self._inflight.pop(key, None)

    async def _call_endpoint(self, prompt: Prompt, messages: list[dict], output: type[T],
                             model: str, call_params: dict, key: str, stage: str,
                             role: str) -> LLMResult[T]:
        """The network path of `structured`: one call, recorded in llm_calls."""
        self._check_budget()
        sdk, sem = self._sdk_for_loop()
        async with sem:
            if self._fatal is not None:
                raise self._fatal
            self._check_budget()
            started = time.monotonic()  # latency excludes the wait for a concurrency slot
            outcome = await self._complete(sdk, model, messages, call_params, output)
        latency_ms = (time.monotonic() - started) * 1000
        cost = self._cost_of(model, outcome.prompt_tokens, outcome.completion_tokens)
        self._account(outcome, cost)
        call_id = llm_calls.record_call(
            self.store, cache_key=key, job=self.job, stage=stage, prompt_name=prompt.name,
            prompt_version=prompt.version, base_url=self.endpoint, model=model,
            params={**call_params, "max_tokens_used": outcome.max_tokens, "role": role},
            messages=messages, schema_name=output.__name__, response_format=outcome.mode,
            raw_response=self._scrub(outcome.raw), parsed=outcome.parsed, status=outcome.status,
            error=self._scrub(outcome.error), prompt_tokens=outcome.prompt_tokens,
            completion_tokens=outcome.completion_tokens, latency_ms=round(latency_ms, 1),
            cost_usd=cost, attempts=outcome.attempts,
        )
        if outcome.fatal is not None:
            self._fatal = outcome.fatal
            raise outcome.fatal
        usage = {"prompt_tokens": outcome.prompt_tokens, "completion_tokens": outcome.completion_tokens}
        return LLMResult(outcome.value if outcome.status == "ok" else None, outcome.status,
                         error=self._scrub(outcome.error), call_id=call_id, model=model, usage=usage)

    def summary(self) -> dict[str, Any]:
        """Totals for the end-of-job table (this client's calls only)."""
        return {
            "calls": self._stats["calls"],
            "network_calls": self._stats["network_calls"],
            "cached": self._stats["cached"],
            "prompt_tokens": self._stats["prompt_tokens"],
            "completion_tokens": self._stats["completion_tokens"],
            "cost_usd": round(self._cost, 6),
            "seconds": round(time.monotonic() - self._started, 3),
            "failures": dict(self._failures),
            "top_errors": self._errors.most_common(5),
            "dry_run": self.dry_run,
        }

    def close(self) -> None:
        """Drop the SDK client (its connections close with it, or with the loop that ran it)."""
        self._sdk = None
        self._loop = None

    # -- one structured call ----------------------------------------------------------------

    async def _complete(self, sdk: openai.AsyncOpenAI, model: str, messages: list[dict],
                        call_params: dict, output: type[BaseModel]) -> _Outcome:
        endpoint_model = f"{self.endpoint}|{model}"
        mode = self._modes.get(endpoint_model, MODES[0])
        max_tokens = call_params["max_tokens"]
        convo = messages
        repaired = enlarged = False
        out = _Outcome(status="error")
        while True:
            out.mode, out.max_tokens = mode, max_tokens
            request = self._request(model, convo, mode, output, call_params["temperature"],
                                    max_tokens)
            reply = await self._send(sdk, request)
            out.attempts += reply.attempts
            if reply.completion is None:
                if (reply.kind == "format" and mode != MODES[-1]
                        and endpoint_model not in self._confirmed):
                    mode = MODES[MODES.index(mode) + 1]
                    self._modes[endpoint_model] = mode
                    continue
                out.status, out.error, out.fatal = "error", reply.reason, reply.fatal
                return out
            self._confirm_mode(endpoint_model, mode)
            data = reply.completion
            usage = data.get("usage") or {}
            out.prompt_tokens += usage.get("prompt_tokens") or 0
            out.completion_tokens += usage.get("completion_tokens") or 0
            out.raw = reply.raw
            reading = read_reply(data, output, enlarged=enlarged, repaired=repaired,
                                 max_tokens=max_tokens)
            if reading.status == "longer":
                enlarged, max_tokens = True, max_tokens * 2
                continue
            if reading.status == "repair":
                repaired = True
                convo = self._repair_convo(messages, reading.content, reading.error)
                continue
            out.status, out.value, out.parsed, out.error = (reading.status, reading.value,
                                                            reading.parsed, reading.error)
            return out

    def _repair_convo(self, messages: list[dict], content: str, problem: str) -> list[dict]:
        """The conversation of the one repair round: the call's messages, the reply that did
        not validate, and the repair prompt naming what was wrong."""
        return messages + [{"role": "assistant", "content": content}] \
            + self._repair_prompt.render({"error": problem})

    def _request(self, model: str, convo: list[dict], mode: str, output: type[BaseModel],
                 temperature: float, max_tokens: int) -> dict[str, Any]:
        messages = [dict(m) for m in convo]
        if mode != "json_schema":
            instructions = self._format_prompt.render({"schema": schema_text(output)})
            text = "\n\n".join(m["content"] for m in instructions)
            system = next((m for m in messages if m["role"] == "system"), None)
            if system is not None:
                system["content"] = f"{system['content']}\n\n{text}"
            else:
                messages.insert(0, {"role": "system", "content": text})
        request = {"model": model, "messages": messages,
                   **sampling_params(model, temperature, max_tokens)}
        fmt = response_format(mode, output)
        if fmt is not None:
            request["response_format"] = fmt
        return request

    async def _send(self, sdk: openai.AsyncOpenAI, request: dict[str, Any]) -> _Reply:
        """POST with our retry policy. Never raises for HTTP/network problems."""
        model = request["model"]
        has_format = "response_format" in request
        attempt = 0
        while True:
            attempt += 1
            self._stats["network_calls"] += 1
            delay: float | None = None
            try:
                # The generic `post` skips the SDK's per-call request transformation (~3-6 ms of
                # CPU per call at high concurrency); the body is plain JSON we built ourselves.
                # The SDK's timeout is its HTTP client's, per read: an endpoint that sends its
                # status and then a byte every half second restarts it with every byte and held
                # a run forever. `wait_for` is the call's overall deadline, reply body included.
                response = await asyncio.wait_for(
                    sdk.post("/chat/completions", body=request, cast_to=httpx2.Response),
                    self.settings.timeout)
            except openai.AuthenticationError:
                # The body may echo part of the key: not shown.
                return self._fatal_reply(attempt, "the endpoint rejected the API key (HTTP 401): "
                                         "check --api-key / OPENAI_API_KEY")
            except openai.PermissionDeniedError as exc:
                return self._fatal_reply(attempt, f"access denied to model {model!r} (HTTP 403): "
                                         f"{self._message(exc)}")
            except openai.NotFoundError:
                return self._fatal_reply(attempt, f"HTTP 404 from {self.endpoint}: model {model!r} "
                                         "not found, or the base URL is wrong (most need /v1 "
                                         "at the end); check --model / --base-url")
            except openai.RateLimitError as exc:
                self._unreachable_streak = 0
                if self._error_code(exc) == "insufficient_quota":
                    return self._fatal_reply(attempt, "the account's quota is exhausted (HTTP 429 "
                                             "insufficient_quota)")
                reason, retry, delay = "rate limited (HTTP 429)", True, _retry_after(exc.response)
                kind = "error"
            except (openai.APITimeoutError, TimeoutError):
                reason, retry, kind = f"timed out after {self.settings.timeout:g} s", True, "timeout"
            except openai.APIConnectionError:
                reason, retry, kind = f"cannot connect to {self.endpoint}", True, "unreachable"
            except openai.APIStatusError as exc:
                self._unreachable_streak = 0
                status, message = exc.status_code, self._message(exc)
                reason = f"HTTP {status}: {message}"
                about_format = has_format and bool(FORMAT_WORDS.search(message))
                unconfirmed_500 = (has_format and status == 500
                                   and f"{self.endpoint}|{model}" not in self._confirmed)
                if status in (400, 422) and about_format or unconfirmed_500:
                    return _Reply(kind="format", reason=reason, attempts=attempt)
                retry, kind = status >= 500 or status in (408, 409), "error"
            except openai.OpenAIError as exc:  # e.g. a 200 whose body is not a completion
                self._unreachable_streak = 0
                return _Reply(kind="error", reason=f"bad reply from the endpoint: {exc}",
                              attempts=attempt)
            else:
                self._unreachable_streak = 0
                try:
                    data = json.loads(response.content)
                except (ValueError, RecursionError):
                    data = None
                if not isinstance(data, dict):
                    return _Reply(kind="error", reason="bad reply from the endpoint: not a JSON "
                                  "object", attempts=attempt)
                return _Reply(completion=data, raw=response.text, attempts=attempt)
            if kind == "unreachable" and self.local_server is not None \
                    and (gone := self.local_server.exit_message()):
                return self._fatal_reply(attempt, gone)  # retrying cannot bring it back
            if retry and attempt <= self.settings.max_retries:
                await self._sleep(delay if delay is not None else _backoff(attempt))
                continue
            if kind == "unreachable":
                self._unreachable_streak += 1
                if self._unreachable_streak >= UNREACHABLE_CALLS:
                    return self._fatal_reply(attempt, f"cannot reach the LLM endpoint "
                                             f"{self.endpoint} ({self._unreachable_streak} calls "
                                             f"in a row failed after {attempt} attempts each): "
                                             "is the server running? check --base-url")
            if attempt > 1:
                reason = f"{reason} (after {attempt} attempts)"
            return _Reply(kind=kind, reason=reason, attempts=attempt)

    # -- helpers ----------------------------------------------------------------------------

    def _fatal_reply(self, attempts: int, message: str) -> _Reply:
        return _Reply(kind="fatal", reason=message, attempts=attempts, fatal=JobError(message))

    def _message(self, exc: openai.APIStatusError) -> str:
        body = exc.body
        message = body.get("message") if isinstance(body, dict) else None
        return self._scrub(str(message or exc.message))[:300]

    @staticmethod
    def _error_code(exc: openai.APIStatusError) -> str | None:
        body = exc.body
        return body.get("code") if isinstance(body, dict) else None

    def _confirm_mode(self, endpoint_model: str, mode: str) -> None:
        if endpoint_model in self._confirmed:
            return
        self._confirmed.add(endpoint_model)
        self._modes[endpoint_model] = mode
        llm_calls.save_response_mode(self.store, endpoint_model, mode)

    def _sdk_for_loop(self) -> tuple[openai.AsyncOpenAI, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._loop is not loop:
            http_client = self._http_client_factory() if self._http_client_factory else None
            self._sdk = openai.AsyncOpenAI(
                base_url=self.settings.base_url, api_key=self._api_key or "not-needed",
                max_retries=0, timeout=self.settings.timeout, http_client=http_client,
            )
            self._sem = asyncio.Semaphore(self.settings.concurrency)
            self._loop = loop
        return self._sdk, self._sem

    def _check_budget(self) -> None:
        """Raise BudgetExceeded once this run's spend reaches --budget.

        Checked before each request is sent, so calls already in flight still finish: the
        overshoot is at most `concurrency` calls. Cache hits are free and always served.
        """
        budget = self.settings.budget_usd
        if budget is not None and self._cost >= budget:
            raise BudgetExceeded(f"budget of ${budget:.2f} spent (${self._cost:.4f}); finished "
                                 "work is saved: run again with a higher --budget to resume")

    def _cost_of(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        if self.local:
            return 0.0
        price = self.settings.price_for(model)
        if price is None:
            if model not in self._warned_price:
                self._warned_price.add(model)
                self._progress(f"no price known for model {model!r}: its cost is not counted "
                               f'(add [prices."{model}"] to golden.toml)')
            return None
        return price.cost(prompt_tokens, completion_tokens, batch=self.batch)

    def _account(self, outcome: _Outcome, cost: float | None) -> None:
        self._stats["prompt_tokens"] += outcome.prompt_tokens
        self._stats["completion_tokens"] += outcome.completion_tokens
        self._cost += cost or 0.0
        if outcome.status != "ok":
            self._failures[outcome.status] += 1
            self._errors[self._scrub(outcome.error) or outcome.status] += 1

    def _estimate(self, messages: list[dict], output: type[BaseModel], model: str,
                  max_tokens: int) -> LLMResult:
        """--dry-run: count prompt tokens offline, assume a reply size, price it."""
        from builder.ingest.tokens import count_tokens

        prompt_tokens = sum(count_tokens(m["content"]) + 4 for m in messages)
        prompt_tokens += count_tokens(schema_text(output))
        completion_tokens = min(max_tokens, DRY_RUN_COMPLETION_TOKENS)
        self._stats["prompt_tokens"] += prompt_tokens
        self._stats["completion_tokens"] += completion_tokens
        self._cost += self._cost_of(model, prompt_tokens, completion_tokens) or 0.0
        return LLMResult(None, "dry_run", model=model,
                         usage={"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens})

    def _scrub(self, text: str | None) -> str | None:
        if text is None:
            return None
        key = self._api_key
        if key and len(key) >= 6:
            text = text.replace(key, "[redacted]")
        return text


def _backoff(attempt: int) -> float:
    """Exponential backoff with "equal jitter": half fixed, half random."""
    ceiling = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** (attempt - 1))
    return ceiling / 2 + random.uniform(0, ceiling / 2)


def _retry_after(response: Any) -> float | None:
    """Seconds to wait from `retry-after-ms` / `retry-after` (seconds or HTTP date), capped."""
    headers = getattr(response, "headers", None) or {}
    value = headers.get("retry-after-ms")
    try:
        if value is not None:
            return min(RETRY_AFTER_CAP_S, max(0.0, float(value) / 1000))
    except ValueError:
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return min(RETRY_AFTER_CAP_S, max(0.0, float(value)))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(RETRY_AFTER_CAP_S, max(0.0, when.timestamp() - time.time()))
