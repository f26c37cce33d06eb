"""`golden logs import`: each format onto the same fields, idempotent by record id, and bad
lines as one-line errors that leave nothing imported."""

from __future__ import annotations

import gzip
import json
from importlib import resources

import jsonschema
import pytest

from builder.store import Store
from tests.support.logs import log_line, otlp_line, phoenix_span, write_lines


def records(db="golden.db") -> dict[str, dict]:
    with Store(db) as store:
        rows = store.query("SELECT * FROM log_records ORDER BY id")
        contexts = {r["hash"]: r["text"] for r in store.query("SELECT * FROM log_contexts")}
    out = {}
    for row in rows:
        for col in ("retrieved_ids", "context_hashes", "metadata"):
            row[col] = json.loads(row[col]) if row[col] else None
        row["contexts"] = ([contexts[h] for h in row["context_hashes"]]
                           if row["context_hashes"] is not None else None)
        out[row["id"]] = row
    return out


GOLDEN_LINES = [
    log_line("req-1", "Can I return a worn jacket?", "Yes, within 30 days.",
             at="2025-03-02T10:15:00Z", ids=["returns.md#a1", "outerwear.md#c3"],
             contexts=["Returns are accepted within 30 days.", "Jackets are outerwear."],
             session_id="s-9", latency_ms=840, prompt_tokens=1200, completion_tokens=90,
             cost=0.0021, model="gpt-4o-mini",
             feedback={"thumbs": "down", "reason": "wrong period", "reasked": True},
             metadata={"channel": "web"}, unknown_field="ignored"),
    log_line("req-2", "Store hours?", "9 to 5.", at=1740912000,
             ids=["contact.md#1"], contexts=["Returns are accepted within 30 days."]),
    {"timestamp": "2025-03-03T08:00:00+01:00", "query": "No id here?"},
]


def test_golden_jsonl_lands_field_by_field(golden_cli, tmp_path):
    path = write_lines(tmp_path / "logs.jsonl", GOLDEN_LINES)
    code, out, err = golden_cli("logs", "import", str(path))
    assert code == 0, err
    assert "read 3 lines from 1 file: 3 records" in out and "added 3" in out
    rows = records()
    r1 = rows["req-1"]
    assert r1["at"] == "2025-03-02T10:15:00.000000+00:00"
    assert r1["retrieved_ids"] == ["returns.md#a1", "outerwear.md#c3"]
    assert r1["contexts"] == ["Returns are accepted within 30 days.", "Jackets are outerwear."]
    assert (r1["session_id"], r1["latency_ms"], r1["prompt_tokens"], r1["completion_tokens"],
            r1["cost"], r1["model"]) == ("s-9", 840, 1200, 90, 0.0021, "gpt-4o-mini")
    assert (r1["thumbs"], r1["feedback_reason"], r1["reasked"], r1["handed_off"],
            r1["flagged"]) == ("down", "wrong period", 1, 0, 1)
    assert r1["metadata"] == {"channel": "web"} and r1["source"] == "golden"
    assert rows["req-2"]["at"] == "2025-03-02T10:40:00.000000+00:00"  # Unix seconds
    assert rows["req-2"]["flagged"] == 0
    no_id = [r for r in rows.values() if r["query"] == "No id here?"][0]
    assert no_id["id"].startswith("h-") and no_id["at"] == "2025-03-03T07:00:00.000000+00:00"
    # one row per distinct context text, however many records retrieved it
    with Store("golden.db") as store:
        assert store.query("SELECT count(*) AS n FROM log_contexts")[0]["n"] == 2
    assert all(0 <= r["sample_key"] < 1 for r in rows.values())


def test_every_golden_example_line_matches_the_json_schema():
    schema = json.loads(resources.files("builder").joinpath("schemas/log.schema.json")
                        .read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for line in GOLDEN_LINES:
        validator.validate(line)
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"timestamp": "2025-01-01", "query": "q",
                            "feedback": {"thumbs": "sideways"}})


