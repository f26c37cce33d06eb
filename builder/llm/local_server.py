"""Running the embedded llama.cpp server as a child process that never outlives golden.

`LocalServer.start()` launches a server on 127.0.0.1 on a free port and returns its base URL
once GET /v1/models answers with the model we asked for (so a port reused by something else is
never mistaken for our server). Three engines serve the same OpenAI-compatible API, tried in
this order (`GOLDEN_LOCAL_ENGINE` names one and only that one):

- `llama-server`, llama.cpp's own server, where one is installed (on PATH, or named by
  `GOLDEN_LLAMA_SERVER`); built for the machine, it was the fastest: the demo's generation
  took 0.61x the time of llama-cpp-python's server on 2 cores (bench/RESULTS.md, 2026-12-07);
- `xllamacpp`, the same C++ server in a prebuilt wheel (`golden[local]`): nothing to compile
  on a fresh machine, a call 0.73x of llama-cpp-python's (`xllamacpp_server.py`);
- `llama-cpp-python`, its Python server (`llama_server.py`), where that library is installed.

An engine that will not start (a llama-server too old for a flag below, say) is noted and the
next one serves.

The child goes away when:

- the `open_llm` block exits, normally or with an exception or Ctrl-C (`stop()`);
- the interpreter exits (`atexit`) or golden gets SIGTERM/SIGHUP (signal handlers);
- golden is killed outright, even with `kill -9`: the child asks the kernel for SIGKILL when
  its parent dies (Linux `prctl(PR_SET_PDEATHSIG)`, set in `preexec_fn`).

`stop()` sends SIGTERM, waits, then SIGKILL: the server ignores SIGTERM while generating.
Note PR_SET_PDEATHSIG fires when the *thread* that started the child ends, so start the
server from the thread that lives as long as the job (the main thread in the CLI).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from builder.errors import InputError, JobError
from builder.llm.llama_server import CACHE_BYTES, cpu_has_amx, default_threads

STARTUP_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 5.0
INSTALL_HINT = ("the embedded local model needs an engine: pip install 'golden[local]' "
                "(or pass --base-url to use another OpenAI-compatible endpoint)")
ENGINES = ("llama-server", "xllamacpp", "llama-cpp-python")
HOW_TO_INSTALL = {"llama-server": "put llama.cpp's llama-server on PATH or name it with "
                                  "GOLDEN_LLAMA_SERVER",
                  "xllamacpp": "pip install 'golden[local]'",
                  "llama-cpp-python": "pip install 'llama-cpp-python[server]'"}
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """preexec_fn: have the kernel SIGKILL this child when its parent dies (Linux only)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def llama_cpp_available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "uvicorn", "fastapi"))


def xllamacpp_available() -> bool:
    return importlib.util.find_spec("xllamacpp") is not None


def llama_server_binary(environ: dict[str, str] | None = None) -> str | None:
    """The `llama-server` to run: the one `GOLDEN_LLAMA_SERVER` names, else the one on PATH;
    None when there is none. A name that is no executable is the user's mistake, said as one
    (InputError), not passed over for another engine."""
    env = os.environ if environ is None else environ
    named = env.get("GOLDEN_LLAMA_SERVER", "").strip()
    if named:
        found = shutil.which(named, path=env.get("PATH"))
        if found is None and os.path.isfile(named) and os.access(named, os.X_OK):
            found = named
        if found is None:
            raise InputError(f"GOLDEN_LLAMA_SERVER={named}: not an executable file (give the "
                             "path of llama-server)")
        return found
    return shutil.which("llama-server", path=env.get("PATH"))


def engines_to_try(environ: dict[str, str] | None = None) -> list[tuple[str, str | None]]:
    """(engine, llama-server binary or None) in the order they are tried: every installed one,
    or only the one `GOLDEN_LOCAL_ENGINE` names (an InputError if it is not installed)."""
    env = os.environ if environ is None else environ
    asked = env.get("GOLDEN_LOCAL_ENGINE", "").strip().lower() or "auto"
    if asked not in ("auto", *ENGINES):
        raise InputError(f"GOLDEN_LOCAL_ENGINE={asked}: expected auto or one of "
                         f"{', '.join(ENGINES)}")
    binary = llama_server_binary(env) if asked in ("auto", "llama-server") else None
    have = {"llama-server": binary is not None, "xllamacpp": xllamacpp_available(),
            "llama-cpp-python": llama_cpp_available()}
    if asked != "auto":
        if not have[asked]:
            raise InputError(f"GOLDEN_LOCAL_ENGINE={asked}, which is not installed here "
                             f"({HOW_TO_INSTALL[asked]})")
        return [(asked, binary)]
    return [(engine, binary if engine == "llama-server" else None)
            for engine in ENGINES if have[engine]]


def llama_server_command(binary: str, model_path: Path, port: int, alias: str, n_ctx: int,
                         threads: int, amx: bool) -> list[str]:
    """llama-server's command line, with the settings llama_server.py gives llama-cpp-python:
    one request at a time (`-np 1`: golden's calls queue anyway, and a slot keeps all of
    `n_ctx`), the thread count `default_threads` picks, a 2 GiB prompt cache (its default is
    8 GiB), and no repacked weights on a CPU with AMX tiles (llama.cpp#20824: the AMX path of
    a native build crashed at the first call, see `install_cpu_guard`)."""
    cmd = [binary, "-m", str(model_path), "--host", "127.0.0.1", "--port", str(port),
           "--alias", alias, "-c", str(n_ctx), "-np", "1", "-t", str(threads),
           "-tb", str(threads), "--cache-ram", str(CACHE_BYTES >> 20)]
    return cmd + (["--no-repack"] if amx else [])


