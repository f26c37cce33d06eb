"""What every test gets: isolation, and the fixtures the test modules share.

Isolation (autouse): each test runs in its own temporary working folder (`tmp_path`), with
every `GOLDEN_*` and `OPENAI_*` environment variable removed, so a developer's own
`golden.toml`, `golden.db`, API key, base URL, model or prompts folder can never change a
result or be written to. Tests that need a setting set it themselves (`monkeypatch.setenv`).
`GOLDEN_CRASH_SEED` is kept: it is a knob of the crash tests, not a golden setting.
`GOLDEN_LOCAL_ENGINE` is set to `llama-cpp-python`, so the embedded server is the same on every
machine, whatever else is installed; the tests of the other engines name theirs.

The helpers behind the fixtures live in `tests/support/`.
"""

from __future__ import annotations

import os

import pytest

from builder.cli import main
from tests.support.scripted_kb import build_kb

SUITE_KNOBS = {"GOLDEN_CRASH_SEED"}


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith(("GOLDEN_", "OPENAI_")) and name not in SUITE_KNOBS:
            monkeypatch.delenv(name)
    monkeypatch.setenv("GOLDEN_LOCAL_ENGINE", "llama-cpp-python")
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def kb_store(tmp_path):
    """The scripted knowledge base (tests/support/scripted_kb.py) in `tmp_path/g.db`."""
    store = build_kb(tmp_path / "g.db")
    yield store
    store.close()


@pytest.fixture
def golden_cli(capsys):
    """Run `golden ARGS` in-process the way the console script does (error mapping and exit
    codes included): returns (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        with pytest.raises(SystemExit) as exit_info:
            main(list(args))
        captured = capsys.readouterr()
        return exit_info.value.code, captured.out, captured.err

    return run
