"""Benchmark: three annotators review one 100,000-candidate database at once, each a real
`golden review` process in its own real terminal (tmux, 160x50), for 60 s.

Driven the way people drive it: keys sent with `tmux send-keys` (mostly accept, some skip and
reject), the screen read back with `tmux capture-pane`. Reports:
- decisions per second, all three together (limited by the driver's round trips as much as
  by golden: every key waits until the next item is on screen);
- duplicated non-overlap decisions: candidates outside the overlap share accepted or rejected
  by more than one annotator (target 0); overlap items decided by 2 (expected, `--overlap 2`
  on 10%); skipped items another annotator then decided (expected: a skip hands an item on);
- lost decisions: decision keys the screens took (the next item appeared) minus decision rows
  in the review log (target 0);
- first screen (launch -> first candidate on screen) and next-item latency (key -> the next
  candidate's id on screen), median and p95, measured the same way on a bare Textual app (a
  Static and a Footer; a key updates the Static) in the same tmux server, same run: reported
  as ratios (MEASURED.md: a real terminal adds start-up that headless runs do not show).

    python bench/bench_review_team.py [--n 100000] [--seconds 60] [--db PATH]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from builder.store import Store  # noqa: E402
from builder.store.review_overlap import overlap_slot  # noqa: E402
from tests.support.rows import add_candidates  # noqa: E402

COLS, ROWS = 160, 50
SOCKET = f"golden-bench-{os.getpid()}"
CURRENT = re.compile(r"▕ ?(c\d{6})\s*$", re.M)
GOLDEN = [sys.executable, "-m", "builder.cli"]
BARE_APP = textwrap.dedent("""
    from textual.app import App
    from textual.widgets import Footer, Static

    class Bare(App):
        BINDINGS = [("n", "next", "Next"), ("q", "quit", "Quit")]
        count = 0

        def compose(self):
            yield Static("item 0", id="item")
            yield Footer()

        def action_next(self):
            self.count += 1
            self.query_one("#item", Static).update(f"item {self.count}")

    Bare().run()
