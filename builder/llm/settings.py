"""LLM settings: what the client needs to know, resolved from CLI, environment and golden.toml.

Precedence: CLI > environment > golden.toml `[llm]` > defaults (`resolve_settings`). Per-call
parameters (model, temperature, max_tokens) are then looked up most-specific first:
`[llm.stages.<stage>]` > `[llm.roles.<role>]` (and `--judge-model` / `--verifier-model`) > the
prompt file's `max_tokens` (the longest reply its stage needs) > `[llm]`.

The API key is a `SecretStr`: its value is only read where the SDK client is built, and the
key is never written to the database, a log line or an error message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from builder.config import ConfigFile, config_section, find_key_line
from builder.errors import InputError

DEFAULT_LOCAL_MODEL = "qwen-1.5b"
ROLES = ("generator", "verifier", "judge")

# Environment variables read by `resolve_settings` (name in settings -> variable).
ENV_VARS = {
    "base_url": "OPENAI_BASE_URL",
    "api_key": "OPENAI_API_KEY",
    "model": "GOLDEN_MODEL",
    "local_model": "GOLDEN_LOCAL_MODEL",
}


class CallParams(BaseModel):
    """Per-stage / per-role overrides; None means "inherit"."""

    model_config = ConfigDict(extra="forbid", strict=True)

    model: str | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, gt=0)


class Price(BaseModel):
    """USD per million tokens; the batch rates price calls answered through a batch engine
    (`--batch`), the standard rates when none is given."""

    model_config = ConfigDict(extra="forbid", strict=True)

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)
    batch_input_per_mtok: float | None = Field(None, ge=0)
    batch_output_per_mtok: float | None = Field(None, ge=0)

    def cost(self, prompt_tokens: int, completion_tokens: int, *, batch: bool = False) -> float:
        """USD for one call's tokens, at the batch rates when `batch` and they are known."""
        inp, out = self.input_per_mtok, self.output_per_mtok
        if batch and self.batch_input_per_mtok is not None:
            inp = self.batch_input_per_mtok
        if batch and self.batch_output_per_mtok is not None:
            out = self.batch_output_per_mtok
        return (prompt_tokens * inp + completion_tokens * out) / 1e6


def _list_price(inp: float, out: float) -> Price:
    """A list price; OpenAI's Batch API costs half of it."""
    return Price(input_per_mtok=inp, output_per_mtok=out, batch_input_per_mtok=inp / 2,
                 batch_output_per_mtok=out / 2)


# Built-in list prices (USD per million tokens, standard tier; the Batch API at half). Configurable
# in golden.toml under [prices."model"]; a model name matches the longest listed prefix (dated
# snapshots).
DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o-mini": _list_price(0.15, 0.60),
    "gpt-4o": _list_price(2.50, 10.00),
    "gpt-4.1-nano": _list_price(0.10, 0.40),
    "gpt-4.1-mini": _list_price(0.40, 1.60),
    "gpt-4.1": _list_price(2.00, 8.00),
    "gpt-5-nano": _list_price(0.05, 0.40),
    "gpt-5-mini": _list_price(0.25, 2.00),
    "gpt-5": _list_price(1.25, 10.00),
    "o4-mini": _list_price(1.10, 4.40),
}


class LLMFileConfig(BaseModel):
    """The `[llm]` table of golden.toml. Keys are the long option names with `_`."""

    model_config = ConfigDict(extra="forbid", strict=True)

    base_url: str | None = None
    model: str | None = None
    judge_model: str | None = None
    verifier_model: str | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, gt=0)
    timeout: float | None = Field(None, gt=0)
    concurrency: int | None = Field(None, ge=1, le=1024)
    max_retries: int | None = Field(None, ge=0, le=20)
    budget: float | None = Field(None, ge=0)
    local_model: str | None = None
    stages: dict[str, CallParams] = Field(default_factory=dict)
    roles: dict[str, CallParams] = Field(default_factory=dict)


