"""Reports treat every string from the files or the judge as data."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from builder.score import commands
from tests.fakes import ScriptedLLM
from tests.support.scoring import GOLDEN, RUN, judge_replies, scripted_open_llm, write_jsonl

EVIL = '<script>alert(1)</script> [@click=app.quit]x[/] | **bold** \x1b]0;pwned\x07'


class TagCollector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def test_markup_laden_text_is_escaped_everywhere(tmp_path, monkeypatch, golden_cli):
    golden_rows = [dict(g) for g in GOLDEN]
    golden_rows[1]["query"] = EVIL
    golden_rows[1]["type"] = "<b>multi</b>"

    def respond(prompt, variables, role):
        reply = judge_replies(prompt, variables, role)
        if prompt == "judge_correctness":
            reply["reason"] = EVIL
        return reply

    monkeypatch.setattr(commands, "open_llm", scripted_open_llm(ScriptedLLM(respond)))
    outs = [tmp_path / f"r.{ext}" for ext in ("html", "md", "json")]
    code, stdout, err = golden_cli(
        "--db", str(tmp_path / "g.db"), "score", "--golden",
        str(write_jsonl(tmp_path / "g.jsonl", golden_rows)), "--run",
        str(write_jsonl(tmp_path / "r.jsonl", RUN)), *[a for o in outs for a in ("--out", str(o))])
    assert code == 0, err
    html = outs[0].read_text()
    assert "<script>" not in html and "&lt;script&gt;" in html
    collector = TagCollector()
    collector.feed(html)
    assert "script" not in collector.tags and "b" not in collector.tags
    assert "link" not in collector.tags and "http" not in html.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")  # self-contained: nothing fetched
    assert "\x1b" not in html and "\x1b" not in outs[1].read_text() and "\x1b" not in stdout
    md = outs[1].read_text()
    assert "<script>" not in md and "\\| \\*\\*bold" in md
    report = json.loads(outs[2].read_text())
    assert report["per_query"]["q2"]["question"] == EVIL  # JSON keeps the data as is
    assert report["bad_cases"][0]["reason"] == EVIL


def test_queries_with_only_grade_0_judgments_are_not_answerable_nor_misses():
    from builder.score.scoring import ScoreOptions, build_trec_report

    report = build_trec_report({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 0, "d4": 0}},
                               {"q1": {"d9": 1.0, "d1": 0.5}, "q2": {"d8": 1.0}},
                               ScoreOptions(ks=(1,)), qrels_path="q", run_path="r")
    assert [m["query_id"] for m in report["retrieval_misses"]] == ["q1"]
    assert report["counts"]["answerable"] == 1 and report["counts"]["unanswerable"] == 1
    assert report["per_query"]["q2"]["answerable"] is False
    assert report["per_query"]["q2"]["metrics"]["ndcg@1"] == 0.0  # still counted, as trec_eval
    assert any("no judgment of grade 1 or more" in w for w in report["warnings"])
    # with --level 2 a query judged 1 at best has no gold to miss either
    report = build_trec_report({"q1": {"d1": 1}}, {"q1": {"d9": 1.0}},
                               ScoreOptions(ks=(1,), level=2), qrels_path="q", run_path="r")
    assert report["retrieval_misses"] == [] and report["counts"]["unanswerable"] == 1


def test_html_report_rough_edges():
    """Legend names whole, zero bars unlike missing values, whole chunk ids, refusal figures of
    unanswerable rows, no empty breakdown section, headers that can wrap."""
    from builder.score.html import axis_maximum, grouped_bars, ids_cell, render_html
    from builder.score.judge import JudgeOutcome
    from builder.score.scoring import build_records_report

    chart = grouped_bars(["g"], ["hallucination_rate", "faithfulness"], [[0.0, None]])
    legend, svg = chart.split("<svg", 1)
    assert "hallucination_rate" in legend and "faithfulness" in legend  # HTML, never clipped
    assert 'width="2.0"' in svg                                      # a zero is a visible stub
    assert 'stroke-dasharray="3 3"' in svg and "n/a" in svg           # a missing value is not
    cell = ids_cell(["c3-3f9a2b7c1d8e4f60", "c7-aa"])
    assert "<span>c3-3f9a2b7c1d8e4f60</span>, <span>c7-aa</span>" in cell
    records = [{"query_id": "r1", "question": "Q?"}]
    judged = {"r1": JudgeOutcome(metrics={"correct_refusal_rate": 1.0,
                                          "hallucination_rate": 0.0})}
    page = render_html(build_records_report(records, source="logs", judged=judged,
                                            judge_model="m"))
    assert 'id="by-difficulty"' not in page and "by difficulty" not in page
    assert "correct_<wbr>refusal_<wbr>rate" in page
    queries = page[page.index('id="queries"'):]
    assert '<td class="num">1.0000</td>' in queries  # the refusal figure, not a dash
    assert "break-all" not in page
    assert axis_maximum("thumbs_down_rate", [0.05, 0.15]) == 0.2
    assert axis_maximum("faithfulness", [4.1]) == 5.0
    assert axis_maximum("latency_mean_ms", [1142.6]) == 2000
    assert axis_maximum("handoff_rate", [0.0]) == 1.0


def test_trend_page_charts_every_figure_of_its_table():
    from builder.score.html import _trends_section

    rows = [{"period": f"2025-03-0{d}", "records": 100, "thumbs_down_rate": 0.1,
             "thumbs_up_rate": 0.2, "reasked_rate": 0.05, "handoff_rate": 0.0,
             "latency_mean_ms": 900.0 + d, "judged": 40, "faithfulness": 4.2} for d in (1, 2)]
    trends = {"period": "day", "rows": rows, "metrics": ["faithfulness"],
              "rates": ["thumbs_down_rate", "thumbs_up_rate", "reasked_rate", "handoff_rate"]}
    html = "".join(_trends_section(trends))
    for figure in ("records", "thumbs_up_rate", "reasked_rate", "latency_mean_ms",
                   "faithfulness", "thumbs_down_rate"):
        assert f"<figcaption>{figure}" in html, figure
