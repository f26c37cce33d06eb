"""`golden logs evaluate`: the deterministic sample, the scripted judge, what is stored and
judged again, the report formats with trends and bad cases, and the gate."""

from __future__ import annotations

import json
import random

import pytest

from builder.llm.types import LLMResult
from builder.logs.attribution import bad_case
from builder.logs.records import sample_key
from builder.score.judge import PROMPTS
from builder.store import Store
from tests.fakes import ScriptedLLM
from tests.stub_endpoint import PromptMatcher, StubEndpoint
from tests.support.logs import log_judge, log_line, patch_judge, write_lines

CONTEXT = "Returns are accepted within thirty days of purchase."


def many(n: int, *, start_day: int = 1) -> list[dict]:
    """n records over a few days; every 7th unfaithful, with relevant contexts."""
    rows = []
    for i in range(n):
        answer = ("Returns are accepted within thirty days." if i % 7
                  else "Refunds arrive by carrier pigeon.")
        rows.append(log_line(f"r{i:04d}", f"Are returns accepted, question {i}?", answer,
                             at=f"2025-03-{start_day + i % 3:02d}T{i % 24:02d}:00:00Z",
                             contexts=[CONTEXT]))
    return rows


def evaluate(golden_cli, *args):
    return golden_cli("logs", "evaluate", *args)


def report(path="r.json") -> dict:
    return json.load(open(path))


def sampled(rep: dict) -> set[str]:
    return {q for q, e in rep["per_query"].items() if e["type"] == "sample"}


@pytest.fixture
def imported(tmp_path, golden_cli):
    path = write_lines(tmp_path / "logs.jsonl", many(300))
    assert golden_cli("logs", "import", str(path))[0] == 0
    return path


def test_the_sample_is_the_same_however_often_and_in_whatever_order(
        imported, tmp_path, golden_cli, monkeypatch):
    patch_judge(monkeypatch)
    assert evaluate(golden_cli, "--rate", "0.1", "--out", "r.json")[0] == 0
    first = sampled(report())
    assert evaluate(golden_cli, "--rate", "10%", "--out", "r.json")[0] == 0
    assert sampled(report()) == first
    assert 10 <= len(first) <= 60  # ~30 of 300
    assert first == {f"r{i:04d}" for i in range(300) if sample_key(f"r{i:04d}") < 0.1}
    # another database, the lines shuffled: the same records
    lines = many(300)
    random.Random(7).shuffle(lines)
    other = write_lines(tmp_path / "shuffled.jsonl", lines)
    assert golden_cli("--db", "other.db", "logs", "import", str(other))[0] == 0
    assert golden_cli("--db", "other.db", "logs", "evaluate", "--rate", "0.1",
                      "--out", "o.json")[0] == 0
    assert sampled(report("o.json")) == first
    # a higher rate keeps every record a lower one picked
    assert evaluate(golden_cli, "--rate", "0.25", "--out", "r.json")[0] == 0
    assert sampled(report()) > first


def test_judged_records_are_not_judged_again(imported, golden_cli, monkeypatch):
    llm = patch_judge(monkeypatch)
    code, out, err = evaluate(golden_cli, "--rate", "0.2")
    assert code == 0, err
    calls = len(llm.calls)
    assert calls > 0
    code, out, err = evaluate(golden_cli, "--rate", "0.2")
    assert code == 0 and len(llm.calls) == calls  # nothing new: no call at all
    assert "0 to judge" in err
    code, out, err = evaluate(golden_cli, "--rate", "0.3")
    judged_more = len(llm.calls) - calls
    with Store("golden.db") as store:
        n20 = store.query("SELECT count(*) AS n FROM log_records WHERE sample_key < 0.2")[0]["n"]
        n30 = store.query("SELECT count(*) AS n FROM log_records WHERE sample_key < 0.3")[0]["n"]
    assert 0 < judged_more <= (n30 - n20) * 4  # only the new records (<= 4 calls each)


