"""Launcher for the embedded llama.cpp server: `python -m builder.llm.llama_server --model X --port N`.

`llama_cpp.server` answers HTTP 500 to the standard
`response_format={"type": "json_schema", "json_schema": {"schema": S}}` but accepts its own
`{"type": "json_object", "schema": S}` (grammar-constrained). `JsonSchemaAdapter` is a small
ASGI middleware that rewrites the first into the second, so the standard request -- and the
openai SDK's `chat.completions.parse` -- work unchanged. It also maps `max_completion_tokens`
(sent by newer clients, ignored by llama-cpp-python) onto `max_tokens`.

Run by `builder.llm.local_server.LocalServer`, which owns the process lifetime; this module
only builds the app and serves it on 127.0.0.1. Speed settings (threads, logits, grammar
sampling) are measured and explained in `default_threads`, `model_settings` and
`install_lazy_grammar`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
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


def default_threads(cpu_count: int | None = None, load: float | None = None) -> int:
    """Threads for decoding and prompt processing: every core when the machine is idle as the
    server starts, else every core but one (at least one).

    llama.cpp's threads meet at a spin barrier after every op; when another process takes a
    core from one of them the others spin until it is scheduled again. Measured on a busy
    2-core machine (another model server generating): 2 threads took 311 s per structured call,
    1 thread 14 s. On an idle 2-core machine 2 threads are 1.67x faster (`golden generate --n
    20` on samples/: 346 s against 578 s, bench/RESULTS.md). So all cores only when the cores
    other processes keep busy right now (`busy_cores`) are under half a core; golden's own
    process waits on the server and costs little. `GOLDEN_LOCAL_THREADS=N` overrides it.
    """
    with contextlib.suppress(ValueError):
        if int(os.environ.get("GOLDEN_LOCAL_THREADS", "")) > 0:
            return int(os.environ["GOLDEN_LOCAL_THREADS"])
    cpus = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    if load is None:
        load = busy_cores(cpus=cpus)
    if load is not None and load < 0.5:
        return cpus
    return max(1, cpus - 1)


def busy_cores(interval: float = 0.5, read_stat=None, cpus: int | None = None) -> float | None:
    """How many cores other processes keep busy now: the share of non-idle CPU time in
    /proc/stat over `interval` seconds, times the cores; else the 1-minute load average.

    The load average lags by minutes: `pip install ... && golden demo` started the server
    with the install's compile still in it (1.0 and more on an idle 2-core machine), so the
    first demo a user ran used one thread, about half the speed. A half-second sample sees
    the machine as it is when the server starts.
    """
    read_stat = read_stat or _read_proc_stat
    first = read_stat()
    if first is not None:
        time.sleep(interval)
        second = read_stat()
        if second is not None:
            total = second[0] - first[0]
            if total > 0:
                busy = total - (second[1] - first[1])
                return max(0.0, busy / total) * (cpus or os.cpu_count() or 1)
    with contextlib.suppress(OSError, AttributeError):
        return os.getloadavg()[0]
    return None


def _read_proc_stat() -> tuple[int, int] | None:
    """(all jiffies, idle + iowait jiffies) of the machine, from /proc/stat's `cpu` line."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
    return sum(ticks), ticks[3] + ticks[4]


_LOOSE_CHAR = 'char ::= [^"\\\\]'
_STRICT_CHAR = 'char ::= [^"\\\\\\x7F\\x00-\\x1F]'


def strict_strings(grammar: Any) -> None:
    """Make a llama-cpp-python JSON grammar's strings exclude control characters, as JSON
    requires and llama.cpp's own converter does. llama-cpp-python 0.3.36 writes `char ::=
    [^"\\]`, so a constrained reply could still hold a raw newline inside a string and fail
    to parse (seen: `{ "country": "France }` + newline + prose, from the 135M model at
    temperature 0, which broke the standard SDK's `chat.completions.parse`)."""
    text = getattr(grammar, "_grammar", None)
    if isinstance(text, str) and _LOOSE_CHAR in text:
        grammar._grammar = text.replace(_LOOSE_CHAR, _STRICT_CHAR)


