"""Benchmark: the review UI on 100,000 candidates, headless (run_test, 160x50).

Targets (issue): first screen ready < 1 s; next candidate, accept, applying a filter and a
free-text search each < 50 ms median and < 150 ms p95, timed by awaiting the app's own action
handlers (Pilot.press adds idle waits). "First screen ready" ends when Pilot.pause() returns,
which waits for the whole PROCESS to go idle (CPU time of every thread, up to 1 s): the
background count thread is part of it. Also printed: a bare Textual app's start, same run.
Reference, in the same run: a DataTable holding every row (a design measured earlier on a
2-core machine with Textual 8.2.8 at 7.6 s first screen and 159 MB RSS, most of it the
DataTable's idle-time dimension update over every cell), reported as ratios.

`--tmux`: the first frame in a real terminal instead (issue 32: target <= 1.5x a bare Textual
app). Each round starts `golden review` (as `python -m builder.cli`) and a bare Textual app in
a tmux session of the same size, one after the other (order alternating), and polls
`tmux capture-pane` until the first item's answer (resp. the bare app's text) is on screen.
Headless run_test timings leave out the interpreter start and the imports; this does not.
Also paired: `import review_tui.app` against `import textual.app`, each in a fresh process.
Each command carries its environment on its command line (`env PYTHONPATH=...`): a tmux
server already running (another session's) starts commands with ITS environment, not ours,
and `golden review` then ran whatever checkout the installed package points at.
Bytecode: Textual's is compiled in site-packages; by default golden's is compiled once before
the rounds (into its `__pycache__`), as a user's is after the first run; `--bytecode source`
removes golden's `__pycache__` folders and measures it compiled from source on every start, as
when PYTHONDONTWRITEBYTECODE is set in the environment (as it is in ours: ~100 ms more).

    python bench/bench_review_tui.py [--n 100000] [--db PATH] [--no-reference] [--tmux]
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from builder.store import Store  # noqa: E402
from builder.store import review_log, review_queue  # noqa: E402
from tests.support.rows import add_candidates  # noqa: E402

SIZE = (160, 50)


async def timed(step, rounds: int, settle=None) -> list[float]:
    """Seconds per call of `step(i)` (awaited when it returns an awaitable); `settle()` is
    awaited after each call, outside the timing."""
    samples = []
    for i in range(rounds):
        t = time.perf_counter()
        result = step(i)
        if inspect.isawaitable(result):
            await result
        samples.append(time.perf_counter() - t)
        if settle is not None:
            await settle()
    return samples


def summary(name: str, samples: list[float]) -> tuple[float, float]:
    ms = sorted(s * 1000 for s in samples)
    med = statistics.median(ms)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    print(f"{name:<28} median {med:7.2f} ms   p95 {p95:7.2f} ms   (n={len(ms)})")
    return med, p95


async def bench_review(db: str, rounds: int) -> dict:
    from review_tui.app import ReviewApp

    out: dict = {}
    t0 = time.perf_counter()
    app = ReviewApp(db, "bench")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        out["first"] = time.perf_counter() - t0
        screen = app.screen
        assert screen.current_id is not None
        print(f"{'first screen ready':<28} {out['first'] * 1000:7.0f} ms")
        await screen._refresh_worker.wait()
        print(f"{'rows in the queue':<28} {screen.list.count}")

        samples = await timed(lambda i: screen.run_action("move(1)"), rounds)
        out["next"] = summary("next candidate (n)", samples)

        samples = await timed(lambda i: screen.run_action("decide('accept')"), rounds)
        out["accept"] = summary("accept (a)", samples)
        t = time.perf_counter()
        await app.writer.drain()
        print(f"{'writes drained after':<28} {(time.perf_counter() - t) * 1000:7.1f} ms")

        filters = [review_queue.CandidateFilter(type="reasoning"), review_queue.CandidateFilter(difficulty="hard"),
                   review_queue.CandidateFilter(status="pending"), review_queue.CandidateFilter(sort="newest"),
                   review_queue.CandidateFilter(verdict=None, duplicates="include"),
                   review_queue.CandidateFilter(status="accepted"), review_queue.CandidateFilter(sort="type"),
                   review_queue.CandidateFilter(document_id="doc1.md"), review_queue.CandidateFilter(tag="bench"),
                   review_queue.CandidateFilter()]
        samples, per_filter = [], {}
        for i in range(rounds):
            f = filters[i % len(filters)]
            t = time.perf_counter()
            screen.apply_filter(f)
            samples.append(time.perf_counter() - t)
            per_filter.setdefault(f.describe(), []).append(samples[-1])
            if i % 10 == 9:  # let the background counts finish now and then, as a human would
                await screen.settle()
            await asyncio.sleep(0)
        out["filter"] = summary("apply a filter", samples)
        for name, values in per_filter.items():
            print(f"    {statistics.median(values) * 1000:6.1f} ms  {name}")
        await screen.settle()
        samples = await timed(
            lambda i: screen.apply_filter(review_queue.CandidateFilter(text=f"Question {4242 + i}")), 20,
            settle=screen.settle)
        out["search"] = summary("free-text search (trigram)", samples)
        await screen.settle()
        t = time.perf_counter()
        await screen.settle()
        print(f"{'background count+stats':<28} {(time.perf_counter() - t) * 1000:7.1f} ms")
        # Broad text (~11k matches): the LIKE walk in sort order serves the page instead.
        samples = await timed(lambda i: screen.apply_filter(review_queue.CandidateFilter(text=f"Answer {i}")),
                              10, settle=screen.settle)
        summary("broad search (LIKE walk)", samples)
        t = time.perf_counter()
        await screen.settle()
        print(f"{'  its background count':<28} {(time.perf_counter() - t) * 1000:7.1f} ms")
        screen.apply_filter(review_queue.CandidateFilter())
        await screen.settle()
        # With rendering: press + paint, for the feel of it (includes Pilot idle waits).
        samples = await timed(lambda i: pilot.press("n"), 20)
        summary("n incl. Pilot + repaint", samples)
    return out


LONG_LINES = 10_000


async def bench_long_answer(db: str, rounds: int = 10) -> dict:
    """Moving onto an item whose answer has 10,000 lines, and back, each with its repaint
    (Pilot.pause waits until the app is idle), against the same moves between short items."""
    from review_tui.app import ReviewApp

    with Store(db) as s, s.write():
        long_answer = "\n".join(f"Step {i}: a line of a very long answer." for i in range(LONG_LINES))
        s.conn.execute("UPDATE candidates SET answer = ? WHERE id = 'c000001'", (long_answer,))
    out = {}
    try:
        app = ReviewApp(db, "bench")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.screen
            await screen.settle()
            for name, target in (("short", "c000002"), ("long", "c000001")):
                samples = []
                for _ in range(rounds):
                    for cid in (target, "c000003"):
                        t = time.perf_counter()
                        screen.show_candidate(cid)
                        await pilot.pause()
                        samples.append(time.perf_counter() - t)
                out[name] = summary(f"move to/from a {name} answer", samples)
        print(f"{'ratio long / short':<28} {out['long'][0] / out['short'][0]:.1f}x (median)")
    finally:
        with Store(db) as s, s.write():
            s.conn.execute("UPDATE candidates SET answer = 'Answer 1' WHERE id = 'c000001'")
    return out


async def bench_bare_app() -> float:
    """Textual's own floor: an app with one Static, same size, same machine, same moment."""
    from textual.app import App
    from textual.widgets import Footer, Static

    class Bare(App):
        def compose(self):
            yield Static("hello")
            yield Footer()

    t0 = time.perf_counter()
    async with Bare().run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = time.perf_counter() - t0
    print(f"{'bare Textual app ready':<28} {first * 1000:7.0f} ms")
    return first


