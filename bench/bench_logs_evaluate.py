"""Benchmark: `golden logs evaluate` of a 2% sample with a scripted judge, against the judge's
own work on the same records in the same run.

The judge is scripted (tests/support/logs.py: decides from the texts, no model), so the figures
measure golden's part: picking the sample (an index range over `sample_key`), reading the
records and their contexts, running `builder.score.judge.judge_records`, storing the outcomes,
building the report (summary, bad cases, trends) and rendering it as JSON, Markdown and HTML.

Figures:
- evaluate, first run: everything above, with every sampled record judged;
- evaluate, again: nothing new to judge (outcomes stored): the report alone;
- reference: `judge_records` alone on the same inputs (built in memory beforehand): the cost
  of the scripted judge itself; evaluate / reference is golden's overhead around it.
- peak RSS of this process.

    python bench/bench_logs_evaluate.py --db /tmp/bl1m/golden.db   # the import bench's database
    python bench/bench_logs_evaluate.py --lines 100000             # or a fresh one
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from builder.logs.evaluate import ASPECTS, EvaluateOptions, _judge_input, evaluate_logs  # noqa: E402
from builder.score.html import render_html  # noqa: E402
from builder.score.judge import judge_records  # noqa: E402
from builder.score.report import render_json, render_markdown  # noqa: E402
from builder.store import Store  # noqa: E402
from builder.store.logs import context_texts, sample_records  # noqa: E402
from tests.fakes import ScriptedLLM  # noqa: E402
from tests.support.logs import log_judge  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--rate", type=float, default=0.02)
    args = parser.parse_args()
    db = args.db
    if db is None:
        work = Path(tempfile.mkdtemp(prefix="bench-logs-eval-"))
        subprocess.run([sys.executable, str(Path(__file__).with_name("bench_logs_import.py")),
                        "--lines", str(args.lines), "--keep", str(work)], check=True)
        db = work / "golden.db"
    llm = ScriptedLLM(log_judge, model="scripted-judge")

    @contextlib.contextmanager
    def open_judge():
        yield llm

    options = EvaluateOptions(rate=args.rate, period="day", periods=30)
    with Store(db) as store:
        store.conn.execute("DELETE FROM log_evaluations")
        records = store.query("SELECT count(*) AS n FROM log_records")[0]["n"]
        t = time.perf_counter()
        report = evaluate_logs(store, options, judge_model="scripted-judge",
                               open_judge=open_judge, concurrency=8)
        texts = [render_json(report), render_markdown(report), render_html(report)]
        first = time.perf_counter() - t
        calls = len(llm.calls)
        t = time.perf_counter()
        again = evaluate_logs(store, options, judge_model="scripted-judge",
                              open_judge=open_judge, concurrency=8)
        render_json(again), render_markdown(again), render_html(again)
        second = time.perf_counter() - t
        assert len(llm.calls) == calls, "the second run judged again"
        sample = [r for r in sample_records(store, args.rate) if r.get("answer")]
        contexts = context_texts(store, (h for r in sample for h in r["context_hashes"] or []))
        inputs = [_judge_input(store, r, options.max_contexts, contexts) for r in sample]
        t = time.perf_counter()
        judge_records(ScriptedLLM(log_judge), inputs, max_contexts=options.max_contexts,
                      concurrency=8, metrics=ASPECTS)
        reference = time.perf_counter() - t
        store.conn.execute("DELETE FROM log_evaluations")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    judged = report["counts"]["judged"]
    print(f"{records:,} records; sample at rate {args.rate:g} plus flagged: "
          f"{report['logs']['sampled']:,} sampled + {report['logs']['flagged_only']:,} flagged "
          f"= {judged:,} judged with {calls:,} scripted calls; "
          f"{len(report['bad_cases']):,} bad cases; report {sum(map(len, texts)) / 1e6:.1f} MB")
    print(f"  evaluate, first run: {first:.1f} s ({judged / first:,.0f} records/s)")
    print(f"  evaluate, again (nothing to judge): {second:.1f} s")
    print(f"  reference, judge_records alone on the same {len(inputs):,} inputs: "
          f"{reference:.1f} s -> evaluate takes {first / reference:.2f}x the judge's own time")
    print(f"  peak RSS of this process: {rss:.0f} MB")


if __name__ == "__main__":
    main()