class LLMSettings(BaseModel):
    """Everything `open_llm` needs. Built by `resolve_settings`; immutable in practice."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    api_key: SecretStr | None = None
    model: str | None = None
    temperature: float = Field(0.2, ge=0, le=2)
    max_tokens: int = Field(1024, gt=0)
    timeout: float = Field(120.0, gt=0)
    concurrency: int = Field(8, ge=1)
    max_retries: int = Field(5, ge=0)
    budget_usd: float | None = Field(None, ge=0)
    dry_run: bool = False
    local_model: str = DEFAULT_LOCAL_MODEL
    roles: dict[str, CallParams] = Field(default_factory=dict)
    stages: dict[str, CallParams] = Field(default_factory=dict)
    prices: dict[str, Price] = Field(default_factory=lambda: dict(DEFAULT_PRICES))
    config_path: str | None = None
    batch_dir: str | None = None  # `--batch DIR`: stage uncached requests there, send nothing

    def params_for(self, role: str = "generator", stage: str | None = None,
                   prompt_max_tokens: int | None = None) -> CallParams:
        """Model, temperature and max_tokens for one call: stage > role > base settings, except
        that the prompt's own reply cap (its header's `max_tokens`) comes before the base."""
        layers = [self.stages.get(stage) if stage else None, self.roles.get(role)]
        resolved: dict[str, Any] = {
            "model": self.model, "temperature": self.temperature,
            "max_tokens": prompt_max_tokens or self.max_tokens,
        }
        for name in resolved:
            for layer in layers:
                if layer is not None and getattr(layer, name) is not None:
                    resolved[name] = getattr(layer, name)
                    break
        return CallParams.model_construct(**resolved)

    def configured_models(self) -> set[str]:
        """Every model name some role or stage may call."""
        names = {self.model} | {p.model for p in (*self.roles.values(), *self.stages.values())}
        return {n for n in names if n}

    def price_for(self, model: str) -> Price | None:
        """Exact name, else the longest listed prefix (dated snapshots); None if unknown."""
        if model in self.prices:
            return self.prices[model]
        matches = [name for name in self.prices if model.startswith(name)]
        return self.prices[max(matches, key=len)] if matches else None


def resolve_settings(cli: Mapping[str, Any], env: Mapping[str, str], config: ConfigFile) -> LLMSettings:
    """Merge the sources. `cli` holds option values (None = not given), keyed like LLMSettings
    plus `judge_model`, `verifier_model` and `budget`.

    Raises InputError for a wrong type in golden.toml (naming file, line and key) or a key in it
    that must not be there (an API key).
    """
    llm_table = config.table("llm")
    if "api_key" in llm_table:
        raise InputError("llm.api_key: API keys do not belong in a config file; set OPENAI_API_KEY",
                         path=config.path, line=find_key_line(config.text, ("llm", "api_key")))
    file_cfg = config_section(config, ("llm",), LLMFileConfig)
    prices = dict(DEFAULT_PRICES)
    for name in config.table("prices"):
        prices[name] = config_section(config, ("prices", name), Price)

    def pick(name: str, file_name: str | None = None) -> Any:
        if cli.get(name) is not None:
            return cli[name]
        var = ENV_VARS.get(name)
        if var and env.get(var):
            return env[var]
        return getattr(file_cfg, file_name or name, None)

    roles = {k: v.model_copy() for k, v in file_cfg.roles.items()}
    for role in ("judge", "verifier"):
        model = cli.get(f"{role}_model") or getattr(file_cfg, f"{role}_model")
        if model:
            base = roles.get(role, CallParams())
            roles[role] = base.model_copy(update={"model": model})

    values: dict[str, Any] = {
        "base_url": pick("base_url"),
        "api_key": pick("api_key"),
        "model": pick("model"),
        "temperature": pick("temperature"),
        "max_tokens": pick("max_tokens"),
        "timeout": pick("timeout"),
        "concurrency": pick("concurrency"),
        "max_retries": pick("max_retries"),
        "budget_usd": pick("budget", "budget"),
        "local_model": pick("local_model"),
        "dry_run": bool(cli.get("dry_run")),
        "roles": roles,
        "stages": file_cfg.stages,
        "prices": prices,
        "config_path": config.path,
    }
    values = {k: v for k, v in values.items() if v is not None}
    if "base_url" in values:
        values["base_url"] = str(values["base_url"]).strip().rstrip("/") or None
        if values["base_url"] is None:
            del values["base_url"]
    try:
        return LLMSettings.model_validate(values)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = str(err["loc"][0]).replace("_usd", "").replace("_", "-")
        raise InputError(f"--{name}: {err['msg']}") from None
