"""The concurrent-writers check of tests/test_reliability_concurrency.py for 60 s (issue 8,
item 3, long version). Run by hand: python -m pytest -m stress tests/stress -s"""

from __future__ import annotations

import pytest

from tests.concurrency_harness import format_figures, run_concurrent


@pytest.mark.stress
def test_generator_and_two_reviewers_for_a_minute(tmp_path):
    fig = run_concurrent(tmp_path, 60, seed=2, seeded=2000)
    print("\n" + format_figures(fig))
    assert fig["driver_errors"] == [] and fig["driver_exits"] == [0, 0]
    assert fig["generator_exit"] == 0 and fig["writer_errors"] == []
    assert fig["locked"] == 0 and fig["locked_in_stderr"] == 0
    assert fig["problems"] == [] and fig["write_errors"] == 0