def test_an_item_the_judge_could_not_score_is_tried_again(imported, golden_cli, monkeypatch):
    failing = {"on": True}

    def flaky(prompt, v, role):
        if failing["on"] and prompt == "judge_relevancy" and v["question"].endswith("question 7?"):
            return LLMResult(None, "error", error="HTTP 500")
        return log_judge(prompt, v, role)

    llm = patch_judge(monkeypatch, ScriptedLLM(flaky))
    # r0007 is flagged so it is always judged, whatever the rate
    code, _, err = evaluate(golden_cli, "--rate", "0.01", "--out", "r.json")
    assert code == 0, err
    assert report()["judge"]["unscored"] == []  # r0007 is not in this small sample
    with Store("golden.db") as store:
        store.conn.execute("UPDATE log_records SET flagged = 1 WHERE id = 'r0007'")
    code, _, err = evaluate(golden_cli, "--rate", "0.01", "--out", "r.json")
    assert [u["query_id"] for u in report()["judge"]["unscored"]] == ["r0007"]
    failing["on"] = False
    before = len(llm.calls)
    code, _, err = evaluate(golden_cli, "--rate", "0.01", "--out", "r.json")
    assert report()["judge"]["unscored"] == []
    assert {v.get("question", "") for _, v, _ in llm.calls[before:]} <= {
        "Are returns accepted, question 7?", ""}


def test_flagged_records_are_always_judged_but_the_summary_is_the_random_sample(
        tmp_path, golden_cli, monkeypatch):
    keys = {f"k{i}": sample_key(f"k{i}") for i in range(200)}
    inside = [k for k, v in keys.items() if v < 0.05][:3]
    outside = [k for k, v in keys.items() if v >= 0.05][:1]
    rows = [log_line(k, "Are returns accepted?", "Returns are accepted within thirty days.",
                     contexts=[CONTEXT]) for k in inside]
    rows.append(log_line(outside[0], "Are returns accepted?", "Pigeons deliver refunds.",
                         contexts=[CONTEXT], feedback={"thumbs": "down", "reason": "nonsense"}))
    assert golden_cli("logs", "import", str(write_lines(tmp_path / "l.jsonl", rows)))[0] == 0
    patch_judge(monkeypatch)
    code, out, err = evaluate(golden_cli, "--rate", "0.05", "--out", "r.json")
    assert code == 0, err
    rep = report()
    assert rep["per_query"][outside[0]]["type"] == "flagged"
    assert rep["summary"]["hallucination_rate"] == 0.0  # the random sample only
    assert rep["breakdowns"]["type"]["flagged"]["hallucination_rate"] == 1.0
    case = rep["bad_cases"][0]
    assert case["query_id"] == outside[0] and case["attribution"] == "generation"
    assert case["signals"] == ["unfaithful", "thumbs_down"]
    assert "unsupported: Pigeons deliver refunds." in case["reason"]
    assert "thumbs down: nonsense" in case["reason"]


def test_the_gate_for_a_nightly_job(imported, golden_cli, monkeypatch):
    llm = patch_judge(monkeypatch)
    # an uncalibrated judge cannot gate, before anything is judged
    code, _, err = evaluate(golden_cli, "--rate", "0.2", "--fail-over", "hallucination_rate=50%")
    assert code == 2 and "is not calibrated" in err and not llm.calls
    code, _, err = evaluate(golden_cli, "--rate", "0.2", "--fail-over", "hallucination_rate=50%",
                            "--fail-under", "faithfulness=2", "--trust-judge")
    assert code == 0, err
    code, _, err = evaluate(golden_cli, "--rate", "0.2", "--out", "r.json", "--trust-judge",
                            "--fail-over", "hallucination_rate=0")
    assert code == 1 and "gate failed: hallucination_rate" in err
    assert report()["summary"]["hallucination_rate"] > 0  # the report is written first
    code, _, err = evaluate(golden_cli, "--fail-under", "hallucination_rate=0.1")
    assert code == 2 and "use --fail-over hallucination_rate=0.1" in err
    code, _, err = evaluate(golden_cli, "--fail-under", "correctness=3")
    assert code == 2 and "unknown metric 'correctness'" in err