def install_lazy_grammar() -> None:
    """Make llama_cpp sample grammar-constrained tokens the way llama.cpp's own server does.

    llama-cpp-python puts the grammar sampler into the sampler chain, so every token runs the
    grammar over the whole vocabulary (151,936 entries for Qwen2.5) before top-k: 30-70 ms a
    token on one core, as long as the forward pass itself. llama.cpp's `common_sampler`
    instead samples without the grammar, checks only the chosen token against it, and
    re-samples with the grammar applied to the full vocabulary only when that token is
    rejected. Every token still passes the grammar, so the output is exactly as constrained
    (valid JSON for the schema); only the cost changes. Idempotent.
    """
    import ctypes
    import math

    import llama_cpp
    import numpy as np
    from llama_cpp import llama as llama_module

    original = llama_module.Llama._init_sampler
    if getattr(original, "_golden_lazy_grammar", False):
        return

    class LazyGrammarSampler:
        """Stands in for `LlamaSampler` (only `.sample(ctx, idx)` is used by `Llama`)."""

        def __init__(self, plain: Any, model: Any, grammar: Any, n_vocab: int):
            self.plain = plain  # the same chain without the grammar
            self.grammar = llama_cpp.llama_sampler_init_grammar(
                model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
            if not self.grammar:
                raise ValueError("llama.cpp could not parse the grammar")
            self.n_vocab = n_vocab
            self._data = (llama_cpp.llama_token_data * n_vocab)()
            self._view = np.ctypeslib.as_array(self._data)
            self._ids = np.arange(n_vocab, dtype=np.int32)
            self._all = llama_cpp.llama_token_data_array(
                data=self._data, size=n_vocab, selected=-1, sorted=False)
            self._one_data = (llama_cpp.llama_token_data * 1)()
            self._one = llama_cpp.llama_token_data_array(
                data=self._one_data, size=1, selected=-1, sorted=False)

        def _load_logits(self, ctx: Any, idx: int) -> None:
            logits = llama_cpp.llama_get_logits_ith(ctx.ctx, idx)
            self._view["id"] = self._ids
            self._view["logit"] = np.ctypeslib.as_array(logits, shape=(self.n_vocab,))
            self._view["p"] = 0.0
            self._all.size, self._all.selected, self._all.sorted = self.n_vocab, -1, False

        def _apply(self, sampler: Any, array: Any) -> None:
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(array))

        def sample(self, ctx: Any, idx: int = -1) -> int:
            self._load_logits(ctx, idx)
            self._apply(self.plain.sampler, self._all)
            token = self._data[self._all.selected].id
            self._one_data[0].id, self._one_data[0].logit, self._one_data[0].p = token, 1.0, 0.0
            self._one.size, self._one.selected, self._one.sorted = 1, -1, False
            self._apply(self.grammar, self._one)
            if math.isinf(self._one_data[0].logit):  # rejected: sample from what the grammar allows
                self._load_logits(ctx, idx)
                self._apply(self.grammar, self._all)
                self._apply(self.plain.sampler, self._all)
                token = self._data[self._all.selected].id
            llama_cpp.llama_sampler_accept(self.grammar, token)
            llama_cpp.llama_sampler_accept(self.plain.sampler, token)
            return token

        def close(self) -> None:
            if self.grammar:
                llama_cpp.llama_sampler_free(self.grammar)
                self.grammar = None
            self.plain.close()

        def __del__(self) -> None:
            self.close()

    def _init_sampler(self: Any, *args: Any, **kwargs: Any) -> Any:
        grammar = kwargs.get("grammar")
        if grammar is not None:
            strict_strings(grammar)
        if grammar is None or args or kwargs.get("logits_processor") is not None:
            return original(self, *args, **kwargs)
        plain = original(self, **{**kwargs, "grammar": None})
        return LazyGrammarSampler(plain, self._model, grammar, self._n_vocab)

    _init_sampler._golden_lazy_grammar = True  # type: ignore[attr-defined]
    _init_sampler._golden_original = original  # type: ignore[attr-defined]
    llama_module.Llama._init_sampler = _init_sampler


def model_settings(model_path: str, alias: str, n_ctx: int,
                   n_threads: int | None = None) -> dict[str, Any]:
    """ModelSettings for the embedded server (see default_threads and the notes inline)."""
    threads = n_threads or default_threads()
    return {
        "model": model_path, "model_alias": alias, "n_ctx": n_ctx, "verbose": False,
        "n_threads": threads, "n_threads_batch": threads,
        # The server defaults to logits_all=True: it keeps logits for every prompt token (only
        # logprobs need them), 0.5 GB more RSS and ~9% slower calls. golden never asks for them.
        "logits_all": False,
        # Prompt states kept in RAM: a request whose prompt starts like an earlier one (the
        # fixed instructions of the question writer, then of the reader, alternating) restores
        # that state instead of reading the prefix again. Measured on 2 cores, one thread:
        # alternating question and reader calls took ~12 s each without it, ~2.5 s with it.
        # Bounded by what the states really hold (`StateSizedRAMCache`): the library's own
        # count leaves out each state's logits, and the server grew until the kernel killed it.
        "cache": True, "cache_type": "ram", "cache_size": CACHE_BYTES,
    }


