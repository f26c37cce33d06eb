"""Launcher for the embedded llama.cpp server: `python -m builder.llm.llama_server --model X --port N`.

`llama_cpp.server` answers HTTP 500 to the standard
`response_format={"type": "json_schema", "json_schema": {"schema": S}}` but accepts its own
`{"type": "json_object", "schema": S}` (grammar-constrained). `JsonSchemaAdapter` is a small
ASGI middleware that rewrites the first into the second, so the standard request -- and the
openai SDK's `chat.completions.parse` -- work unchanged. It also maps `max_completion_tokens`
(sent by newer clients, ignored by llama-cpp-python) onto `max_tokens`.

Run by `builder.llm.local_server.LocalServer`, which owns the process lifetime; this module
only builds the app and serves it on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import json
from typing import Any


def rewrite_request(body: bytes) -> bytes:
    """The chat request as llama_cpp.server understands it; unchanged if nothing to rewrite.

    Never fails: a body that is not a JSON object passes through for the server to reject.
    """
    try:
        data = json.loads(body)
    except ValueError:
        return body
    if not isinstance(data, dict):
        return body
    changed = False
    fmt = data.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") if isinstance(fmt.get("json_schema"), dict) else {}
        data["response_format"] = {"type": "json_object"}
        if isinstance(spec.get("schema"), dict):
            data["response_format"]["schema"] = spec["schema"]
        changed = True
    if "max_completion_tokens" in data:
        value = data.pop("max_completion_tokens")
        if data.get("max_tokens") is None:
            data["max_tokens"] = value
        changed = True
    return json.dumps(data).encode("utf-8") if changed else body


class JsonSchemaAdapter:
    """ASGI middleware: buffer POST .../chat/completions bodies and pass them through
    `rewrite_request`; every other request goes straight to the wrapped app."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if (scope.get("type") != "http" or scope.get("method") != "POST"
                or not scope.get("path", "").endswith("/chat/completions")):
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # client went away
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = rewrite_request(b"".join(chunks))
        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app({**scope, "headers": headers}, replay, send)


def build_app(model_path: str, alias: str, n_ctx: int, n_threads: int | None = None) -> Any:
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    model_kwargs: dict[str, Any] = {"model": model_path, "model_alias": alias, "n_ctx": n_ctx,
                                    "verbose": False}
    # llama-cpp-python decodes with cpu_count // 2 threads by default: one thread on the
    # 2-core machines golden targets. Generation is the demo's bottleneck, so use every core.
    model_kwargs["n_threads"] = n_threads or os.cpu_count() or 1
    app = create_app(server_settings=ServerSettings(host="127.0.0.1"),
                     model_settings=[ModelSettings(**model_kwargs)])
    return JsonSchemaAdapter(app)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="path to a .gguf file")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--alias", required=True, help="model id served at /v1/models")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--n-threads", type=int, default=None)
    args = parser.parse_args(argv)

    import uvicorn

    app = build_app(args.model, args.alias, args.n_ctx, args.n_threads)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
