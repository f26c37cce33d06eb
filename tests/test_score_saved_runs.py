"""A scored run is saved compactly (metric values in the run's key order, one list per item)
and read back as {name: value} dicts, as rows written before in the object form are."""

from __future__ import annotations

import json

from builder.store import Store
from builder.store.runs import list_run_items, save_run


def test_metrics_are_stored_as_a_list_and_read_back_as_dicts(tmp_path):
    items = [{"query_id": "q1", "metrics": {"mrr": 0.5, "ndcg@10": 0.63}},
             {"query_id": "q2", "metrics": {"correct_refusal_rate": 1.0}},
             {"query_id": "q3", "metrics": {"mrr": 0.0}}]
    with Store(tmp_path / "g.db") as store:
        save_run(store, run_id="r", name="r", golden_path="g", run_path="r", judge_model=None,
                 options={"ks": [10]}, summary={}, items=items)
        raw = dict(store.conn.execute("SELECT query_id, metrics FROM run_items"))
        assert json.loads(raw["q1"]) == [0.5, 0.63, None]
        assert json.loads(raw["q2"]) == [None, None, 1.0]
        read = {i["query_id"]: i["metrics"] for i in list_run_items(store, "r")}
        assert read == {i["query_id"]: i["metrics"] for i in items}
        # a row of an earlier golden (an object) reads back unchanged
        store.conn.execute("UPDATE run_items SET metrics = ? WHERE query_id = 'q3'",
                           ['{"mrr": 0.25}'])
        assert list_run_items(store, "r")[2]["metrics"] == {"mrr": 0.25}