def test_no_judge_reports_operations_without_an_llm(imported, golden_cli, monkeypatch):
    llm = patch_judge(monkeypatch)
    code, out, err = evaluate(golden_cli, "--rate", "0.2", "--no-judge", "--out", "r.json")
    assert code == 0, err
    assert not llm.calls
    rep = report()
    assert rep["counts"]["judged"] == 0 and "hallucination_rate" not in rep["summary"]
    assert rep["logs"]["sampled"] > 0 and "not judged (--no-judge)" in out
    code, _, err = evaluate(golden_cli, "--no-judge", "--fail-over", "hallucination_rate=10%")
    assert code == 2 and "needs the judge" in err


def test_report_formats_trends_and_untrusted_text(tmp_path, golden_cli, monkeypatch):
    evil = "<script>alert(1)</script> [bold]x[/] | *"
    rows = many(60) + [log_line("evil", evil, "Pigeons.", contexts=[CONTEXT],
                                at="2025-03-09T12:00:00Z", feedback={"thumbs": "down"})]
    assert golden_cli("logs", "import", str(write_lines(tmp_path / "l.jsonl", rows)))[0] == 0
    patch_judge(monkeypatch)
    code, out, err = evaluate(golden_cli, "--rate", "1", "--trend", "week", "--out", "r.json",
                              "--out", "r.md", "--out", "r.html")
    assert code == 0, err
    rep = report()
    weeks = rep["trends"]["rows"]
    assert [w["period"] for w in weeks] == ["2025-W09", "2025-W10"]
    assert [w["records"] for w in weeks] == [40, 21]  # Mar 1-2 | Mar 3-9 (days 1-3 cycle)
    assert weeks[1]["thumbs_down_rate"] == pytest.approx(1 / 21)
    unfaithful = sum(1 for i in range(60) if i % 7 == 0 and (1 + i % 3) <= 2)
    assert weeks[0]["hallucination_rate"] == pytest.approx(unfaithful / 40)
    md = open("r.md").read()
    assert "## Trends per week" in md and "| 2025-W10 | 21 |" in md
    assert "&lt;script&gt;" in md and "<script>" not in md
    html = open("r.html").read()
    assert "<script" not in html and "src=" not in html and 'href="http' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<polyline") >= 3 and 'id="trends"' in html
    assert "golden logs: in the database" in html
    assert "Trends per week" in out and "bad case" in out


def test_the_window_and_bad_times(imported, golden_cli, monkeypatch):
    patch_judge(monkeypatch)
    code, _, err = evaluate(golden_cli, "--rate", "1", "--since", "2025-03-02",
                            "--until", "2025-03-03", "--out", "r.json")
    assert code == 0, err
    rep = report()
    assert rep["logs"]["records_in_window"] == 100
    assert all(e["at"].startswith("2025-03-02") for e in rep["per_query"].values())
    code, _, err = evaluate(golden_cli, "--since", "last tuesday")
    assert code == 2 and "--since: 'last tuesday' is not a date" in err
    code, _, err = evaluate(golden_cli, "--since", "2026-01-01")
    assert code == 2 and "no log records since 2026-01-01" in err
    code, _, err = evaluate(golden_cli, "--rate", "2")
    assert code == 2 and "--rate" in err


def test_contexts_come_from_the_knowledge_base_when_the_log_has_only_ids(
        tmp_path, golden_cli, monkeypatch):
    kb = write_lines(tmp_path / "kb.jsonl", [
        {"id": "ret#1", "text": "Returns are accepted within thirty days.", "source": "r.md"}])
    assert golden_cli("ingest", str(kb))[0] == 0
    rows = [log_line("a", "Are returns accepted?", "Returns are accepted within thirty days.",
                     ids=["ret#1", "gone#9"])]
    assert golden_cli("logs", "import", str(write_lines(tmp_path / "l.jsonl", rows)))[0] == 0
    llm = patch_judge(monkeypatch)
    assert evaluate(golden_cli, "--rate", "1")[0] == 0
    passages = [v["passage"] for name, v, _ in llm.calls if name == "judge_context"]
    assert passages == ["Returns are accepted within thirty days."]