def test_phoenix_spans_map_onto_the_same_fields(golden_cli, tmp_path):
    t = "4bf92f3577b34da6a3ce929d0e0e4736"
    lines = [
        phoenix_span(t, "a1", None, "CHAIN", "2025-03-02T11:00:00+00:00",
                     "2025-03-02T11:00:01.5+00:00",
                     {"input": {"value": json.dumps({"query": "What is the tent warranty?"}),
                                "mime_type": "application/json"},
                      "output": {"value": "Two years."}, "session": {"id": "sess-1"},
                      "openinference": {"span": {"kind": "CHAIN"}}}),
        phoenix_span(t, "a2", "a1", "RETRIEVER", "2025-03-02T11:00:00.1+00:00",
                     "2025-03-02T11:00:00.2+00:00",
                     {"input.value": "tent warranty",
                      "retrieval.documents.0.document.id": "tents.md#1",
                      "retrieval.documents.0.document.content": "Tents: two-year warranty.",
                      "retrieval.documents.1.document.id": "tents.md#2",
                      "retrieval.documents.1.document.content": "Poles are aluminium."}),
        phoenix_span(t, "a3", "a1", "LLM", "2025-03-02T11:00:00.3+00:00",
                     "2025-03-02T11:00:01.4+00:00",
                     {"llm": {"model_name": "gpt-4o-mini",
                              "token_count": {"prompt": 300, "completion": 12},
                              "input_messages": [{"message": {"role": "user",
                                                              "content": "PROMPT WITH CONTEXT"}}]},
                      "feedback.thumbs": "up"}),
    ]
    code, out, err = golden_cli("logs", "import", str(write_lines(tmp_path / "s.jsonl", lines)))
    assert code == 0, err
    assert "1 records (3 spans in traces)" in out
    r = records()[t]
    assert r["query"] == "What is the tent warranty?" and r["answer"] == "Two years."
    assert r["retrieved_ids"] == ["tents.md#1", "tents.md#2"]
    assert r["contexts"] == ["Tents: two-year warranty.", "Poles are aluminium."]
    assert (r["session_id"], r["model"], r["prompt_tokens"], r["completion_tokens"]) == \
        ("sess-1", "gpt-4o-mini", 300, 12)
    assert r["latency_ms"] == 1500 and r["at"] == "2025-03-02T11:00:00.000000+00:00"
    assert r["thumbs"] == "up" and r["source"] == "span"


def test_otlp_json_from_a_collector_with_genai_attributes(golden_cli, tmp_path):
    t0 = 1740913200_000_000_000
    trace = "5b8efff798038103d269b633813fc60c"
    line = otlp_line([
        {"traceId": trace, "spanId": "eee19b7ec3c1b174", "name": "rag", "start": t0,
         "end": t0 + 900_000_000, "attributes": {"gen_ai.conversation.id": "conv-7"}},
        {"traceId": trace, "spanId": "eee19b7ec3c1b175", "parentSpanId": "eee19b7ec3c1b174",
         "name": "retrieval kb", "start": t0 + 1, "end": t0 + 2,
         "attributes": {"gen_ai.operation.name": "retrieval",
                        "gen_ai.retrieval.query.text": "opening hours",
                        "gen_ai.retrieval.documents": json.dumps(
                            [{"id": "contact.md#2", "score": 0.8, "content": "Open 9 to 5."}])}},
        {"traceId": trace, "spanId": "eee19b7ec3c1b176", "parentSpanId": "eee19b7ec3c1b174",
         "name": "chat", "start": t0 + 3, "end": t0 + 4,
         "attributes": {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                        "gen_ai.usage.input_tokens": 250, "gen_ai.usage.output_tokens": 9,
                        "gen_ai.output.messages": json.dumps(
                            [{"role": "assistant",
                              "parts": [{"type": "text", "content": "We open 9 to 5."}]}]),
                        "feedback.handed_off": True}},
    ])
    health = otlp_line([{"traceId": "ff" * 16, "spanId": "01" * 8, "name": "GET /health",
                         "start": t0, "end": t0 + 1, "attributes": {"http.method": "GET"}}])
    code, out, err = golden_cli("logs", "import",
                                str(write_lines(tmp_path / "otlp.jsonl", [line, health])))
    assert code == 0, err
    assert "1 traces without a question skipped" in out
    r = records()[trace]
    assert (r["query"], r["answer"]) == ("opening hours", "We open 9 to 5.")
    assert r["retrieved_ids"] == ["contact.md#2"] and r["contexts"] == ["Open 9 to 5."]
    assert (r["session_id"], r["model"], r["prompt_tokens"], r["completion_tokens"]) == \
        ("conv-7", "gpt-4o", 250, 9)
    assert r["handed_off"] == 1 and r["flagged"] == 1 and r["source"] == "otlp"
    assert r["latency_ms"] == 900