async def bench_reference(db: str, rounds: int) -> dict:
    """The DataTable-with-all-rows design, reading the same rows."""
    from rich.text import Text
    from textual.app import App
    from textual.widgets import DataTable

    store = Store(db)
    rows = store.query("SELECT status, type, difficulty, substr(question, 1, 240) AS q"
                       " FROM candidates ORDER BY created_at")
    store.close()

    class Reference(App):
        def compose(self):
            yield DataTable()

        def on_mount(self):
            table = self.query_one(DataTable)
            table.add_columns("status", "type", "difficulty", "question")
            table.add_rows([tuple(Text(str(v)) for v in r.values()) for r in rows])

    out: dict = {}
    t0 = time.perf_counter()
    app = Reference()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        out["first"] = time.perf_counter() - t0
        print(f"{'ref: first screen ready':<28} {out['first'] * 1000:7.0f} ms")
        table = app.query_one(DataTable)
        samples = await timed(lambda i: table.action_cursor_down(), rounds)
        out["next"] = summary("ref: next row", samples)
    return out


BARE_APP = """
from textual.app import App
from textual.widgets import Footer, Static

class Bare(App):
    def compose(self):
        yield Static("bare textual app ready")
        yield Footer()

Bare().run()
"""


FIRST_FRAME_PROBE = """
import runpy, sys, time
from importlib.machinery import PathFinder

out, marker, kind, target, *args = sys.argv[1:]
written = []


def patch(driver_module):
    write = driver_module.LinuxDriver.write

    def probe(self, data):
        if not written and marker in data:
            written.append(time.process_time())
            with open(out, "w") as f:
                f.write(repr(written[0]))
        return write(self, data)

    driver_module.LinuxDriver.write = probe


class PatchOnImport:
    def find_spec(self, name, path, target=None):
        if name != "textual.drivers.linux_driver":
            return None
        sys.meta_path.remove(self)
        spec = PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            patch(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, PatchOnImport())
sys.argv = [target, *args]
if kind == "module":
    runpy.run_module(target, run_name="__main__", alter_sys=True)
else:
    runpy.run_path(target, run_name="__main__")
"""
"""Runs an app (a module or a script) and writes the process's CPU time (every thread) when
`marker` is first handed to the terminal: less disturbed by a loaded machine than the wall
time. Textual's driver is wrapped when the app imports it, so the app's imports happen as
they would without the probe (in their order, under its GC setting)."""


