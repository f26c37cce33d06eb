"""The LLM client against scripted HTTP (httpx2.MockTransport): no network anywhere."""

from __future__ import annotations

import json

import httpx2
import pytest
from pydantic import BaseModel, SecretStr

from builder.errors import InputError, JobError
from builder.llm.client import OpenAIClient
from builder.llm.prompts import parse_prompt
from builder.llm.settings import LLMSettings, Price
from builder.llm.types import BudgetExceeded
from builder.store import Store

API_KEY = "sk-test-SECRET-0123456789abcdef"
PROMPT = parse_prompt(
    "name: facts\nversion: 2\n--- system\nExtract facts.\n--- user\nChunk:\n{{chunk}}\n", "facts.prompt")


class Facts(BaseModel):
    facts: list[str]


class Endpoint:
    """Scripted OpenAI-compatible endpoint: `replies` are consumed in order (the last repeats).

    A reply is an httpx2.Response, an exception to raise, or a callable(request_json) -> either.
    """

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests: list[dict] = []
        self.headers: list[dict] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if callable(reply) and not isinstance(reply, httpx2.Response):
            reply = reply(body)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def factory(self):
        return lambda: httpx2.AsyncClient(transport=httpx2.MockTransport(self))


def ok(content: str | None, finish: str = "stop", refusal: str | None = None,
       prompt_tokens: int = 100, completion_tokens: int = 20) -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "c1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": finish,
                     "message": {"role": "assistant", "content": content, "refusal": refusal}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


def error(status: int, message: str = "boom", headers: dict | None = None, code: str | None = None):
    return httpx2.Response(status, headers=headers or {},
                           json={"error": {"message": message, "type": "x", "code": code}})


GOOD = '{"facts": ["Paris is in France"]}'


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "g.db") as s:
        yield s


@pytest.fixture
def sleeps():
    return []


def make_client(store, endpoint, sleeps=None, **settings):
    defaults = {"base_url": "http://llm.test/v1", "api_key": SecretStr(API_KEY), "model": "gpt-4o-mini"}
    s = LLMSettings(**{**defaults, **settings})

    async def fake_sleep(seconds):
        if sleeps is not None:
            sleeps.append(seconds)

    return OpenAIClient(store, s, job="test", http_client_factory=endpoint.factory(),
                        sleep=fake_sleep, progress=lambda m: None)


async def ask(client, chunk="Paris is the capital of France.", **kw):
    return await client.structured(PROMPT, {"chunk": chunk}, Facts, **kw)


def rows(store):
    return store.query("SELECT * FROM llm_calls ORDER BY id")


# -- structured output ----------------------------------------------------------------------

async def test_ok_call_is_logged_with_everything(store):
    endpoint = Endpoint(ok(GOOD))
    client = make_client(store, endpoint)
    result = await ask(client)
    assert result.ok and result.value.facts == ["Paris is in France"]
    assert result.model == "gpt-4o-mini" and result.usage["prompt_tokens"] == 100
    req = endpoint.requests[0]
    assert req["max_tokens"] == 1024 and "max_completion_tokens" not in req
    assert req["response_format"]["type"] == "json_schema"
    assert req["response_format"]["json_schema"]["strict"] is True
    (row,) = rows(store)
    assert row["status"] == "ok" and row["stage"] == "facts" and row["prompt_name"] == "facts"
    assert row["prompt_version"] == "2" and row["model"] == "gpt-4o-mini"
    assert row["response_format"] == "json_schema" and row["attempts"] == 1
    assert json.loads(row["parsed"]) == {"facts": ["Paris is in France"]}
    assert json.loads(row["messages"])[1]["content"].endswith("Paris is the capital of France.")
    assert row["cost_usd"] == pytest.approx((100 * 0.15 + 20 * 0.60) / 1e6)
    assert row["latency_ms"] >= 0 and row["raw_response"]


