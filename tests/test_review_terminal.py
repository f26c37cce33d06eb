"""`golden review` in a real terminal (a pseudo-terminal, as tmux gives it): SIGTERM and SIGHUP
leave the way `q` does, so the terminal gets its normal screen and mouse back, and a decision
made just before is saved."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from builder.store import Store
from tests.support.rows import add_candidates

ROOT = Path(__file__).resolve().parents[1]
ALT_SCREEN_OFF = b"\x1b[?1049l"
MOUSE_OFF = b"\x1b[?1000l"


def _read(master: int, output: bytearray, until: bytes | None, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                return
            if not chunk:
                return
            output.extend(chunk)
        if until is not None and until in output:
            return


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_restores_the_terminal_and_keeps_the_decision(tmp_path, sig):
    db = tmp_path / "g.db"
    with Store(db) as s:
        add_candidates(s, 5)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOLDEN_", "OPENAI_"))}
    env.update(TERM="xterm-256color", PYTHONPATH=str(ROOT), COLUMNS="80", LINES="24")
    proc = subprocess.Popen(
        [sys.executable, "-m", "builder.cli", "--db", str(db), "review", "--annotator", "ann"],
        stdin=slave, stdout=slave, stderr=slave, env=env, cwd=tmp_path,
        start_new_session=True)
    os.close(slave)
    output = bytearray()
    try:
        # the list shows questions before the first item is claimed; its answer shows
        # only in the detail pane, once the item is open
        _read(master, output, b"Answer 0", 90)
        assert b"Answer 0" in output, output[-2000:]
        os.write(master, b"a")
        _read(master, output, b"Answer 1", 30)
        time.sleep(0.5)  # the write goes to the writer thread; the signal comes right after
        proc.send_signal(sig)
        _read(master, output, None, 30)
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    tail = bytes(output[output.rfind(b"Answer 1"):])
    assert ALT_SCREEN_OFF in tail and MOUSE_OFF in tail
    assert code == 128 + sig
    with Store(db) as s:
        rows = s.query("SELECT id, status FROM candidates WHERE status <> 'pending'")
        leases = s.query("SELECT count(*) AS n FROM review_leases")[0]["n"]
    assert rows == [{"id": "c000000", "status": "accepted"}] and leases == 0
