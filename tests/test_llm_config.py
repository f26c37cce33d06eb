"""Settings: CLI > env > golden.toml > defaults, and readable errors for a bad golden.toml."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from builder.config import ConfigFile, load_config
from builder.errors import InputError
from builder.llm.settings import LLMSettings, resolve_settings
from builder.llm.setup import llm_options

TOML = """\
# golden settings
[llm]
base_url = "http://toml.example/v1"
model = "toml-model"
temperature = 0.5
max_tokens = 300
concurrency = 4
judge_model = "toml-judge"

[llm.stages.questions]
model = "stage-model"
max_tokens = 900

[llm.roles.verifier]
temperature = 0.0

[prices."toml-model"]
input_per_mtok = 1.5
output_per_mtok = 3
"""


def write(tmp_path, text, name="golden.toml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_defaults_without_any_source():
    s = resolve_settings({}, {}, ConfigFile())
    assert s.base_url is None and s.model is None and s.local_model == "qwen-1.5b"
    assert (s.temperature, s.max_tokens, s.concurrency, s.timeout) == (0.2, 1024, 8, 120.0)
    assert s.price_for("gpt-4o-mini-2024-07-18").input_per_mtok == 0.15


def test_toml_then_env_then_cli(tmp_path):
    config = load_config(write(tmp_path, TOML))
    s = resolve_settings({}, {}, config)
    assert s.base_url == "http://toml.example/v1" and s.model == "toml-model"
    assert s.temperature == 0.5 and s.concurrency == 4
    assert s.price_for("toml-model").output_per_mtok == 3

    env = {"OPENAI_BASE_URL": "http://env.example/v1/", "GOLDEN_MODEL": "env-model",
           "OPENAI_API_KEY": "sk-env"}
    s = resolve_settings({}, env, config)
    assert s.base_url == "http://env.example/v1" and s.model == "env-model"
    assert s.api_key.get_secret_value() == "sk-env" and "sk-env" not in repr(s)

    s = resolve_settings({"model": "cli-model", "temperature": 0.0, "judge_model": "cli-judge"},
                         env, config)
    assert s.model == "cli-model" and s.temperature == 0.0 and s.base_url == "http://env.example/v1"
    assert s.params_for("judge").model == "cli-judge"


def test_stage_and_role_overrides(tmp_path):
    s = resolve_settings({}, {}, load_config(write(tmp_path, TOML)))
    q = s.params_for("generator", "questions")
    assert (q.model, q.max_tokens, q.temperature) == ("stage-model", 900, 0.5)
    v = s.params_for("verifier", "verify")
    assert (v.model, v.temperature) == ("toml-model", 0.0)
    assert s.params_for("judge", "judge").model == "toml-judge"
    assert s.configured_models() == {"toml-model", "stage-model", "toml-judge"}


@pytest.mark.parametrize("text,match", [
    ('[llm]\ntemperature = "hot"\n', r"golden.toml:2: llm.temperature: Input should be a valid number"),
    ('[llm]\nmodel = "m"\nconcurrency = 2.5\n', r"golden.toml:3: llm.concurrency: .*integer"),
    ('[llm]\nmodle = "m"\n', r"golden.toml:2: llm.modle: Extra inputs are not permitted"),
    ('[llm.stages.facts]\nmax_tokens = "lots"\n', r"golden.toml:2: llm.stages.facts.max_tokens"),
    ('[prices."x"]\ninput_per_mtok = 1\n', r"golden.toml:1: prices.x.output_per_mtok: Field required"),
    ('[llm]\napi_key = "sk-123"\n', r"golden.toml:2: llm.api_key: API keys do not belong"),
    ('llm = 3\n', r"golden.toml:1: llm: expected a table"),
    ('[llm\nmodel = 1\n', r"golden.toml:1: invalid TOML"),
])
def test_bad_config_names_file_line_and_key(tmp_path, text, match):
    path = write(tmp_path, text)
    with pytest.raises(InputError, match=match) as info:
        resolve_settings({}, {}, load_config(path))
    assert "sk-123" not in str(info.value)


def test_missing_explicit_config_is_an_error(tmp_path):
    with pytest.raises(InputError, match="config file not found"):
        load_config(tmp_path / "nope.toml")


def test_bad_cli_value_is_an_input_error():
    with pytest.raises(InputError, match="--temperature"):
        resolve_settings({"temperature": 7.0}, {}, ConfigFile())


@click.command()
@llm_options
def show(llm_settings: LLMSettings):
    click.echo(llm_settings.model_dump_json(exclude={"prices"}))


def test_llm_options_decorator(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, TOML)  # ./golden.toml is read by default
    runner = CliRunner()
    env = {"GOLDEN_MODEL": "env-model", "OPENAI_API_KEY": "sk-secret-key"}
    result = runner.invoke(show, ["--temperature", "0.1", "--dry-run", "--budget", "2",
                                  "--verifier-model", "v"], env=env)
    assert result.exit_code == 0, result.output
    s = LLMSettings.model_validate_json(result.output)
    assert s.model == "env-model" and s.temperature == 0.1 and s.max_tokens == 300
    assert s.dry_run and s.budget_usd == 2.0 and s.roles["verifier"].model == "v"
    assert "sk-secret-key" not in result.output  # SecretStr

    other = write(tmp_path, '[llm]\nmodel = "other"\n', "other.toml")
    result = runner.invoke(show, ["--config", other], env={"GOLDEN_MODEL": ""})
    assert LLMSettings.model_validate_json(result.output).model == "other"


def test_bad_config_through_the_cli_exits_2(tmp_path, monkeypatch):
    import subprocess
    import sys

    monkeypatch.chdir(tmp_path)
    write(tmp_path, '[llm]\nmax_tokens = "many"\n')
    code = ("import click, sys\nfrom builder.llm.setup import llm_options\n"
            "from builder.cli import golden, main, COMMANDS\n"
            "@golden.command('probe')\n@llm_options\ndef probe(llm_settings): pass\n"
            "golden.get_command = lambda ctx, name: probe\nmain(['probe'])\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == ("golden: error: golden.toml:2: llm.max_tokens: "
                                   "Input should be a valid integer, got 'many'")
