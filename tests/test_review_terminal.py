"""`golden review` in a real terminal (a pseudo-terminal, as tmux gives it): SIGTERM and SIGHUP
leave the way `q` does, so the terminal gets its normal screen and mouse back, and a decision
made just before is saved."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import shlex
import shutil
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


def _gone(pid: int, proc: subprocess.Popen | None, seconds: float) -> bool:
    """Wait (bounded) until the process has ended."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None:
            if proc.poll() is not None:
                return True
        else:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
        time.sleep(0.1)
    return False


def test_a_signal_ends_the_app_even_when_its_terminal_stopped_reading(tmp_path):
    """A window that no longer reads its pty: Textual's writer thread blocks, its queue fills
    and its shutdown waits on it forever; SIGTERM must still end the process."""
    db = tmp_path / "g.db"
    with Store(db) as s:
        add_candidates(s, 5)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOLDEN_", "OPENAI_"))}
    env.update(TERM="xterm-256color", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "builder.cli", "--db", str(db), "review", "--annotator", "ann"],
        stdin=slave, stdout=slave, stderr=slave, env=env, cwd=tmp_path,
        start_new_session=True)
    os.close(slave)
    output = bytearray()
    try:
        _read(master, output, b"Answer 0", 90)
        assert b"Answer 0" in output, output[-2000:]
        os.write(master, b"a")
        _read(master, output, b"Answer 1", 30)
        for _ in range(300):  # redraws nobody reads: the pty's buffer fills
            os.write(master, b"np")
            time.sleep(0.005)
        time.sleep(1)
        proc.send_signal(signal.SIGTERM)
        gone = _gone(proc.pid, proc, 60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert gone, "the review UI still ran a minute after SIGTERM"
    assert proc.returncode == 128 + signal.SIGTERM
    with Store(db) as s:
        rows = s.query("SELECT id, status FROM candidates WHERE status <> 'pending'")
        leases = s.query("SELECT count(*) AS n FROM review_leases")[0]["n"]
    assert rows == [{"id": "c000000", "status": "accepted"}] and leases == 0


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_closing_its_tmux_session_ends_the_app(tmp_path):
    db = tmp_path / "g.db"
    with Store(db) as s:
        add_candidates(s, 5)
    session = f"golden-test-{os.getpid()}"
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    env["PYTHONPATH"] = str(ROOT)
    command = (f"exec {shlex.quote(sys.executable)} -m builder.cli --db {shlex.quote(str(db))}"
               f" review --annotator ann")
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24",
                    command], check=True, env=env, cwd=tmp_path)
    try:
        pid = int(subprocess.run(["tmux", "display-message", "-p", "-t", session,
                                  "#{pane_pid}"], capture_output=True, text=True, env=env,
                                 check=True).stdout)
        for _ in range(900):
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                                    capture_output=True, text=True, env=env).stdout
            if "Answer 0" in screen:
                break
            time.sleep(0.1)
        assert "Answer 0" in screen, screen
        subprocess.run(["tmux", "send-keys", "-t", session, "a"], env=env, check=True)
        time.sleep(1)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], env=env,
                       stderr=subprocess.DEVNULL)
    assert _gone(pid, None, 60), "the review UI still ran a minute after its terminal closed"
    with Store(db) as s:
        rows = s.query("SELECT id, status FROM candidates WHERE status <> 'pending'")
        leases = s.query("SELECT count(*) AS n FROM review_leases")[0]["n"]
    assert rows == [{"id": "c000000", "status": "accepted"}] and leases == 0