async def test_ladder_falls_back_and_remembers_the_mode(store):
    def reply(body):
        fmt = (body.get("response_format") or {}).get("type")
        if fmt == "json_schema":
            return error(400, "response_format json_schema is not supported")
        if fmt == "json_object":
            return error(400, "Unknown response_format type json_object")
        return ok("Sure! Here it is:\n```json\n" + GOOD + "\n```\nHope that helps.")

    endpoint = Endpoint(reply)
    client = make_client(store, endpoint)
    result = await ask(client)
    assert result.ok
    assert [(r.get("response_format") or {}).get("type") for r in endpoint.requests] == \
        ["json_schema", "json_object", None]
    # the plain-text request carries the schema in the (first) system message
    assert "JSON schema" in endpoint.requests[2]["messages"][0]["content"]
    assert rows(store)[0]["response_format"] == "text"

    endpoint.requests.clear()
    assert (await ask(client, chunk="other")).ok
    assert len(endpoint.requests) == 1 and "response_format" not in endpoint.requests[0]

    # a new client (next job) reads the remembered mode from the database
    endpoint.requests.clear()
    again = make_client(store, endpoint)
    assert (await ask(again, chunk="third")).ok
    assert len(endpoint.requests) == 1


async def test_unconfirmed_500_on_json_schema_steps_down(store):
    endpoint = Endpoint(lambda b: error(500, "Internal Server Error")
                        if "schema" in json.dumps(b.get("response_format")) else ok(GOOD))
    result = await ask(make_client(store, endpoint))
    assert result.ok and endpoint.requests[-1]["response_format"] == {"type": "json_object"}


async def test_validation_error_is_retried_once_with_the_error_shown(store):
    endpoint = Endpoint(ok('{"facts": "not a list"}'), ok(GOOD))
    result = await ask(make_client(store, endpoint))
    assert result.ok
    repair = endpoint.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"facts": "not a list"}'}
    assert "facts" in repair[-1]["content"] and "valid list" in repair[-1]["content"]
    assert rows(store)[0]["attempts"] == 2


async def test_still_invalid_after_repair_is_recorded_not_raised(store):
    endpoint = Endpoint(ok('{"wrong": 1}'))
    result = await ask(make_client(store, endpoint))
    assert not result.ok and result.status == "invalid" and "facts" in result.error
    assert len(endpoint.requests) == 2
    assert rows(store)[0]["status"] == "invalid"


async def test_truncated_reply_retried_with_more_room_then_recorded(store):
    endpoint = Endpoint(ok('{"facts": ["Par', finish="length"))
    client = make_client(store, endpoint, max_tokens=50)
    result = await ask(client)
    assert result.status == "truncated" and result.value is None
    assert [r["max_tokens"] for r in endpoint.requests] == [50, 100]
    assert rows(store)[0]["parsed"] is None


async def test_truncation_then_success(store):
    endpoint = Endpoint(ok('{"facts": [', finish="length"), ok(GOOD))
    assert (await ask(make_client(store, endpoint))).ok


@pytest.mark.parametrize("reply", [
    ok(None, refusal="I can't help with that."),
    ok("I'm sorry, but I cannot help with this request."),
    ok("", finish="content_filter"),
])
async def test_refusals(store, reply):
    result = await ask(make_client(store, Endpoint(reply)))
    assert result.status == "refusal" and result.value is None


async def test_empty_reply(store):
    result = await ask(make_client(store, Endpoint(ok("  "))))
    assert result.status == "empty"
    assert rows(store)[0]["status"] == "empty"


# -- faults ---------------------------------------------------------------------------------

async def test_429_honours_retry_after(store, sleeps):
    endpoint = Endpoint(error(429, headers={"retry-after": "7"}),
                        error(429, headers={"retry-after-ms": "1500"}), ok(GOOD))
    client = make_client(store, endpoint, sleeps)
    assert (await ask(client)).ok
    assert sleeps == [7.0, 1.5]
    assert rows(store)[0]["attempts"] == 3
    assert client.summary()["network_calls"] == 3


