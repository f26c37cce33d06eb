"""golden's retrieval metrics reproduce trec_eval 10.0's own test outputs to 4 decimals.

Every figure golden reports that trec_eval also prints (P_k, recall_k, success_k, ndcg_cut_k,
recip_rank -> mrr, map) is compared, per query and mean, for the plain, graded (-l2),
complete (-c) and TREC RAG 2024 (`#` in ids) cases shipped in shared/conformance/trec_eval.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from builder.score.inputs import read_qrels, read_trec_run
from builder.score.retrieval import evaluate, mean_metrics

CONF = Path(__file__).resolve().parents[2] / "shared" / "conformance" / "trec_eval"
if not CONF.is_dir():  # the tree may sit elsewhere; /work/shared is the documented place
    CONF = Path("/work/shared/conformance/trec_eval")

TREC_TO_GOLDEN = {
    "P": "precision", "recall": "recall", "success": "hit_rate", "ndcg_cut": "ndcg",
}
KS = (1, 5, 10, 15, 20, 30, 100, 200, 500, 1000)


def expected_figures(out_file: Path) -> dict[tuple[str, str], float]:
    """(golden metric, query or 'all') -> value, for the measures golden reports."""
    figures = {}
    for line in out_file.read_text().splitlines():
        measure, qid, value = (part.strip() for part in line.split("\t"))
        m = re.fullmatch(r"(P|recall|success|ndcg_cut)_(\d+)", measure)
        if m:
            name = f"{TREC_TO_GOLDEN[m.group(1)]}@{m.group(2)}"
        elif measure == "recip_rank":
            name = "mrr"
        elif measure == "map":
            name = "map"
        else:
            continue
        figures[(name, qid)] = float(value)
    return figures


@pytest.mark.parametrize(
    "qrels, results, out, level, complete",
    [
        ("qrels.test", "results.test", "out.test", 1, False),
        ("qrels.test", "results.test", "out.test.aq", 1, False),
        ("qrels.rel_level", "results.test", "out.test.aql", 2, False),
        ("qrels.test", "results.trunc", "out.test.aqc", 1, True),
        ("qrels.comment.test", "results.comment.test", "out.comment.test", 1, False),
    ],
)
def test_matches_trec_eval(qrels, results, out, level, complete):
    judgments = read_qrels(CONF / qrels)
    rankings = read_trec_run(CONF / results)
    per_query = evaluate(judgments, rankings, KS, level=level, complete=complete)
    means = mean_metrics(per_query.values())
    expected = expected_figures(CONF / out)
    assert len(expected) > 10
    for (name, qid), value in expected.items():
        got = means[name] if qid == "all" else per_query[qid][name]
        assert round(got, 4) == pytest.approx(value, abs=1e-9), (out, name, qid, got, value)
    if out.endswith(("aq", "aql", "aqc")):
        assert {q for _, q in expected} - {"all"} == set(per_query)
