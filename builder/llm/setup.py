"""The two entry points commands use: `@llm_options` and `with open_llm(...) as llm`.

A command that talks to an LLM looks like::

    @click.command()
    @llm_options
    @click.pass_obj
    def generate(obj, llm_settings, ...):
        with obj.open_store() as store, open_llm(store, llm_settings, job="generate") as llm:
            asyncio.run(run_pipeline(store, llm))
            print_summary(llm.summary())

With no base URL configured, `open_llm` fetches the local model (once) and runs the embedded
llama.cpp server for the duration of the block, so `golden demo` works on a fresh machine.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import click

from builder.errors import InputError

if TYPE_CHECKING:  # the openai SDK takes ~1 s to import: only commands that call a model pay it
    from builder.llm.client import OpenAIClient
    from builder.llm.settings import LLMSettings

LOCAL_CONCURRENCY = 2

_OPTION_NAMES = (
    "base_url", "api_key", "model", "judge_model", "verifier_model", "temperature", "max_tokens",
    "timeout", "concurrency", "config_path", "budget", "dry_run", "local_model",
)


def progress_line(message: str) -> None:
    """One progress line on stderr (never stdout, which commands may use for data)."""
    click.echo(f"golden: {message}", err=True)


def llm_options(f: Callable | None = None, *, lazy: bool = False) -> Callable:
    """Add the LLM options to a click command and pass them as one `llm_settings` kwarg.

    Options default to None so `resolve_settings` can apply CLI > env > golden.toml > default.
    With `lazy=True` the command gets a function returning the settings instead (resolved on
    first call, then cached), for commands that often need no LLM at all (`golden score
    --no-judge` then never loads the settings models).
    """
    if f is None:
        return functools.partial(llm_options, lazy=lazy)
    options = [
        click.option("--base-url", default=None,
                     help="OpenAI-compatible endpoint, e.g. https://api.openai.com/v1 (env "
                          "OPENAI_BASE_URL). Without one, golden runs a local model."),
        click.option("--api-key", default=None,
                     help="API key (env OPENAI_API_KEY). Never stored or printed."),
        click.option("--model", default=None, help="Generator model (env GOLDEN_MODEL)."),
        click.option("--judge-model", default=None, help="Model for the judge role."),
        click.option("--verifier-model", default=None, help="Model for the verifier role."),
        click.option("--temperature", type=float, default=None, help="Sampling temperature [0.2]."),
        click.option("--max-tokens", type=int, default=None, help="Max tokens per reply [1024]."),
        click.option("--timeout", type=float, default=None, help="Seconds per request [120]."),
        click.option("--concurrency", type=int, default=None, help="Requests in flight [8]."),
        click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
                     help="Config file [./golden.toml if present]."),
        click.option("--budget", type=float, default=None, metavar="USD",
                     help="Stop cleanly once this much has been spent (resume later)."),
        click.option("--dry-run", is_flag=True, default=False,
                     help="Estimate tokens and cost without calling the model."),
        click.option("--local-model", default=None, metavar="NAME|PATH",
                     help="Embedded model: qwen-1.5b (default), qwen-0.5b, smollm2-135m or a "
                          ".gguf path (env GOLDEN_LOCAL_MODEL)."),
    ]

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        cli = {name: kwargs.pop(name, None) for name in _OPTION_NAMES}
        config_path = cli.pop("config_path")

        @functools.cache
        def resolve() -> LLMSettings:
            from builder.config import load_config
            from builder.llm.settings import resolve_settings

            return resolve_settings(cli, os.environ, load_config(config_path))

        kwargs["llm_settings"] = resolve if lazy else resolve()
        return f(*args, **kwargs)

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def batch_option(f: Callable) -> Callable:
    """Add `--batch DIR` to a command that already has `@llm_options` (put it below them):
    the command then stages its uncached LLM requests in DIR for a batch engine and stops
    (builder/llm/batch/); the folder lands in `llm_settings.batch_dir` (lazy settings too)."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        batch_dir = kwargs.pop("batch_dir", None)
        settings = kwargs["llm_settings"]
        if batch_dir is not None and callable(settings):
            kwargs["llm_settings"] = functools.cache(
                lambda: settings().model_copy(update={"batch_dir": batch_dir}))
        elif batch_dir is not None:
            kwargs["llm_settings"] = settings.model_copy(update={"batch_dir": batch_dir})
        return f(*args, **kwargs)

    return click.option(
        "--batch", "batch_dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
        help="Send nothing: write the uncached LLM requests of the next step to DIR as OpenAI "
             "Batch API files (run them with `golden batch submit`, vllm run-batch or Ray), "
             "import the results with `golden batch import`, run this command again.")(wrapper)


