"""Launcher for the embedded model on xllamacpp: `python -m builder.llm.xllamacpp_server --model X
--port N --alias A`.

xllamacpp (`golden[local]`) is a prebuilt wheel holding llama.cpp's own C++ server, so a fresh
machine installs the engine without compiling anything, and the server keeps the computed
prompt between calls and samples grammar-constrained tokens the way llama.cpp does: on 2 cores a
call of the demo cost 0.73x what it costs on llama-cpp-python's Python server
(bench/RESULTS.md, 2026-12-07). Run by `builder.llm.local_server.LocalServer`, which owns the
process lifetime; this module only starts the server on 127.0.0.1 with the settings the other
engines get (`local_server.llama_server_command` says why each) and waits to be stopped.
"""

from __future__ import annotations

import threading

from builder.llm.llama_server import CACHE_BYTES, default_threads, launcher_parser


def params(model: str, port: int, alias: str, n_ctx: int, threads: int, amx: bool):
    """xllamacpp's CommonParams for golden's server."""
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = model
    p.hostnames = ["127.0.0.1"]
    p.port = port
    p.model_alias = {alias}  # a set of names: a str here is read as its characters
    p.n_ctx = n_ctx
    p.n_parallel = 1
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = threads
    p.cache_ram_mib = CACHE_BYTES >> 20  # the prompt cache every engine gets
    p.no_extra_bufts = amx  # no repacked weights on an AMX CPU (llama.cpp#20824)
    return p


def main(argv: list[str] | None = None) -> None:
    parser = launcher_parser(__doc__.splitlines()[0])
    parser.add_argument("--amx", action="store_true", help="the CPU reports AMX tiles")
    args = parser.parse_args(argv)

    import xllamacpp

    server = xllamacpp.Server(params(args.model, args.port, args.alias, args.n_ctx,
                                     args.n_threads or default_threads(), args.amx))
    print(f"serving {args.alias} at {server.listening_address}", flush=True)
    threading.Event().wait()  # the server runs on its own threads until SIGTERM


if __name__ == "__main__":
    main()
