"""Reading JSON out of replies, schema strictness, and the llama.cpp request adapter."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from builder.llm.llama_server import JsonSchemaAdapter, rewrite_request
from builder.llm.structured import NoJSON, extract_json, looks_like_refusal, response_format


@pytest.mark.parametrize("text", [
    '{"a": 1}',
    '  \n{"a": 1}\n',
    '```json\n{"a": 1}\n```',
    '```\n{"a": 1}\n```',
    'Here is the answer:\n```json\n{"a": 1}\n```\nLet me know!',
    'Sure. {"a": 1} is the object.',
    'The set {1, 2} and then {"a": 1}',
    '[1, 2] then {"a": 1}',
])
def test_extract_json_tolerates_wrapping(text):
    assert extract_json(text) == {"a": 1}


def test_extract_json_allows_raw_newlines_in_strings():
    assert extract_json('{"q": "line one\nline two"}') == {"q": "line one\nline two"}


def test_extract_json_takes_the_first_object_and_keeps_nesting():
    assert extract_json('x {"a": {"b": [1, {"c": 2}]}} y {"z": 0}') == {"a": {"b": [1, {"c": 2}]}}


@pytest.mark.parametrize("text", ["no json here", '{"a": 1', "[1, 2, 3]", '```json\n{"a":\n```'])
def test_extract_json_refuses_what_is_not_an_object(text):
    with pytest.raises(NoJSON):
        extract_json(text)


def test_refusal_heuristic():
    assert looks_like_refusal("I'm sorry, but I can't help with that.")
    assert looks_like_refusal("I cannot comply.")
    assert not looks_like_refusal("The capital is Paris.")


class Strictable(BaseModel):
    a: int
    b: list[str]


class WithDefault(BaseModel):
    a: int
    b: str = "x"


def test_strict_only_when_the_schema_allows_it():
    strict = response_format("json_schema", Strictable)["json_schema"]
    assert strict["strict"] is True and strict["schema"]["additionalProperties"] is False
    loose = response_format("json_schema", WithDefault)["json_schema"]
    assert "strict" not in loose
    assert response_format("json_object", WithDefault) == {"type": "json_object"}
    assert response_format("text", WithDefault) is None


# -- the llama.cpp adapter ------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def test_rewrite_json_schema_to_llama_cpp_form():
    body = {"model": "m", "messages": [], "max_completion_tokens": 64,
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "X", "schema": SCHEMA, "strict": True}}}
    out = json.loads(rewrite_request(json.dumps(body).encode()))
    assert out["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert out["max_tokens"] == 64 and "max_completion_tokens" not in out


@pytest.mark.parametrize("body", [
    b'{"model": "m", "response_format": {"type": "json_object"}, "max_tokens": 5}',
    b"not json", b"[1]",
])
def test_rewrite_leaves_everything_else_alone(body):
    assert rewrite_request(body) == body


async def run_asgi(path, body_parts, method="POST"):
    seen = {}

    async def inner(scope, receive, send):
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        seen["body"] = b"".join(chunks)
        seen["headers"] = dict(scope["headers"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    messages = [{"type": "http.request", "body": part, "more_body": i < len(body_parts) - 1}
                for i, part in enumerate(body_parts)]

    async def receive():
        return messages.pop(0)

    sent = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path,
             "headers": [(b"content-length", b"999"), (b"content-type", b"application/json")]}
    await JsonSchemaAdapter(inner)(scope, receive, send)
    return seen, sent


async def test_adapter_rewrites_a_chunked_chat_request():
    body = json.dumps({"model": "m", "response_format": {
        "type": "json_schema", "json_schema": {"name": "X", "schema": SCHEMA}}}).encode()
    seen, sent = await run_asgi("/v1/chat/completions", [body[:10], body[10:30], body[30:]])
    assert json.loads(seen["body"])["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert seen["headers"][b"content-length"] == str(len(seen["body"])).encode()
    assert sent[0]["status"] == 200


async def test_adapter_passes_other_paths_through():
    body = b'{"response_format": {"type": "json_schema", "json_schema": {"schema": {}}}}'
    seen, _ = await run_asgi("/v1/completions", [body])
    assert seen["body"] == body