CACHE_BYTES = 2 << 30


def state_bytes(state: Any) -> int:
    """What one saved prompt state holds in memory: the model's state (KV cache) plus the
    logits of every prompt token (n_tokens x vocabulary x 4 bytes: ~0.6 MB a token for
    Qwen2.5, ~0.5 GB for an 800-token prompt) and the token ids."""
    return int(state.llama_state_size) + sum(
        int(getattr(getattr(state, name, None), "nbytes", 0)) for name in ("scores", "input_ids"))


def install_bounded_cache() -> None:
    """Make the server's RAM prompt cache respect its size in bytes. llama-cpp-python's
    `LlamaRAMCache` sums only `llama_state_size`, so its states' logits arrays grew without
    bound (23 GB, then the out-of-memory killer, in a 20-item run); this counts them
    (`state_bytes`) and evicts the least recently used states until the total fits."""
    import llama_cpp

    base = llama_cpp.LlamaRAMCache
    if getattr(base, "_golden_bounded", False):
        return

    class StateSizedRAMCache(base):
        _golden_bounded = True

        @property
        def cache_size(self) -> int:
            return sum(state_bytes(s) for s in self.cache_state.values())

    llama_cpp.LlamaRAMCache = StateSizedRAMCache


def cpu_has_amx(cpuinfo: str | None = None) -> bool:
    """Whether the CPU reports Intel AMX tiles (`amx_tile` in /proc/cpuinfo's flags)."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
                cpuinfo = f.read()
        except OSError:
            return False
    return any(line.startswith("flags") and "amx_tile" in line.split()
               for line in cpuinfo.splitlines())


def install_no_weight_repack() -> None:
    """Load the weights without llama.cpp's extra buffer types (its weight repacking).

    A llama.cpp built on a CPU with Intel AMX (`-march=native`, the default build) repacks
    the weights into an AMX buffer, and on the virtual machines of that CPU generation we
    run on the first inference dies with a general protection fault in libggml-cpu
    (ggml-org/llama.cpp#20824, ollama/ollama#17249: the same fingerprint, Q4_K_M included).
    The kernel grants the AMX permission there, so it cannot be probed; the server then
    answered nothing and every run ended "cannot reach the LLM endpoint". Without the extra
    buffers the same build runs the plain AVX-512 path. llama-cpp-python does not expose the
    switch (`use_extra_bufts` of llama_model_params), so it is set where the library reads
    the defaults.
    """
    from llama_cpp import llama_cpp as bindings

    original = bindings.llama_model_default_params
    if getattr(original, "_golden_no_repack", False):
        return

    def defaults() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    defaults._golden_no_repack = True  # type: ignore[attr-defined]
    defaults._golden_original = original  # type: ignore[attr-defined]
    bindings.llama_model_default_params = defaults  # what `Llama.__init__` calls


def build_has_amx(system_info: str | None = None) -> bool:
    """Whether the llama.cpp library golden loads was compiled with its AMX path
    (`AMX_INT8 = 1` in llama_print_system_info); a build made with AMX turned off has none."""
    if system_info is None:
        try:
            import llama_cpp

            system_info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
        except Exception:  # no library, or one without the call: nothing to guard
            return False
    return "AMX_INT8 = 1" in system_info


def install_cpu_guard(cpuinfo: str | None = None, system_info: str | None = None) -> bool:
    """Every in-process llama.cpp model of golden loads through this: when the CPU reports AMX
    and the library was built with its AMX path, without weight repacking
    (`install_no_weight_repack`); a build without AMX keeps its repacked weights (1.17x faster
    on the AMX machine, bench/RESULTS.md). True when the guard was needed."""
    if not (cpu_has_amx(cpuinfo) and build_has_amx(system_info)):
        return False
    install_no_weight_repack()
    return True


def build_app(model_path: str, alias: str, n_ctx: int, n_threads: int | None = None) -> Any:
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    install_lazy_grammar()
    install_bounded_cache()
    install_cpu_guard()
    app = create_app(server_settings=ServerSettings(host="127.0.0.1"),
                     model_settings=[ModelSettings(**model_settings(model_path, alias, n_ctx,
                                                                    n_threads))])
    return JsonSchemaAdapter(app)


def launcher_parser(description: str) -> argparse.ArgumentParser:
    """The command line both Python launchers take (this one and xllamacpp_server.py)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--model", required=True, help="path to a .gguf file")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--alias", required=True, help="model id served at /v1/models")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--n-threads", type=int, default=None)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = launcher_parser(__doc__.splitlines()[0]).parse_args(argv)

    import uvicorn

    app = build_app(args.model, args.alias, args.n_ctx, args.n_threads)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
