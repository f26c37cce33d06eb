"""A scored run is saved compactly (every item's metrics packed into one value on the run) and
read back as {name: value} dicts, equal to what was saved, as rows written by earlier goldens
(a list per row, or an object per row) still are."""

from __future__ import annotations

import json
import math
import zlib

import sqlite_utils

from builder.store import Store
from builder.store.migrations import migrations
from builder.store.runs import list_run_items, pack_item_metrics, save_run, unpack_item_metrics


def _save(store, items, run_id="r"):
    save_run(store, run_id=run_id, name=run_id, golden_path="g", run_path="r",
             judge_model=None, options={"ks": [10]}, summary={}, items=items)


def _metrics(store, run_id="r"):
    return {i["query_id"]: i["metrics"] for i in list_run_items(store, run_id)}


def test_metrics_are_packed_on_the_run_and_read_back_equal(tmp_path):
    items = [{"query_id": "q1", "metrics": {"mrr": 0.5, "ndcg@10": 0.1 + 0.2}},
             {"query_id": "q2", "metrics": {"correct_refusal_rate": 1.0}},
             {"query_id": "q3", "metrics": {"mrr": -0.0, "ndcg@10": 1 / 3}},
             {"query_id": "q4", "metrics": {"mrr": 5e-324, "ndcg@10": 0.75}}]
    with Store(tmp_path / "g.db") as store:
        _save(store, items)
        assert [r[0] for r in store.conn.execute("SELECT metrics FROM run_items")] == [None] * 4
        read = _metrics(store)
        assert read == {i["query_id"]: i["metrics"] for i in items}
        assert list(read["q1"]) == ["mrr", "ndcg@10"]  # the names in the order saved
        assert math.copysign(1, read["q3"]["mrr"]) == -1  # bit for bit, sign of zero included
        options = json.loads(store.conn.execute("SELECT options FROM runs").fetchone()[0])
        assert options["metric_keys"] == ["mrr", "ndcg@10", "correct_refusal_rate"]


def test_values_that_are_not_floats_keep_their_type():
    query_ids = ["a", "b", "c"]
    metrics = [{"hits": 3, "ok": True, "label": "x", "score": float("nan"), "p": 0.5},
               {"hits": 0, "ok": False, "label": None, "score": 1.0, "p": 0.25},
               {"p": 1.0}]
    keys, packed = pack_item_metrics(query_ids, metrics)
    assert keys == ["hits", "ok", "label", "score", "p"]
    read = unpack_item_metrics(packed)
    assert [type(v) for v in read["a"].values()] == [int, bool, str, float, float]
    assert math.isnan(read["a"].pop("score"))
    assert read == {"a": {"hits": 3, "ok": True, "label": "x", "p": 0.5},
                    "b": {"hits": 0, "ok": False, "score": 1.0, "p": 0.25},
                    "c": {"p": 1.0}}  # a None value is left out, as a missing one


def test_saving_a_run_again_replaces_its_items_and_metrics(tmp_path):
    with Store(tmp_path / "g.db") as store:
        _save(store, [{"query_id": "q1", "metrics": {"mrr": 0.5}},
                      {"query_id": "q2", "metrics": {"mrr": 1.0}}])
        _save(store, [{"query_id": "q2", "metrics": {"mrr": 0.25}, "question": "Why?"}])
        (item,) = list_run_items(store, "r")
        assert (item["query_id"], item["question"], item["metrics"]) == ("q2", "Why?",
                                                                         {"mrr": 0.25})


def test_a_damaged_packed_value_reads_as_no_metrics_without_raising(tmp_path):
    with Store(tmp_path / "g.db") as store:
        _save(store, [{"query_id": "q1", "metrics": {"mrr": 0.5}}])
        for damaged in (b"not zlib", zlib.compress(b"[1]\n"),
                        zlib.compress(b'{"query_ids": ["q1"], "keys": ["mrr"], "columns": ["f8"]}'
                                      b"\n1234")):
            store.conn.execute("UPDATE runs SET item_metrics = ?", [damaged])
            assert _metrics(store) == {"q1": None}
    assert unpack_item_metrics(None) is None


def test_rows_saved_by_earlier_goldens_read_back_as_they_did(tmp_path):
    """A run saved before metrics were packed (a list per row in `metric_keys` order, or an
    object per row) reads back the same after the database is migrated."""
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m010_run_item_metrics")
    db.execute("INSERT INTO runs (id, options, summary, created_at) VALUES"
               " ('old', ?, '{}', 't')", [json.dumps({"metric_keys": ["mrr", "ndcg@10"]})])
    db.execute("INSERT INTO run_items (run_id, query_id, metrics) VALUES"
               " ('old', 'q1', '[0.5, null]'), ('old', 'q2', '{\"mrr\": 0.25}')")
    db.conn.commit()
    db.close()
    with Store(path) as store:
        assert _metrics(store, "old") == {"q1": {"mrr": 0.5}, "q2": {"mrr": 0.25}}
        _save(store, [{"query_id": "q1", "metrics": {"mrr": 1.0}}], run_id="new")
        assert _metrics(store, "new") == {"q1": {"mrr": 1.0}}
        assert _metrics(store, "old") == {"q1": {"mrr": 0.5}, "q2": {"mrr": 0.25}}


def test_item_texts_are_stored_exactly_nul_characters_included(tmp_path):
    """Rows go in through one JSON array (or, when a text holds a NUL, row by row): either way
    each column holds exactly the item's text, and JSON columns exactly their JSON."""
    items = [{"query_id": "q1", "question": 'Qué "cita" \\ dice?', "answer": "Línea\nnueva",
              "contexts": ["ctx \"a\"", "ctx ü"], "retrieved_ids": ["d1", "d2"],
              "metrics": {"mrr": 1.0}, "judge": {"faithfulness": {"score": 4}}},
             {"query_id": "q2", "question": "Plain?", "metrics": {"mrr": 0.5}}]
    with_nul = [dict(items[0], query_id="n1", answer="before\x00after"), items[1]]
    with Store(tmp_path / "g.db") as store:
        for run_id, saved in (("plain", items), ("nul", with_nul)):
            _save(store, saved, run_id=run_id)
            rows = store.query("SELECT query_id, question, reference, answer, contexts,"
                               " retrieved_ids, judge FROM run_items WHERE run_id = ?"
                               " ORDER BY query_id", [run_id])
            assert rows == [{
                "query_id": i["query_id"], "question": i.get("question"), "reference": None,
                "answer": i.get("answer"),
                "contexts": json.dumps(i["contexts"], ensure_ascii=False) if "contexts" in i
                else None,
                "retrieved_ids": json.dumps(i["retrieved_ids"]) if "retrieved_ids" in i
                else None,
                "judge": json.dumps(i["judge"]) if "judge" in i else None}
                for i in sorted(saved, key=lambda i: i["query_id"])]
        assert list_run_items(store, "nul")[0]["answer"] == "before\x00after"
