"""bench/bench_judge.py's FaithBench sample: only unanimously labelled summaries, half of each
label, the same answers for the same file and seed; and its agreement rows count the cells a
kappa stands on."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench_judge():
    spec = importlib.util.spec_from_file_location("bench_judge", ROOT / "bench" / "bench_judge.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_faithbench(path: Path) -> None:
    """Six unanimous 'Unwanted', six unanimous 'Consistent' and four disputed rows."""
    rows = ([("Unwanted", "Unwanted")] * 6 + [("Consistent", "Consistent")] * 6
            + [("Unwanted", "Consistent"), ("Benign", "Consistent"),
               ("Questionable", "Questionable"), ("Unwanted", "Benign")])
    with path.open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["source", "summary", "LLM", "worst-label", "best-label"])
        for n, (worst, best) in enumerate(rows, 1):
            out.writerow([f"passage {n}", f" summary {n} ", "some-llm", worst, best])


def test_faithbench_sample_is_unanimous_balanced_and_seeded(tmp_path):
    bench = bench_judge()
    path = tmp_path / "FaithBench.csv"
    write_faithbench(path)
    picked = bench.load_faithbench(path, 8, seed=15)
    numbers = [int(r["id"].split("-")[1]) for r in picked]
    assert [r["human_hallucination"] for r in picked] == [True] * 4 + [False] * 4
    assert all(n <= 6 for n in numbers[:4]) and all(7 <= n <= 12 for n in numbers[4:])
    assert len(set(numbers)) == 8  # the disputed rows 13-16 are never drawn
    first = picked[0]
    n = numbers[0]
    assert first["answer"] == f"summary {n}" and first["contexts"] == [f"passage {n}"]
    assert first["question"] == bench.FAITHBENCH_QUESTION and first["refusal"] is False
    assert bench.load_faithbench(path, 8, seed=15) == picked
    assert bench.load_faithbench(path, 8, seed=16) != picked


def test_faithbench_sample_larger_than_the_unanimous_rows_is_refused(tmp_path):
    bench = bench_judge()
    path = tmp_path / "FaithBench.csv"
    write_faithbench(path)
    with pytest.raises(SystemExit, match="6 hallucinated and 6 faithful for n=14"):
        bench.load_faithbench(path, 14, seed=15)


def test_agreement_row_counts_each_cell():
    bench = bench_judge()
    pairs = ([(True, True)] * 3 + [(True, False)] * 1 + [(False, True)] * 2
             + [(False, False)] * 4)
    cells = bench.agreement_row("hallucination", pairs).split()
    # name, n, agreement, kappa, both, judge only, human only, neither
    assert cells[1:3] == ["10", "0.70"]
    assert cells[-4:] == ["3", "1", "2", "4"]
    # kappa by hand: po 0.7, pe 0.4*0.5 + 0.6*0.5 = 0.5, (0.7-0.5)/(1-0.5) = 0.4
    assert cells[3] == "0.40"


def test_begin_sample_keeps_attributable_and_not_attributable_only(tmp_path):
    bench = bench_judge()
    path = tmp_path / "begin.tsv"
    labels = ["Not fully attributable"] * 5 + ["Fully attributable"] * 5 + ["Generic"] * 3
    lines = ["model_name\tdata_source\tknowledge\tmessage\tresponse\tbegin_label"]
    lines += [f"t5\twow\tknowledge {n}\tturn {n}\tresponse \"{n}\tx\t{label}".replace("\tx\t", "\t")
              for n, label in enumerate(labels, 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    picked = bench.load_begin(path, 8, seed=15)
    assert [r["human_hallucination"] for r in picked] == [True] * 4 + [False] * 4
    assert all(int(r["id"].split("-")[1]) <= 10 for r in picked)  # never a Generic one
    first = picked[0]
    n = first["id"].split("-")[1]
    assert first["contexts"] == [f"knowledge {n}"] and first["question"] == f"turn {n}"
    assert first["answer"] == f'response "{n}'  # a stray quote is text, not CSV quoting


def test_balanced_accuracy_is_the_mean_recall_of_both_labels():
    bench = bench_judge()
    pairs = [(True, True)] * 3 + [(False, True)] * 1 + [(False, False)] * 10 + [(True, False)] * 10
    assert bench.balanced_accuracy(pairs) == (0.75 + 0.5) / 2
    assert bench.balanced_accuracy([(True, True)]) is None