def probed(probe: Path, cpu_file: Path, marker: str, kind: str, target: str,
           args: list[str]) -> list[str]:
    return [sys.executable, str(probe), str(cpu_file), marker, kind, target, *args]


def cpu_at_first_frame(cpu_file: Path, wait: float = 5.0) -> float:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            text = cpu_file.read_text()
            if text:
                cpu_file.unlink()
                return float(text)
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    raise RuntimeError(f"no CPU time written to {cpu_file}")


def first_frame_in_tmux(command: list[str], marker: str, size: tuple[int, int],
                        timeout: float = 60.0) -> float:
    """Seconds from starting `command` in a new tmux session until `marker` is on screen."""
    session = f"bench-{os.getpid()}-{time.monotonic_ns()}"
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    shell = " ".join(subprocess.list2cmdline([c]) for c in command)
    t0 = time.perf_counter()
    pane = subprocess.run(["tmux", "new-session", "-d", "-P", "-F", "#{pane_pid}", "-s", session,
                           "-x", str(size[0]), "-y", str(size[1]), shell], check=True, env=env,
                          capture_output=True, text=True).stdout.strip()
    try:
        while time.perf_counter() - t0 < timeout:
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                                    capture_output=True, text=True, env=env).stdout
            if marker in screen:
                return time.perf_counter() - t0
            time.sleep(0.01)
        raise RuntimeError(f"{marker!r} never appeared; last screen:\n{screen}")
    finally:
        tree = _process_tree(int(pane)) if pane.isdigit() else []
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], env=env)
        time.sleep(0.3)  # let the review app release its leases
        subprocess.run(["tmux", "kill-session", "-t", session], env=env,
                       stderr=subprocess.DEVNULL)
        _end_processes(tree)


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _process_tree(pid: int) -> list[int]:
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo += _children(p)
    return tree


def _end_processes(pids: list[int], grace: float = 3.0) -> None:
    """What a round started must not outlive it: an app that did not quit on `q` and the
    closed terminal (seen in the runs of issue 32, piling up and loading the machine) is
    killed after `grace` seconds. Only this round's processes: the pane's process and its
    descendants, by the pids taken before the round ended."""
    deadline = time.monotonic() + grace
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if _running(p)]
    for p in alive:
        try:
            os.kill(p, 9)
            print(f"  (killed pid {p}: still running {grace:.0f} s after its round)")
        except ProcessLookupError:
            pass


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def import_seconds(module: str, env: dict[str, str] | None = None) -> float:
    """Wall time of `python -c "import module"` minus that of `python -c pass`, both run now."""
    def run(code: str) -> float:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        return time.perf_counter() - t
    return run(f"import {module}") - run("pass")


def python_env(root: str, cached: bool) -> dict[str, str]:
    """What a Python process of golden at `root` is started with: the checkout first on the
    path; bytecode read from (and written to) `__pycache__` when `cached`, else compiled from
    source on every start. An empty value means: unset."""
    return {"PYTHONPATH": root, "PYTHONDONTWRITEBYTECODE": "" if cached else "1"}


def with_env(env: dict[str, str], command: list[str]) -> list[str]:
    """`command` run under `env` whatever environment the tmux server has."""
    unset = [f"-u{k}" for k, v in env.items() if v == ""]
    return ["env", *unset, *(f"{k}={v}" for k, v in env.items() if v != ""), *command]


PACKAGES = ("builder", "review_tui")