def test_import_is_idempotent_by_record_id(golden_cli, tmp_path):
    path = write_lines(tmp_path / "logs.jsonl", GOLDEN_LINES)
    assert golden_cli("logs", "import", str(path))[0] == 0
    before = records()
    code, out, _ = golden_cli("logs", "import", str(path), str(path))
    assert code == 0
    assert "added 0; already imported 3" in out and "3 repeated ids in the input" in out
    assert records() == before
    changed = [dict(GOLDEN_LINES[0], answer="A different answer.")]
    code, out, _ = golden_cli("logs", "import", str(write_lines(tmp_path / "b.jsonl", changed)))
    assert "1 already imported with other content (kept as first imported)" in out
    assert records()["req-1"]["answer"] == "Yes, within 30 days."
    with Store("golden.db") as store:
        imports = store.query("SELECT added, unchanged, differing FROM log_imports ORDER BY id")
    assert imports == [{"added": 3, "unchanged": 0, "differing": 0},
                       {"added": 0, "unchanged": 3, "differing": 0},
                       {"added": 0, "unchanged": 0, "differing": 1}]


def test_gzip_files_are_read_as_they_are(golden_cli, tmp_path):
    path = tmp_path / "logs.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in GOLDEN_LINES))
    code, out, err = golden_cli("logs", "import", str(path))
    assert code == 0, err
    assert "added 3" in out


@pytest.mark.parametrize("bad, message", [
    ("{not json", "logs.jsonl:2: not JSON"),
    (json.dumps({"timestamp": "2025-01-01"}), "logs.jsonl:2: not a golden log record"),
    (json.dumps({"query": "q?"}), "logs.jsonl:2: timestamp: Field required"),
    (json.dumps({"query": "q?", "timestamp": "yesterday"}), "logs.jsonl:2: timestamp:"),
    (json.dumps({"query": "  ", "timestamp": "2025-01-01"}), "logs.jsonl:2: query: Value error"),
    (json.dumps({"query": "q", "timestamp": "2025-01-01", "latency_ms": -1}),
     "logs.jsonl:2: latency_ms:"),
    (json.dumps({"query": "q", "timestamp": "2025-01-01", "feedback": {"thumbs": "meh"}}),
     "logs.jsonl:2: feedback.thumbs:"),
    (json.dumps([1, 2]), "logs.jsonl:2: not a golden log record"),
    (json.dumps({"context": {"span_id": "1"}, "attributes": {}}),
     "logs.jsonl:2: not a valid span (missing 'trace_id')"),
    (json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "1"}]}]}]}),
     "logs.jsonl:2: not a valid span (missing 'traceId')"),
])
def test_a_bad_line_is_one_line_and_nothing_is_imported(golden_cli, tmp_path, bad, message):
    good = write_lines(tmp_path / "first.jsonl", [GOLDEN_LINES[1]])
    path = write_lines(tmp_path / "logs.jsonl", [GOLDEN_LINES[0], bad, GOLDEN_LINES[2]])
    code, out, err = golden_cli("logs", "import", str(good), str(path))
    assert code == 2
    assert message in err and "Traceback" not in err and err.count("\n") == 1
    assert records() == {}  # not even the good file given first


def test_an_error_names_the_field_never_its_value(golden_cli, tmp_path):
    line = {"query": "q", "timestamp": "2025-01-01", "latency_ms": "call jane@example.com"}
    code, _, err = golden_cli("logs", "import",
                              str(write_lines(tmp_path / "logs.jsonl", [line])))
    assert code == 2 and "latency_ms" in err and "jane" not in err


def test_invalid_utf8_and_missing_files(golden_cli, tmp_path):
    path = tmp_path / "logs.jsonl"
    path.write_bytes(json.dumps(GOLDEN_LINES[1]).encode() + b"\n" + b'{"query": "\xff"}\n')
    code, _, err = golden_cli("logs", "import", str(path))
    assert code == 2 and "logs.jsonl:2: not valid UTF-8" in err
    code, _, err = golden_cli("logs", "import", str(tmp_path / "nope.jsonl"))
    assert code == 2 and "nope.jsonl: file not found" in err