async def test_5xx_backoff_grows_and_gives_up_at_the_cap(store, sleeps):
    endpoint = Endpoint(error(503, "overloaded"))
    client = make_client(store, endpoint, sleeps, max_retries=3)
    result = await ask(client)
    assert result.status == "error" and "HTTP 503" in result.error and "4 attempts" in result.error
    assert len(endpoint.requests) == 4 and len(sleeps) == 3
    assert 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0 and 1.0 <= sleeps[2] <= 2.0
    summary = client.summary()
    assert summary["failures"] == {"error": 1} and summary["top_errors"][0][1] == 1


async def test_timeout_then_success(store, sleeps):
    endpoint = Endpoint(httpx2.ReadTimeout("slow"), ok(GOOD))
    assert (await ask(make_client(store, endpoint, sleeps))).ok
    assert len(sleeps) == 1


async def test_timeouts_exhausted_fail_the_call_only(store, sleeps):
    endpoint = Endpoint(httpx2.ReadTimeout("slow"))
    client = make_client(store, endpoint, sleeps, max_retries=1, timeout=9)
    for _ in range(4):  # timeouts never end the job
        result = await ask(client)
        assert result.status == "error" and "timed out after 9 s" in result.error


async def test_connection_error_is_retried(store, sleeps):
    endpoint = Endpoint(httpx2.ConnectError("refused"), ok(GOOD))
    assert (await ask(make_client(store, endpoint, sleeps))).ok


async def test_unreachable_endpoint_ends_the_job(store, sleeps):
    endpoint = Endpoint(httpx2.ConnectError("refused"))
    client = make_client(store, endpoint, sleeps, max_retries=1)
    for _ in range(2):
        result = await ask(client)
        assert result.status == "error" and "cannot connect" in result.error
    with pytest.raises(JobError, match="cannot reach the LLM endpoint http://llm.test/v1"):
        await ask(client)
    with pytest.raises(JobError):  # and every later call stops at once
        await ask(client, chunk="later")
    assert len(rows(store)) == 3


@pytest.mark.parametrize("status,match", [
    (401, "rejected the API key"), (404, "model 'gpt-4o-mini' not found"),
])
async def test_auth_and_unknown_model_are_job_errors(store, status, match):
    endpoint = Endpoint(error(status, f"Incorrect API key provided: {API_KEY[:8]}...{API_KEY[-4:]}"))
    with pytest.raises(JobError, match=match):
        await ask(make_client(store, endpoint))
    assert len(endpoint.requests) == 1


async def test_insufficient_quota_is_not_retried(store, sleeps):
    endpoint = Endpoint(error(429, "You exceeded your quota", code="insufficient_quota"))
    with pytest.raises(JobError, match="quota"):
        await ask(make_client(store, endpoint, sleeps))
    assert sleeps == []


async def test_concurrency_limit_is_respected(store):
    import asyncio

    in_flight = peak = 0

    class Slow(httpx2.AsyncBaseTransport):
        async def handle_async_request(self, request):
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1
            return ok(GOOD)

    s = LLMSettings(base_url="http://llm.test/v1", model="m", concurrency=3)
    client = OpenAIClient(store, s, job="t", http_client_factory=lambda: httpx2.AsyncClient(transport=Slow()))
    results = await asyncio.gather(*(ask(client, chunk=f"c{i}") for i in range(12)))
    assert all(r.ok for r in results) and peak == 3


# -- cache, secrets, cost -------------------------------------------------------------------

async def test_cache_hit_makes_no_network_call(store):
    endpoint = Endpoint(ok(GOOD))
    first = await ask(make_client(store, endpoint))
    assert first.ok and not first.cached
    endpoint2 = Endpoint(error(500, "must not be called"))
    client = make_client(store, endpoint2)
    again = await ask(client)
    assert again.ok and again.cached and again.call_id == first.call_id
    assert again.value == first.value and endpoint2.requests == []
    summary = client.summary()
    assert summary["network_calls"] == 0 and summary["cached"] == 1 and summary["calls"] == 1