class LocalServer:
    """One llama.cpp server process serving one model under `alias`."""

    def __init__(self, model_path: str | Path, *, alias: str, progress: Callable[[str], None],
                 n_ctx: int = 4096, startup_timeout: float = STARTUP_TIMEOUT_S):
        self.model_path = Path(model_path)
        self.alias = alias
        self.n_ctx = n_ctx
        self.progress = progress
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self.base_url: str | None = None
        self.engine: str | None = None  # one of ENGINES, once started
        self._log_path: str | None = None
        self._old_handlers: dict[int, object] = {}

    def start(self) -> str:
        """Launch and health-check the server; returns its base URL (ending in /v1)."""
        engines = engines_to_try()
        if not engines:
            raise JobError(INSTALL_HINT)
        for (engine, binary), (following, _) in zip(engines, engines[1:]):
            try:
                return self._start(engine, functools.partial(self._command, engine, binary))
            except JobError as exc:
                self.progress(f"{binary or engine} did not start ({exc}); serving with "
                              f"{following} instead")
        engine, binary = engines[-1]
        return self._start(engine, functools.partial(self._command, engine, binary))

    def _command(self, engine: str, binary: str | None, port: int) -> list[str]:
        if engine == "llama-server":
            return llama_server_command(binary, self.model_path, port, self.alias, self.n_ctx,
                                        default_threads(), cpu_has_amx())
        # both Python launchers take `llama_server.launcher_parser`'s command line
        module = "xllamacpp_server" if engine == "xllamacpp" else "llama_server"
        cmd = [sys.executable, "-m", f"builder.llm.{module}", "--model", str(self.model_path),
               "--port", str(port), "--alias", self.alias, "--n-ctx", str(self.n_ctx)]
        if engine == "xllamacpp":  # llama_server.py picks its threads and AMX guard itself
            cmd += ["--n-threads", str(default_threads())] + (["--amx"] if cpu_has_amx() else [])
        return cmd

    def _start(self, engine: str, command: Callable[[int], list[str]]) -> str:
        port = free_port()
        t0 = time.monotonic()
        self.progress(f"starting the local model server ({self.alias}, {engine}) on "
                      f"127.0.0.1:{port}")
        log = tempfile.NamedTemporaryFile(prefix="golden-llama-", suffix=".log", delete=False)
        self._log_path = log.name
        with log:
            self.proc = subprocess.Popen(command(port), stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, preexec_fn=die_with_parent,
                                         start_new_session=True)
        atexit.register(self.stop)
        self._install_signal_handlers()
        url = f"http://127.0.0.1:{port}/v1"
        try:
            self._wait_ready(url, t0)
        except BaseException:
            self.stop()
            raise
        self.base_url, self.engine = url, engine
        self.progress(f"local model server ready in {time.monotonic() - t0:.1f} s")
        return url

    def _wait_ready(self, url: str, t0: float) -> None:
        next_note = t0 + 10
        while True:
            code = self.proc.poll()
            if code is not None:
                raise JobError(f"the local model server exited with code {code}: {self._log_tail()}")
            served = _served_models(url)
            if served is not None:
                if self.alias in served:
                    return
                raise JobError(f"port {url} serves {served}, not {self.alias!r}")
            now = time.monotonic()
            if now - t0 > self.startup_timeout:
                raise JobError(f"the local model server did not answer within "
                               f"{self.startup_timeout:.0f} s: {self._log_tail()}")
            if now >= next_note:
                self.progress(f"waiting for the local model server ({now - t0:.0f} s)")
                next_note = now + 10
            time.sleep(0.2)

    def stop(self) -> None:
        """Terminate, wait, then kill. Idempotent; safe from atexit and signal handlers."""
        proc, self.proc = self.proc, None
        self._restore_signal_handlers()
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if self._log_path:
            with contextlib.suppress(OSError):
                os.unlink(self._log_path)
            self._log_path = None

    def exit_message(self) -> str | None:
        """Why the server is gone, when it exited by itself after starting; None while it runs
        (or after `stop`). A signal is named: SIGSEGV is llama.cpp crashing, SIGKILL most
        often the kernel's out-of-memory killer."""
        code = self.proc.poll() if self.proc is not None else None
        if code is None:
            return None
        how = f"code {code}"
        if code < 0:
            with contextlib.suppress(ValueError):
                how = f"signal {signal.Signals(-code).name}"
        return f"the local model server stopped ({how}) during the run: {self._log_tail()}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def _log_tail(self) -> str:
        try:
            lines = Path(self._log_path).read_text(errors="replace").strip().splitlines()
        except (OSError, TypeError):
            return "(no log)"
        return " | ".join(lines[-3:]) or "(no output)"

    def _install_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # PR_SET_PDEATHSIG and atexit still cover this case

        def handler(signum, frame):
            previous = self._old_handlers.get(signum)
            self.stop()
            if callable(previous):
                previous(signum, frame)
            else:
                raise SystemExit(128 + signum)

        for sig in (signal.SIGTERM, signal.SIGHUP):
            self._old_handlers[sig] = signal.getsignal(sig)
            signal.signal(sig, handler)

    def _restore_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig, previous in self._old_handlers.items():
            with contextlib.suppress(Exception):
                signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
        self._old_handlers.clear()


def _served_models(url: str) -> list[str] | None:
    """Model ids at GET {url}/models, or None if nothing answers yet."""
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
        with opener.open(f"{url}/models", timeout=2) as resp:
            data = json.loads(resp.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return [m.get("id") for m in data.get("data", []) if isinstance(m, dict)]
