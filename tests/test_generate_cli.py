"""`golden generate` through the real CLI (dry run only: tests never call a model)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from builder.cli import golden, main
from builder.store import Store

from tests.support.scripted_kb import build_kb


def test_dry_run_prints_estimate_and_writes_nothing(tmp_path):
    db = tmp_path / "g.db"
    build_kb(db).close()
    result = CliRunner().invoke(golden, [
        "--db", str(db), "generate", "--n", "10", "--dry-run", "--model", "gpt-4o-mini",
        "--base-url", "http://127.0.0.1:9/v1", "--api-key", "sk-test-not-real"])
    assert result.exit_code == 0, result.output
    # one question and one round trip per span the run would ask first, two calls per
    # composed item a model phrases (code writes comparatives and reasoning items)
    assert "dry run" in result.output and "question=" in result.output
    assert "reader=" in result.output and "compose_multi_hop=2" in result.output
    assert "compose_comparative" not in result.output
    assert "verified," not in result.output  # no progress line: nothing runs
    assert "sk-test-not-real" not in result.output
    store = Store(db)
    for table in ("candidates", "facts", "stage_done"):
        assert store.query(f"SELECT count(*) AS n FROM {table}")[0]["n"] == 0


@pytest.mark.parametrize("args, message", [
    (["--mix", "single_hop=lots"], "--mix"),
    (["--types", "single_hop,trivia"], "--types"),
    (["--types", ","], "--types"),
])
def test_bad_options_exit_2_with_one_line(tmp_path, capsys, args, message):
    db = tmp_path / "g.db"
    build_kb(db).close()
    with pytest.raises(SystemExit) as exit_info:
        main(["--db", str(db), "generate", "--dry-run", "--model", "m",
              "--base-url", "http://127.0.0.1:9/v1", *args])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_empty_knowledge_base_is_an_input_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--db", str(tmp_path / "empty.db"), "generate", "--dry-run", "--model", "m",
              "--base-url", "http://127.0.0.1:9/v1"])
    assert exit_info.value.code == 2
    assert "golden ingest" in capsys.readouterr().err