async def test_cache_key_depends_on_model_params_and_inputs(store):
    endpoint = Endpoint(ok(GOOD))
    await ask(make_client(store, endpoint))
    await ask(make_client(store, endpoint, temperature=0.7))
    await ask(make_client(store, endpoint, model="gpt-4o"))
    await ask(make_client(store, endpoint), chunk="different text")
    assert len(endpoint.requests) == 4


async def test_failed_calls_are_not_cached(store):
    endpoint = Endpoint(ok("  "), ok(GOOD))
    assert (await ask(make_client(store, endpoint))).status == "empty"
    assert (await ask(make_client(store, endpoint))).ok


async def test_api_key_never_reaches_the_database(store, tmp_path):
    def echo(body):  # an endpoint that echoes the key back in an error
        return error(400, f"bad request for key {API_KEY}")

    endpoint = Endpoint(error(401, f"Incorrect API key provided: {API_KEY}"))
    with pytest.raises(JobError) as info:
        await ask(make_client(store, endpoint))
    assert API_KEY not in str(info.value)
    await ask(make_client(store, Endpoint(echo), model="other"), chunk="x")
    await ask(make_client(store, Endpoint(ok(GOOD))), chunk="y")
    assert endpoint.headers[0]["authorization"] == f"Bearer {API_KEY}"  # it was sent...
    store.conn.execute("PRAGMA wal_checkpoint(FULL)")
    for path in tmp_path.glob("g.db*"):
        assert API_KEY.encode() not in path.read_bytes(), path  # ...but never stored
        assert b"Bearer" not in path.read_bytes()


async def test_budget_stops_the_job(store):
    endpoint = Endpoint(ok(GOOD, prompt_tokens=1_000_000, completion_tokens=0))
    client = make_client(store, endpoint, budget_usd=0.20)  # gpt-4o-mini: $0.15 per call here
    assert (await ask(client, chunk="a")).ok
    assert (await ask(client, chunk="b")).ok
    with pytest.raises(BudgetExceeded, match="budget of \\$0.20 spent"):
        await ask(client, chunk="c")
    assert len(endpoint.requests) == 2
    # cached work is still served after the budget is spent (resume)
    assert (await ask(client, chunk="a")).cached


def test_budget_without_a_price_is_refused(store):
    with pytest.raises(InputError, match='prices."my-model"'):
        make_client(store, Endpoint(ok(GOOD)), model="my-model", budget_usd=1.0)


async def test_configured_prices_and_prefix_match(store):
    endpoint = Endpoint(ok(GOOD, prompt_tokens=1000, completion_tokens=1000))
    prices = {"my-model": Price(input_per_mtok=1.0, output_per_mtok=2.0)}
    client = make_client(store, endpoint, model="my-model-2025-01", prices=prices)
    await ask(client)
    assert client.summary()["cost_usd"] == pytest.approx(0.003)


async def test_dry_run_estimates_without_network(store):
    endpoint = Endpoint(error(500, "must not be called"))
    client = make_client(store, endpoint, dry_run=True, max_tokens=200)
    result = await ask(client)
    assert result.status == "dry_run" and result.value is None
    assert endpoint.requests == [] and rows(store) == []
    summary = client.summary()
    assert summary["network_calls"] == 0 and summary["dry_run"] is True
    assert 20 < summary["prompt_tokens"] < 200 and summary["completion_tokens"] == 200
    assert summary["cost_usd"] > 0


async def test_stage_and_role_overrides_pick_the_model(store):
    from builder.llm.settings import CallParams

    endpoint = Endpoint(ok(GOOD))
    client = make_client(store, endpoint, roles={"judge": CallParams(model="gpt-4o")},
                         stages={"facts": CallParams(temperature=0.0, max_tokens=77)})
    await ask(client, role="judge")
    assert endpoint.requests[0]["model"] == "gpt-4o"
    assert endpoint.requests[0]["temperature"] == 0.0 and endpoint.requests[0]["max_tokens"] == 77
    assert client.model_for("judge") == "gpt-4o" and client.model_for("generator") == "gpt-4o-mini"