def compile_bytecode(root: str) -> None:
    """Compile golden's packages at `root` (their `__pycache__`, ignored by git), untimed."""
    packages = [str(Path(root) / p) for p in PACKAGES]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], check=True,
                   stdout=subprocess.DEVNULL)


def drop_bytecode(root: str) -> None:
    """Remove the `__pycache__` folders of golden's packages at `root`: with
    PYTHONDONTWRITEBYTECODE set Python still reads bytecode it finds."""
    for package in PACKAGES:
        for folder in (Path(root) / package).rglob("__pycache__"):
            shutil.rmtree(folder)


def drop_leases(db: str) -> None:
    """Every round starts from no lease: a round's app killed before it released its leases
    (its grace ran out on a loaded machine) left the first items held, and the next round
    opened another item than the one its marker names."""
    conn = sqlite3.connect(db, timeout=30)
    try:
        with conn:
            conn.execute("DELETE FROM review_leases")
    finally:
        conn.close()


def _rounds(rounds, commands, size, wall, cpu, imports_ours, imports_theirs,
            import_env=None, db=None) -> None:
    """`commands`: name -> (command, marker, cpu file); wall and cpu: name -> list."""
    names = list(commands)
    for i in range(rounds):
        for name in (names if i % 2 == 0 else names[::-1]):
            command, marker, cpu_file = commands[name]
            if db is not None:
                drop_leases(db)
            wall[name].append(first_frame_in_tmux(command, marker, size))
            cpu[name].append(cpu_at_first_frame(cpu_file))
        pair = [("ours", "review_tui.app"), ("bare", "textual.app")]
        for name, module in (pair if i % 2 == 0 else pair[::-1]):
            (imports_ours if name == "ours" else imports_theirs).append(
                import_seconds(module, import_env))


