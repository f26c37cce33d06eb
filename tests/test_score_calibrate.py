"""`golden calibrate`: judge vs human agreement from the calibration table or an import."""

from __future__ import annotations

import json

import pytest

from builder.score import commands
from builder.score.calibrate import agreement, quadratic_kappa
from builder.store import Store, utcnow
from tests.fakes import ScriptedLLM
from tests.support.scoring import GOLDEN, RUN, judge_replies, scripted_open_llm, write_jsonl


def test_quadratic_kappa_known_values():
    assert quadratic_kappa([(1, 1), (3, 3), (5, 5)]) == 1.0
    assert quadratic_kappa([(1, 5), (5, 1)]) == pytest.approx(-1.0)
    # sklearn.metrics.cohen_kappa_score([1,2,3,4,5],[1,2,3,5,4], weights="quadratic") = 0.9
    assert quadratic_kappa([(1, 1), (2, 2), (3, 3), (4, 5), (5, 4)]) == pytest.approx(0.9)
    assert quadratic_kappa([(3, 3), (3, 3)]) is None  # undefined, never NaN
    a = agreement([(1, 1), (2, 3), (5, 2)])
    assert a["exact"] == pytest.approx(1 / 3) and a["within_one"] == pytest.approx(2 / 3)


@pytest.fixture
def scored_db(tmp_path, golden_cli, monkeypatch):
    db = tmp_path / "g.db"
    monkeypatch.setattr(commands, "open_llm", scripted_open_llm(ScriptedLLM(judge_replies)))
    code, _, err = golden_cli("--db", str(db), "score", "--golden",
                      str(write_jsonl(tmp_path / "g.jsonl", GOLDEN)), "--run",
                      str(write_jsonl(tmp_path / "r.jsonl", RUN)))
    assert code == 0, err
    return db


def test_calibrate_from_the_calibration_table(scored_db, golden_cli):
    # judge: q1 correctness 5 / faithfulness 5, q2 correctness 2 / faithfulness 1
    with Store(scored_db) as store, store.write() as db:
        for qid, metric, score in [("q1", "correctness", 5), ("q2", "correctness", 3),
                                   ("q2", "faithfulness", 1)]:
            db["calibration"].insert({"run_id": None, "query_id": qid, "metric": metric,
                                      "score": score, "annotator": "ann", "source": "tui",
                                      "at": utcnow()})
    code, out, err = golden_cli("--db", str(scored_db), "calibrate", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["overall"]["n"] == 3
    assert result["overall"]["exact"] == pytest.approx(2 / 3)
    assert result["overall"]["within_one"] == 1.0
    assert result["per_metric"]["faithfulness"]["exact"] == 1.0
    assert "under 80%" in result["warnings"][0]


def test_calibrate_from_an_imported_csv(scored_db, tmp_path, golden_cli):
    csv = tmp_path / "human.csv"
    csv.write_text("query_id,metric,score\nq1,correctness,5\nq2,correctness,2\nq9,correctness,1\n")
    code, out, err = golden_cli("--db", str(scored_db), "calibrate", "--import", str(csv))
    assert code == 0, err
    assert "overall" in out and "1 human score(s) have no judge score" in out
    stored = "SELECT query_id, metric, score, source FROM calibration ORDER BY id"
    with Store(scored_db) as store:
        rows = store.query(stored)
    assert [(r["query_id"], r["score"], r["source"]) for r in rows] == [
        ("q1", 5, "import"), ("q2", 2, "import"), ("q9", 1, "import")]
    # importing the same file again adds nothing; without --import the stored scores count
    golden_cli("--db", str(scored_db), "calibrate", "--import", str(csv))
    with Store(scored_db) as store:
        assert len(store.query(stored)) == 3
    code, out, err = golden_cli("--db", str(scored_db), "calibrate", "--json")
    assert code == 0, err
    assert json.loads(out)["overall"]["n"] == 2  # q9 has no judge score
    bad = tmp_path / "bad.csv"
    bad.write_text("query_id,metric,score\nq1,correctness,7\n")
    code, _, err = golden_cli("--db", str(scored_db), "calibrate", "--import", str(bad))
    assert code == 2 and f"{bad}:2: score" in err
    with Store(scored_db) as store:
        assert len(store.query(stored)) == 3  # a bad file stores nothing


def test_calibrate_without_a_run_or_scores(tmp_path, scored_db, golden_cli):
    code, _, err = golden_cli("--db", str(tmp_path / "missing.db"), "calibrate")
    assert code == 2 and "no golden database here yet" in err
    Store(tmp_path / "empty.db").close()
    code, _, err = golden_cli("--db", str(tmp_path / "empty.db"), "calibrate")
    assert code == 2 and "no scored run" in err
    code, _, err = golden_cli("--db", str(scored_db), "calibrate")
    assert code == 2 and "no human scores" in err


def test_cohen_kappa_for_yes_no_labels():
    from builder.review.agreement import cohen_kappa  # the one kappa: calibration, review

    # 10 pairs: 8 agree; each side says yes 5 times -> chance agreement 0.5 -> kappa 0.6
    pairs = [(1, 1)] * 4 + [(0, 0)] * 4 + [(1, 0), (0, 1)]
    assert cohen_kappa(pairs) == pytest.approx(0.6)
    assert cohen_kappa([(1, 1), (0, 0)]) == 1.0
    assert cohen_kappa([(1, 0), (0, 1)]) == -1.0
    assert cohen_kappa([(0, 0), (0, 0)]) is None and cohen_kappa([]) is None