@contextlib.contextmanager
def open_llm(store, settings: LLMSettings, *, job: str,
             progress: Callable[[str], None] = progress_line,
             http_client_factory: Callable | None = None) -> Iterator["OpenAIClient"]:
    """Yield a client implementing `builder.llm.types.LLM`.

    With no base URL: resolve and fetch the local model, start the embedded server (a progress
    line per step), point the client at it, and stop the server when the block exits -- normally,
    on an exception, on Ctrl-C, or (via PR_SET_PDEATHSIG) when this process is killed. In dry-run
    mode nothing is fetched or started.
    """
    if settings.batch_dir:
        yield from _open_batch(store, settings, job=job, progress=progress)
        return
    server = None
    local = settings.base_url is None
    try:
        if local:
            from builder.llm.local_models import ensure_model, resolve_local_model

            spec = resolve_local_model(settings.local_model)
            if settings.configured_models():
                progress(f"no --base-url: using the embedded model {spec.name} instead of "
                         f"{', '.join(sorted(settings.configured_models()))} (for OpenAI pass "
                         "--base-url https://api.openai.com/v1)")
            settings = settings.model_copy(update={
                # llama.cpp serves one request at a time: a deep queue only turns into timeouts
                "concurrency": min(settings.concurrency, LOCAL_CONCURRENCY),
                # one model serves every role and stage; their other overrides still apply
                "model": spec.record_name,
                "roles": {k: v.model_copy(update={"model": None}) for k, v in settings.roles.items()},
                "stages": {k: v.model_copy(update={"model": None}) for k, v in settings.stages.items()},
            })
            if not settings.dry_run:
                from builder.llm.local_server import LocalServer

                path = ensure_model(spec, progress=progress)
                server = LocalServer(path, alias=spec.record_name, progress=progress,
                                     n_ctx=spec.n_ctx)
                settings = settings.model_copy(update={"base_url": server.start()})
        elif not settings.model:
            raise InputError("no model configured: pass --model, set GOLDEN_MODEL or "
                             "add `model = ...` under [llm] in golden.toml")
        from builder.llm.client import OpenAIClient

        client = OpenAIClient(store, settings, job=job, local=local,
                              http_client_factory=http_client_factory, progress=progress)
        client.local_server = server  # None unless golden runs the embedded model
        try:
            yield client
        finally:
            client.close()
    finally:
        if server is not None:
            server.stop()



def _open_batch(store, settings: LLMSettings, *, job: str, progress: Callable[[str], None]):
    """`open_llm` with `--batch`: no endpoint and no local model, a client that stages what
    the cache cannot answer; the pass runs as `staged_pass` says (builder/llm/batch/)."""
    if not settings.model:
        raise InputError("--batch needs --model (or GOLDEN_MODEL): the model name goes into "
                         "every staged request, and staging never contacts the endpoint")
    if settings.budget_usd is not None:
        raise InputError("--budget does not apply to --batch (nothing is sent); see what the "
                         "staged requests would cost with --dry-run --batch DIR")
    from builder.llm.batch.staging import BatchClient, staged_pass

    client = BatchClient(store, settings, job=job, progress=progress)
    try:
        if settings.dry_run:  # estimates only: nothing is staged or written
            yield client
            return
        with staged_pass(store, client):
            yield client
    finally:
        client.close()
