"""Rendering a report dict (see `scoring`) as JSON, Markdown, HTML or a terminal summary, and
writing report files all-or-nothing (a reader never sees half a file).

Untrusted strings (questions, judge reasons, ids from the run) are always data: escaped for
Markdown/HTML, passed to rich as `Text` (never markup), with control characters made visible.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builder.errors import InputError
from builder.score.cells import (
    breakdown_columns, fmt, md_cell, md_table, one_cell, query_label, report_title, trend_columns,
    trust_text,
)
from builder.score.directions import JUDGE_METRICS, lower_is_better

FORMATS = {".json": "json", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}


def format_for(path: str) -> str:
    """The format a report path asks for (by suffix); InputError for an unknown suffix or a
    file where a folder of the path should be, so a bad --out fails before any work is done
    (a missing folder is created when the report is written)."""
    from builder.export.atomic import check_output_path

    fmt_name = FORMATS.get(Path(path).suffix.lower())
    if fmt_name is None:
        raise InputError("report file must end in .json, .md or .html", path=path)
    check_output_path(path)
    return fmt_name


def check_not_an_input(out: str, inputs: Mapping[str, str | None]) -> None:
    """An output path must not be one of the command's inputs ({what: path}; the database
    also protects its -wal/-shm files): writing the report or run there would replace it."""
    target = Path(out).resolve()
    for what, path in inputs.items():
        if not path or path == ":memory:":
            continue
        p = Path(path).resolve()
        protected = {p} | ({p.with_name(p.name + "-wal"), p.with_name(p.name + "-shm")}
                           if what == "database" else set())
        if target in protected:
            raise InputError(f"output would overwrite the {what}", path=out)


def render(report: Mapping[str, Any], fmt_name: str) -> str:
    if fmt_name == "json":
        return render_json(report)
    if fmt_name == "md":
        return render_markdown(report)
    from builder.score.html import render_html

    return render_html(report)


def write_outputs(texts: Mapping[str, str]) -> None:
    """Write every {path: text} all-or-nothing (temp files beside the targets, then renames;
    `builder.export.atomic`), creating each target's folder when it is missing."""
    from builder.export.atomic import AtomicOutputs

    with AtomicOutputs() as outputs:
        for path, text in texts.items():
            outputs.open(Path(path)).write(text.encode("utf-8"))
        outputs.commit()