async def test_a_prompt_caps_its_own_reply_below_the_global_default(store):
    """A short-reply stage (`max_tokens:` in its header) asks for that much, and twice that once
    when cut off: a runaway reply ends long before the global 1024 tokens."""
    from builder.llm.settings import CallParams

    short = parse_prompt("name: facts\nversion: 3\nmax_tokens: 64\n--- system\nExtract facts.\n"
                         "--- user\n{{chunk}}\n", "facts.prompt")
    endpoint = Endpoint(ok('{"facts": ["C:\\\\"}llll', finish="length"))
    client = make_client(store, endpoint)
    result = await client.structured(short, {"chunk": "Paris"}, Facts)
    assert result.status == "truncated"
    assert [r["max_tokens"] for r in endpoint.requests] == [64, 128]
    # a setting for the stage or its role in golden.toml still wins; the global default does not
    for city, overrides in (("Rome", {"stages": {"facts": CallParams(max_tokens=500)}}),
                            ("Bern", {"roles": {"generator": CallParams(max_tokens=500)}})):
        endpoint = Endpoint(ok(GOOD))
        await make_client(store, endpoint, **overrides).structured(short, {"chunk": city}, Facts)
        assert endpoint.requests[0]["max_tokens"] == 500
    endpoint = Endpoint(ok(GOOD))
    await make_client(store, endpoint, max_tokens=4096).structured(short, {"chunk": "Oslo"}, Facts)
    assert endpoint.requests[0]["max_tokens"] == 64


async def test_client_survives_several_event_loops(store):
    import asyncio

    endpoint = Endpoint(ok(GOOD))
    client = make_client(store, endpoint)
    await ask(client, chunk="loop 1")
    # a second loop in a thread, as a command calling asyncio.run twice would
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        result = pool.submit(asyncio.run, ask(client, chunk="loop 2")).result()
    assert result.ok


def test_open_llm_needs_a_model_with_a_base_url(store):
    from builder.llm.setup import open_llm

    with pytest.raises(InputError, match="no model configured"):
        with open_llm(store, LLMSettings(base_url="http://llm.test/v1"), job="t"):
            pass


async def test_open_llm_yields_a_working_client(store):
    from builder.llm.setup import open_llm

    endpoint = Endpoint(ok(GOOD))
    settings = LLMSettings(base_url="http://llm.test/v1", model="gpt-4o-mini")
    with open_llm(store, settings, job="t", http_client_factory=endpoint.factory()) as llm:
        assert (await ask(llm)).ok and llm.local_server is None
        assert llm.summary()["network_calls"] == 1


async def test_a_dead_embedded_server_ends_the_job_at_once_saying_how_it_died(store, sleeps):
    """When golden's own llama.cpp server has died (a crash in llama.cpp, the OOM killer),
    retrying cannot bring it back: the first refused call ends the job, naming the signal."""
    class DeadServer:
        def exit_message(self):
            return "the local model server stopped (signal SIGSEGV) during the run: (no log)"

    client = make_client(store, Endpoint(httpx2.ConnectError("refused")), sleeps, max_retries=5)
    client.local_server = DeadServer()
    with pytest.raises(JobError, match="stopped \\(signal SIGSEGV\\)"):
        await ask(client)
    assert sleeps == []  # not one retry


def test_a_local_server_that_exited_says_which_signal(tmp_path):
    import subprocess

    from builder.llm.local_server import LocalServer

    server = LocalServer(tmp_path / "m.gguf", alias="local:m", progress=lambda m: None)
    assert server.exit_message() is None  # never started
    server.proc = subprocess.Popen(["sh", "-c", "kill -SEGV $$"])
    server.proc.wait()
    assert "signal SIGSEGV" in server.exit_message()
    server.proc = subprocess.Popen(["sh", "-c", "exit 3"])
    server.proc.wait()
    assert "(code 3)" in server.exit_message()
    server.proc = None
