"""bench/bench_judge.py's FaithBench sample: only unanimously labelled summaries, half of each
label, the same answers for the same file and seed; its agreement rows count the cells a
kappa stands on; and bench/ragtruth_faithjudge.py turns FaithJudge's copy of RAGTruth QA into
the two files the RAGTruth loader reads."""

from __future__ import annotations

import csv
import importlib.util
import json
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


def ragtruth_faithjudge():
    path = ROOT / "bench" / "ragtruth_faithjudge.py"
    spec = importlib.util.spec_from_file_location("ragtruth_faithjudge", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def faithjudge_line(source_id: int, *answers: tuple[str, str, list]) -> str:
    return json.dumps({
        "source_id": source_id,
        "source": {"question": f"question {source_id}",
                   "passages": f"passage 1:first {source_id}\n\npassage 2:second {source_id}\n\n"},
        "responses": [{"response": text, "model": model, "labels": labels}
                      for model, text, labels in answers]})


SPAN = [{"start": 0, "end": 4, "text": "made", "label_type": "Evident Baseless Info"}]


def test_faithjudge_copy_becomes_ragtruth_files_the_loader_reads(tmp_path, capsys):
    """FaithJudge's QA lines plus a split list give RAGTruth's two files: only sources the
    split list names as test are sampled, labels stay the human spans."""
    fj = tmp_path / "ragtruth_qa.jsonl"
    fj.write_text("\n".join([
        faithjudge_line(7, ("gpt-4-0613", "made up", SPAN), ("llama-2-7b-chat", "fine", [])),
        faithjudge_line(8, ("gpt-4-0613", "made up too", SPAN), ("mistral-7B-instruct", "ok", [])),
    ]) + "\n", encoding="utf-8")
    split = tmp_path / "chunk.json"
    split.write_text(json.dumps([{"source_id": "7", "split": "test"},
                                 {"source_id": "9", "split": "test"}]), encoding="utf-8")
    out = tmp_path / "ragtruth"
    assert ragtruth_faithjudge().main(["--faithjudge", str(fj), "--test-split", str(split),
                                       "--out", str(out)]) == 0
    assert "test split: 1 sources, 2 responses (1 with" in capsys.readouterr().out
    picked = bench_judge().load_ragtruth(out, 2, seed=15)
    assert [(r["id"], r["human_hallucination"]) for r in picked] == [
        ("7-gpt-4-0613", True), ("7-llama-2-7b-chat", False)]
    assert picked[0]["question"] == "question 7"
    assert picked[0]["contexts"] == ["first 7", "second 7"]
    train = [json.loads(line) for line in (out / "response.jsonl").read_text().splitlines()]
    assert {r["source_id"]: r["split"] for r in train} == {"7": "test", "8": "train"}
    assert train[0]["labels"] == SPAN


def test_faithjudge_bad_line_names_it_and_writes_nothing(tmp_path, capsys):
    fj = tmp_path / "ragtruth_qa.jsonl"
    fj.write_text(faithjudge_line(7, ("gpt-4-0613", "x", [])) + '\n{"source_id": 8}\n',
                  encoding="utf-8")
    split = tmp_path / "chunk.jsonl"
    split.write_text('{"source_id": "7", "split": "test"}\n', encoding="utf-8")
    out = tmp_path / "ragtruth"
    assert ragtruth_faithjudge().main(["--faithjudge", str(fj), "--test-split", str(split),
                                       "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{fj}:2: not a FaithJudge RAGTruth QA line")
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()