def render_json(report: Mapping[str, Any]) -> str:
    """JSON with one top-level key per line and one line per query (or item) in the large
    mappings and lists: readable and diffable, and written by json's C encoder (`indent`
    makes json fall back to its pure-Python encoder, ~10x slower on 10,000 queries). NaN and
    infinities are refused (they are not JSON)."""
    dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False,
                             separators=(", ", ": ")).encode
    out = ["{"]
    items = list(report.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(value, Mapping) and value:
            inner = list(value.items())
            out.append(f"  {dumps(key)}: {{")
            out += [f"    {dumps(k)}: {dumps(v)}{',' if j < len(inner) - 1 else ''}"
                    for j, (k, v) in enumerate(inner)]
            out.append(f"  }}{comma}")
        elif isinstance(value, list) and value:
            out.append(f"  {dumps(key)}: [")
            out += [f"    {dumps(v)}{',' if j < len(value) - 1 else ''}"
                    for j, v in enumerate(value)]
            out.append(f"  ]{comma}")
        else:
            out.append(f"  {dumps(key)}: {dumps(value)}{comma}")
    out.append("}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- Markdown

def render_markdown(report: Mapping[str, Any]) -> str:
    out = [f"# {md_cell(report_title(report), None)}", ""]
    c = report["counts"]
    if report.get("subtitle"):
        out += [md_cell(report["subtitle"], None), ""]
    else:
        out += [f"- golden file: `{md_cell(report['golden'], None)}`",
                f"- run file: `{md_cell(report['run'], None)}`"]
        out += [f"- items: {c['golden_items']} ({c['answerable']} answerable, "
                f"{c['unanswerable']} unanswerable); in run: {c['in_run']}; "
                f"missing from run: {c['missing_from_run']}; judged: {c['judged']}", ""]
    for w in report["warnings"]:
        out.append(f"> **Warning:** {md_cell(w, None)}")
    if report["warnings"]:
        out.append("")
    out += ["## Summary", ""]
    if any(k in JUDGE_METRICS for k in report["summary"]):
        out += md_table(["metric", "value", "judge vs human labels"],
                         [[md_cell(k), fmt(v), md_cell(trust_text(report, k))]
                          for k, v in report["summary"].items()])
    else:
        out += md_table(["metric", "value"],
                         [[md_cell(k), fmt(v)] for k, v in report["summary"].items()])
    if report["operations"]:
        out += ["## Operations", ""]
        out += md_table(["figure", "value"],
                         [[md_cell(k), fmt(v)] for k, v in report["operations"].items()])
    cols = breakdown_columns(report)
    for field in ("type", "difficulty"):
        groups = report["breakdowns"].get(field) or {}
        if not groups:
            continue
        out += [f"## By {field}", ""]
        out += md_table([field, "n", *cols],
                         [[md_cell(name), str(g["n"]), *(fmt(g.get(m)) for m in cols)]
                          for name, g in groups.items()])
    out += _markdown_misses(report)
    bad = report["bad_cases"]
    if bad and report.get("bad_case_rule"):
        out += [f"## Bad cases ({len(bad)})", "", md_cell(report["bad_case_rule"], None), ""]
        out += md_table(
            ["question", "date", "cause", "signals", "evidence"],
            [[md_cell(query_label(b), 120), md_cell((b.get("at") or "")[:10]),
              md_cell(b["attribution"]), md_cell(", ".join(b.get("signals") or [])),
              md_cell(b["reason"], 400)] for b in bad])
    elif bad:
        out += ["## Bad cases (correctness < 4)", ""]
        out += md_table(
            ["question", "type", "correctness", "faithfulness", "cause", "reason"],
            [[md_cell(query_label(b), 120), md_cell(b["type"]), fmt(b["correctness"]),
              fmt(b["faithfulness"]), md_cell(b["attribution"]), md_cell(b["reason"], 160)]
             for b in bad],
        )
    out += _markdown_trends(report.get("trends"))
    unscored = report["judge"]["unscored"]
    if unscored:
        items = c.get("judge_unscored_items", len({u["query_id"] for u in unscored}))
        out += [f"## Not scored by the judge ({items} items, {len(unscored)} metrics)", ""]
        out += md_table(["question", "metric", "reason"],
                         [[md_cell(_question_of(report, u["query_id"]), 120), md_cell(u["metric"]),
                           md_cell(u["reason"], 160)] for u in unscored])
    missing = report.get("missing_queries") or []
    if missing:
        out += [f"## Not in the run ({len(missing)})", ""]
        out += [f"- {md_cell(query_label(m), 200)}" for m in missing] + [""]
    unknown = report.get("unknown_run_queries") or []
    if unknown:
        out += [f"## Run queries not in the golden file ({c.get('unknown_in_run', len(unknown))},"
                " ignored)", ""]
        out += [f"- {md_cell(u['query'], 200)}" for u in unknown] + [""]
    return "\n".join(out)


def _markdown_trends(trends: Mapping[str, Any] | None) -> list[str]:
    if not trends or not trends["rows"]:
        return []
    cols = trend_columns(trends)
    out = [f"## Trends per {trends['period']}", "",
           "Rates over every record; judge means over the random sample only.", ""]
    out += md_table([trends["period"], *cols],
                    [[md_cell(r["period"]), *(fmt(r[c]) for c in cols)] for r in trends["rows"]])
    return out


def _question_of(report: Mapping[str, Any], qid: str) -> str:
    entry = report["per_query"].get(qid) or {}
    return entry.get("question") or qid


def _markdown_misses(report: Mapping[str, Any]) -> list[str]:
    misses = report.get("retrieval_misses") or []
    if not misses:
        return []
    k = report["retrieval_miss_k"]
    total = report["counts"].get("retrieval_misses", len(misses))
    shown = f", the worst {len(misses)}" if total > len(misses) else ""
    out = [f"## Retrieval misses: gold not in the top {k} ({total}{shown})", ""]
    out += md_table(
        ["question", "type", "difficulty", f"recall@{k}", "missing gold", "retrieved (top k)"],
        [[md_cell(query_label(m), 120), md_cell(m["type"]), md_cell(m["difficulty"]),
          fmt(m[f"recall@{k}"]), md_cell(", ".join(m["missing_ids"]), 160),
          md_cell(", ".join(m["retrieved_ids"]), 200)] for m in misses])
    return out


# ---------------------------------------------------------------- terminal

def print_terminal(report: Mapping[str, Any], console=None) -> None:
    """A compact rich summary: metrics, operations, per-type table, worst bad cases."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = console or Console(highlight=False)
    summary = report["summary"]
    ks = report["options"]["ks"]
    if ks:
        table = Table(title="Retrieval", title_justify="left")
        table.add_column("metric")
        for k in ks:
            table.add_column(f"@{k}", justify="right")
        for fam in ("hit_rate", "mrr", "recall", "precision", "ndcg"):
            if f"{fam}@{ks[0]}" in summary:
                table.add_row(fam, *(fmt(summary.get(f"{fam}@{k}")) for k in ks))
        for name in ("mrr", "map"):
            if name in summary:
                table.add_row(f"{name} (uncut)", fmt(summary[name]), *[""] * (len(ks) - 1))
        console.print(table)
    judge_rows = [(k, v) for k, v in summary.items()
                  if "@" not in k and k not in ("mrr", "map")]
    if judge_rows:
        jt = Table(title="Judge", title_justify="left")
        jt.add_column("metric")
        jt.add_column("mean", justify="right")
        jt.add_column("judge vs human labels")
        for name, value in judge_rows:
            jt.add_row(name + (" (lower is better)" if lower_is_better(name) else ""),
                       fmt(value), trust_text(report, name))
        console.print(jt)
    if report["operations"]:
        ot = Table(title="Operations", title_justify="left")
        ot.add_column("figure")
        ot.add_column("value", justify="right")
        for name, value in report["operations"].items():
            ot.add_row(name, fmt(value))
        console.print(ot)
    cols = breakdown_columns(report)
    groups = report["breakdowns"].get("type") or {}
    if len(groups) > 1:
        bt = Table(title="By type", title_justify="left")
        bt.add_column("type")
        bt.add_column("n", justify="right")
        for m in cols:
            bt.add_column(m, justify="right")
        for name, g in groups.items():
            bt.add_row(Text(one_cell(name, 30)), str(g["n"]), *(fmt(g.get(m)) for m in cols))
        console.print(bt)
    misses = report.get("retrieval_misses") or []
    if misses:
        k = report["retrieval_miss_k"]
        total = report["counts"].get("retrieval_misses", len(misses))
        mt = Table(title=f"Retrieval misses: gold not in the top {k} ({total}, worst 10)",
                   title_justify="left")
        for col in ("question", f"recall@{k}", "missing gold", "retrieved"):
            mt.add_column(col)
        for m in misses[:10]:
            mt.add_row(Text(one_cell(query_label(m), 60)), fmt(m[f"recall@{k}"]),
                       Text(one_cell(", ".join(m["missing_ids"]), 30)),
                       Text(one_cell(", ".join(m["retrieved_ids"][:3]), 40)))
        console.print(mt)
    bad = report["bad_cases"]
    if bad and report.get("bad_case_rule"):
        bct = Table(title=f"Bad cases ({len(bad)}, first 10)", title_justify="left")
        for col in ("question", "cause", "evidence"):
            bct.add_column(col)
        for b in bad[:10]:
            bct.add_row(Text(one_cell(query_label(b), 50)), Text(str(b["attribution"])),
                        Text(one_cell(b["reason"], 90)))
        console.print(bct)
    elif bad:
        bct = Table(title=f"Bad cases ({len(bad)}, worst 10)", title_justify="left")
        for col in ("question", "correct.", "cause"):
            bct.add_column(col)
        for b in bad[:10]:
            bct.add_row(Text(one_cell(query_label(b), 70)), fmt(b["correctness"]),
                        Text(str(b["attribution"])))
        console.print(bct)
    trends = report.get("trends")
    if trends and trends["rows"]:
        short = {"records": "records", "thumbs_down_rate": "down", "judged": "judged",
                 "faithfulness": "faith", "hallucination_rate": "halluc",
                 "answer_relevancy": "relev", "context_relevance": "ctx",
                 "wrong_refusal_rate": "refus"}
        shown = [c for c in short if c in ("records", "thumbs_down_rate", "judged")
                 or c in trends["metrics"]]
        tt = Table(title=f"Trends per {trends['period']} (down: thumbs-down share of all "
                         "records; judge means of the random sample)", title_justify="left",
                   box=box.SIMPLE_HEAD, pad_edge=False)
        tt.add_column(trends["period"], no_wrap=True)
        for col in shown:
            tt.add_column(short[col], justify="right", no_wrap=True)
        for r in trends["rows"][-14:]:
            tt.add_row(r["period"], *("–" if r[c] is None else
                                      f"{r[c]:.2f}" if isinstance(r[c], float) else str(r[c])
                                      for c in shown))
        console.print(tt)
    c = report["counts"]
    if not report["options"]["ks"]:  # records without gold (production logs): no retrieval
        console.print(Text(f"{c['judged']} answers judged ({c.get('judge_unscored_items', 0)}"
                           f" with {c['judge_unscored']} judge metrics not scored)."))
    else:
        console.print(Text(
            f"{c['retrieval_scored']} queries scored for retrieval, {c['judged']} judged "
            f"({c.get('judge_unscored_items', 0)} items with {c['judge_unscored']} judge "
            f"metrics not scored), {c['missing_from_run']} missing from the run, "
            f"{c.get('unknown_in_run', 0)} run queries not in the golden set."))
    for w in report["warnings"]:
        console.print(Text("warning: " + one_cell(w), style="yellow"))