def test_dry_run_and_an_empty_database(tmp_path, golden_cli, monkeypatch, imported):
    patch_judge(monkeypatch)
    code, out, _ = evaluate(golden_cli, "--rate", "0.1", "--dry-run")
    assert code == 0 and "records to judge" in out and "nothing was called or stored" in out
    with Store("golden.db") as store:
        assert store.query("SELECT count(*) AS n FROM log_evaluations")[0]["n"] == 0
    code, _, err = golden_cli("--db", "empty.db", "logs", "evaluate")
    assert code == 2 and "no golden database here yet" in err


def test_calls_go_through_the_client_cache(imported, golden_cli):
    """With the real client and an endpoint: an interrupted run resumes from the cache."""
    def respond(name, variables):
        return log_judge(name, variables, "judge")

    stub = StubEndpoint(respond, clean_first=0)
    stub.matcher = PromptMatcher(PROMPTS)
    with stub:
        args = ("--rate", "0.1", "--base-url", stub.url, "--model", "judge-m",
                "--concurrency", "2")
        code, _, err = evaluate(golden_cli, *args, "--out", "r.json")
        assert code == 0, err
        first = len(stub.hits())
        assert first > 0 and all(h.prompt in PROMPTS for h in stub.hits())
        with Store("golden.db") as store:  # as if the run had died before storing
            store.conn.execute("DELETE FROM log_evaluations")
        code, _, err = evaluate(golden_cli, *args, "--out", "r2.json")
        assert code == 0, err
        assert len(stub.hits()) == first  # every reply came from the cache
    a, b = report(), report("r2.json")
    assert a["summary"] == b["summary"] and a["judge"]["model"] == "judge-m"


# ---------------------------------------------------------------- attribution

def _record(**over):
    return {"id": "r", "query": "q?", "at": "2025-01-01", "retrieved_ids": ["c1", "c2"],
            "thumbs": None, "reasked": 0, "handed_off": 0, "feedback_reason": None, **over}


def _useful(*flags):
    return {"context_relevance": {"useful": list(flags), "reasons": ["why"] * len(flags)}}


@pytest.mark.parametrize("record, metrics, details, cause, signals", [
    (_record(), {"wrong_refusal_rate": 1.0, "context_relevance": 0.5},
     {**_useful(True, False), "refusal": {"reason": "refusal phrase"}}, "generation",
     ["refusal"]),
    (_record(), {"wrong_refusal_rate": 1.0, "context_relevance": 0.0},
     _useful(False, False), "knowledge base", ["refusal", "irrelevant_contexts"]),
    (_record(handed_off=1), {}, {}, "knowledge base", ["handed_off"]),
    (_record(), {"context_relevance": 0.0, "faithfulness": 1.0}, _useful(False, False),
     "retrieval", ["irrelevant_contexts", "unfaithful"]),
    (_record(), {"faithfulness": 2.0, "context_relevance": 1.0},
     {**_useful(True, True), "faithfulness": {"claims": [{"claim": "X", "supported": False}]}},
     "generation", ["unfaithful"]),
    (_record(), {"answer_relevancy": 1.0}, {"answer_relevancy": {"reason": "off"}},
     "generation", ["off_topic"]),
    (_record(thumbs="down", reasked=1), {"faithfulness": 5.0}, {}, "unknown",
     ["thumbs_down", "reasked"]),
])
def test_bad_cases_are_attributed_with_evidence(record, metrics, details, cause, signals):
    case = bad_case(record, metrics, details)
    assert case["attribution"] == cause and case["signals"] == signals
    assert len(case["evidence"]) >= len(signals)


def test_a_good_record_is_no_bad_case():
    assert bad_case(_record(thumbs="up"), {"faithfulness": 5.0, "context_relevance": 1.0,
                                           "answer_relevancy": 5.0, "wrong_refusal_rate": 0.0},
                    _useful(True, True)) is None