def bench_tmux(db: str, rounds: int, size: tuple[int, int] = (80, 24),
               against: str | None = None, bytecode: str = "cached") -> dict:
    """First frame of `golden review` against a bare Textual app, paired, in tmux; with
    `against` (another checkout of golden), that checkout's `golden review` in the same
    rounds. `bytecode`: "cached" (golden's compiled once, before the rounds) or "source"."""
    if shutil.which("tmux") is None:
        raise SystemExit("--tmux needs tmux on PATH")
    root = str(Path(__file__).resolve().parents[1])
    scratch = Path(tempfile.mkdtemp(prefix="golden-bench-tmux-"))
    cached = bytecode == "cached"
    env_ours = python_env(root, cached)
    bare_script = scratch / "bare.py"
    bare_script.write_text(BARE_APP, encoding="utf-8")
    probe = scratch / "probe.py"
    probe.write_text(FIRST_FRAME_PROBE, encoding="utf-8")
    review_args = ["--db", db, "review", "--annotator"]
    commands = {
        "ours": (with_env(env_ours, probed(probe, scratch / "ours.cpu", "Answer 0", "module",
                                           "builder.cli", review_args + ["bench"])),
                 "Answer 0", scratch / "ours.cpu"),
        "bare": (with_env(env_ours, probed(probe, scratch / "bare.cpu", "bare textual app ready",
                                           "path", str(bare_script), [])),
                 "bare textual app ready", scratch / "bare.cpu"),
    }
    if against is not None:
        commands["before"] = (
            with_env(python_env(str(Path(against).resolve()), cached),
                     probed(probe, scratch / "before.cpu", "Answer 0", "module", "builder.cli",
                            review_args + ["bench-before"])),
            "Answer 0", scratch / "before.cpu")
    import_env = {k: v for k, v in {**os.environ, **env_ours}.items() if v != ""}
    for checkout in [root] + ([str(Path(against).resolve())] if against is not None else []):
        (compile_bytecode if cached else drop_bytecode)(checkout)
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    imports_ours, imports_theirs = [], []
    # A session that outlives the measured ones: killing the last session stops the tmux
    # server, and a new-session racing that shutdown fails.
    keeper = f"bench-keeper-{os.getpid()}"
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    subprocess.run(["tmux", "new-session", "-d", "-s", keeper, "sleep 86400"], check=True, env=env)
    try:
        _rounds(rounds, commands, size, wall, cpu, imports_ours, imports_theirs, import_env,
                db)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", keeper], env=env)
    ours, theirs, before = wall["ours"], wall["bare"], wall.get("before", [])
    med = statistics.median
    ratios = [a / b for a, b in zip(ours, theirs)]
    print(f"tmux {size[0]}x{size[1]}, {rounds} paired rounds, golden's bytecode {bytecode}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{'golden review first frame':<28} median {med(ours) * 1000:6.0f} ms  "
          f"(min {min(ours) * 1000:.0f}, max {max(ours) * 1000:.0f})")
    print(f"{'bare Textual app first frame':<28} median {med(theirs) * 1000:6.0f} ms  "
          f"(min {min(theirs) * 1000:.0f}, max {max(theirs) * 1000:.0f})")
    print(f"{'ratio ours / bare':<28} median {med(ratios):.2f}x  (per round: "
          f"{', '.join(f'{r:.2f}' for r in ratios)})")
    if before:
        print(f"{'before (' + str(against) + ')':<28} median {med(before) * 1000:6.0f} ms  "
              f"ratio before / bare {med([a / b for a, b in zip(before, theirs)]):.2f}x")
    print("CPU time of the process when its first frame is written (all threads), paired:")
    for name in cpu:
        ratio = med([a / b for a, b in zip(cpu[name], cpu["bare"])])
        print(f"  {name:<26} median {med(cpu[name]) * 1000:6.0f} ms  (min "
              f"{min(cpu[name]) * 1000:.0f}, max {max(cpu[name]) * 1000:.0f})  ratio / bare "
              f"{ratio:.2f}x")
    print(f"{'import review_tui.app':<28} median {med(imports_ours) * 1000:6.0f} ms")
    print(f"{'import textual.app':<28} median {med(imports_theirs) * 1000:6.0f} ms   "
          f"ratio {med(imports_ours) / med(imports_theirs):.2f}x")
    return {"ours": med(ours), "bare": med(theirs), "ratio": med(ratios),
            "cpu_ratio": med([a / b for a, b in zip(cpu["ours"], cpu["bare"])])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--db", default=None, help="reuse/keep this database file")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--tmux", action="store_true",
                        help="first frame in a real terminal (tmux), paired with a bare app")
    parser.add_argument("--tmux-rounds", type=int, default=7)
    parser.add_argument("--against", default=None,
                        help="with --tmux: another checkout of golden, measured in the same rounds")
    parser.add_argument("--bytecode", choices=("cached", "source"), default="cached",
                        help="with --tmux: golden's bytecode compiled once before the rounds "
                             "(as after a first run) or compiled from source on every start")
    parser.add_argument("--long", action="store_true",
                        help="only: moving onto a 10,000-line answer and back")
    args = parser.parse_args()

    db = args.db or os.path.join(tempfile.mkdtemp(prefix="golden-bench-review-"), "bench.db")
    if not Path(db).exists():
        t = time.perf_counter()
        with Store(db) as s:
            add_candidates(s, args.n)
            for i in range(0, args.n, 1000):  # a sparse tag, for the tag filter
                review_log.record_decision(s, f"c{i:06d}", "setup", "tag", tag="bench")
        print(f"built {args.n} candidates in {time.perf_counter() - t:.1f} s: {db}")
    else:
        with Store(db) as s:  # a reused file: start from an unreviewed queue
            with s.write():
                s.conn.execute("DELETE FROM review_log WHERE annotator <> 'setup'")
                s.conn.execute("DELETE FROM review_votes")
                s.conn.execute("DELETE FROM review_leases")
                s.conn.execute("UPDATE candidates SET status = 'pending', reviewer = NULL,"
                               " reviewed_at = NULL, votes = 0, conflict = 0,"
                               " adjudicated_by = NULL WHERE status <> 'pending' OR votes > 0")
    print(f"cpus: {os.cpu_count()}  load: {os.getloadavg()[0]:.1f}")
    if args.tmux:
        bench_tmux(db, args.tmux_rounds, against=args.against, bytecode=args.bytecode)
        return
    if args.long:
        asyncio.run(bench_long_answer(db))
        return
    bare = asyncio.run(bench_bare_app())
    ours = asyncio.run(bench_review(db, args.rounds))
    print(f"first screen minus bare app: {(ours['first'] - bare) * 1000:.0f} ms"
          f"   ratio ours / bare: {ours['first'] / bare:.1f}x")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'peak RSS (review app)':<28} {rss:7.0f} MB")
    ok = (ours["first"] < 1.0 and all(ours[k][0] < 50 and ours[k][1] < 150
                                      for k in ("next", "accept", "filter", "search")))
    print(f"targets (first < 1 s; median < 50 ms, p95 < 150 ms): {'MET' if ok else 'MISSED'}")
    if not args.no_reference:
        ref = asyncio.run(bench_reference(db, args.rounds))
        print(f"ratio first screen, reference / ours: {ref['first'] / ours['first']:.1f}x")
        print(f"ratio next median,  reference / ours: {ref['next'][0] / ours['next'][0]:.2f}x")


if __name__ == "__main__":
    main()