""")


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True,
                          check=False).stdout


def start(name: str, command: str) -> float:
    """Open a tmux window running `command`; returns the launch time."""
    t = time.perf_counter()
    if not tmux("list-sessions"):
        tmux("new-session", "-d", "-s", "bench", "-n", name, "-x", str(COLS), "-y", str(ROWS),
             command)
    else:
        tmux("new-window", "-t", "bench", "-n", name, command)
    return t


def screen(target: str) -> str:
    return tmux("capture-pane", "-p", "-t", f"bench:{target}")


def wait_for(target: str, pattern: re.Pattern, since: float, timeout: float = 60,
             not_value: str | None = None) -> tuple[str | None, float]:
    """Poll the pane until `pattern` matches (with a first group != not_value)."""
    deadline = since + timeout
    while time.perf_counter() < deadline:
        m = pattern.search(screen(target))
        if m and (not_value is None or m.group(1) != not_value):
            return m.group(1), time.perf_counter() - since
        time.sleep(0.005)
    return None, time.perf_counter() - since


def stats(name: str, samples: list[float]) -> tuple[float, float]:
    ms = sorted(s * 1000 for s in samples)
    if not ms:
        print(f"{name:<34} no samples")
        return float("nan"), float("nan")
    med, p95 = statistics.median(ms), ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    print(f"{name:<34} median {med:7.1f} ms   p95 {p95:7.1f} ms   (n={len(ms)})")
    return med, p95


def bare_app(rounds: int) -> tuple[float, list[float]]:
    path = Path(tempfile.mkdtemp(prefix="golden-bench-bare-")) / "bare.py"
    path.write_text(BARE_APP)
    t = start("bare", f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}")
    item = re.compile(r"item (\d+)")
    _, first = wait_for("bare", item, t)
    samples, value = [], "0"
    for _ in range(rounds):
        sent = time.perf_counter()
        tmux("send-keys", "-t", "bench:bare", "n")
        value, took = wait_for("bare", item, sent, 10, not_value=value)
        samples.append(took)
    tmux("send-keys", "-t", "bench:bare", "q")
    return first, samples


def build(db: str, n: int) -> None:
    t = time.perf_counter()
    with Store(db) as s:
        add_candidates(s, n)
    print(f"built {n} candidates in {time.perf_counter() - t:.1f} s: {db}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    db = args.db or os.path.join(tempfile.mkdtemp(prefix="golden-bench-team-"), "bench.db")
    if Path(db).exists():
        sys.exit(f"{db} exists: give a new path (the benchmark needs an unreviewed database)")
    build(db, args.n)
    print(f"cpus: {os.cpu_count()}  load: {os.getloadavg()[0]:.1f}  (machine shared)")
    rng = random.Random(1)
    names = [f"ann{i + 1}" for i in range(args.annotators)]
    try:
        bare_first, bare_next = bare_app(40)
        firsts, nexts = {}, []
        env = f"cd {shlex.quote(str(ROOT))} && "
        for i, name in enumerate(names):
            overlap = " --overlap 2 --overlap-share 0.1" if i == 0 else ""
            t = start(name, env + " ".join(shlex.quote(x) for x in GOLDEN)
                      + f" --db {shlex.quote(db)} review --annotator {name}{overlap}")
            current, firsts[name] = wait_for(name, CURRENT, t, 120)
            if current is None:
                sys.exit(f"{name}: no first screen:\n{screen(name)}")
            if i == 0:  # alone first, as the bare app was: the fair latency comparison
                alone, value = [], current
                for _ in range(40):
                    at = time.perf_counter()
                    tmux("send-keys", "-t", f"bench:{name}", "n")
                    value, took = wait_for(name, CURRENT, at, 30, not_value=value)
                    alone.append(took)
                tmux("send-keys", "-t", f"bench:{name}", "x")  # back to the queue's start
                time.sleep(1)
        sent = {name: 0 for name in names}
        current = {name: CURRENT.search(screen(name)).group(1) for name in names}
        started = time.perf_counter()
        while time.perf_counter() - started < args.seconds:
            at = {}
            for name in names:
                roll = rng.random()
                keys = ["a"] if roll < 0.8 else (["s"] if roll < 0.9 else ["r", "1"])
                at[name] = time.perf_counter()
                tmux("send-keys", "-t", f"bench:{name}", *keys)
            for name in names:
                value, took = wait_for(name, CURRENT, at[name], 30, not_value=current[name])
                if value is None:
                    sys.exit(f"{name}: the next item never came:\n{screen(name)}")
                sent[name] += 1
                current[name] = value
                nexts.append(took)
        elapsed = time.perf_counter() - started
        for name in names:
            tmux("send-keys", "-t", f"bench:{name}", "q")
        deadline = time.monotonic() + 60
        while "ann" in tmux("list-windows", "-a") and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        tmux("kill-server")

    with Store(db) as s:
        logged = dict(s.conn.execute(
            "SELECT annotator, count(*) FROM review_log WHERE action IN ('accept', 'reject',"
            " 'skip') GROUP BY annotator").fetchall())
        # A skip hands the item on (it is offered to the others): only accept/reject count.
        by_item = s.conn.execute(
            "SELECT candidate_id, count(DISTINCT annotator) FROM review_log WHERE action IN"
            " ('accept', 'reject') GROUP BY candidate_id").fetchall()
        skipped_then_decided = s.conn.execute(
            "SELECT count(DISTINCT s.candidate_id) FROM review_log s JOIN review_log d"
            " ON d.candidate_id = s.candidate_id AND d.annotator <> s.annotator"
            " AND d.action IN ('accept', 'reject') WHERE s.action = 'skip'").fetchone()[0]
        leases = s.conn.execute("SELECT count(*) FROM review_leases").fetchone()[0]
    duplicated = sum(1 for cid, n in by_item if n > 1 and overlap_slot(cid) >= 0.1)
    overlap_twice = sum(1 for cid, n in by_item if n > 1 and overlap_slot(cid) < 0.1)
    total = sum(sent.values())
    lost = sum(sent.values()) - sum(logged.get(n, 0) for n in names)
    print(f"{'decisions (keys the screens took)':<34} {total} in {elapsed:.1f} s: "
          f"{total / elapsed:.1f} decisions/s ({', '.join(f'{n} {sent[n]}' for n in names)})")
    print(f"{'decision rows in the review log':<34} {sum(logged.values())}   lost: {lost}")
    print(f"{'duplicated non-overlap decisions':<34} {duplicated}   (overlap items decided by 2:"
          f" {overlap_twice}; skipped items decided by another: {skipped_then_decided}; leases"
          f" left after quit: {leases})")
    first_ms = {n: f * 1000 for n, f in firsts.items()}
    print(f"{'first screen, golden review':<34} " + "  ".join(
        f"{n} {v:.0f} ms" for n, v in first_ms.items()) + "  (3rd starts while 2 run)")
    print(f"{'first screen, bare Textual app':<34} {bare_first * 1000:.0f} ms")
    ours_alone = stats("next item (n), golden review alone", alone)
    ours_next = stats("next item after a decision, 3 at once", nexts)
    bare = stats("next item, bare Textual app alone", bare_next)
    print(f"ratio first screen golden / bare: {first_ms[names[0]] / (bare_first * 1000):.1f}x"
          f" (first annotator)   next item median golden / bare: "
          f"{ours_alone[0] / bare[0]:.1f}x alone, {ours_next[0] / bare[0]:.1f}x with 3 "
          f"annotators deciding on 2 cores")
    print(f"targets: duplicated 0 and lost 0: {'MET' if duplicated == 0 and lost == 0 else 'MISSED'}")


if __name__ == "__main__":
    main()
