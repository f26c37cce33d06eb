"""Secrets and personal data of production logs (issue 32): what the scrubber replaces by
default (provider keys, AWS secrets, JWTs, bearer tokens, private keys, IBANs by checksum,
phone numbers without `+`), that none of it reaches the database, its WAL, the judge's
prompts, the reports, promoted candidates or exports, that a log file's name is scrubbed too,
and that error messages never echo a record's text or its keys."""

from __future__ import annotations

import json

import pytest

from builder.errors import InputError
from builder.logs.personal_data import iban_valid
from builder.logs.records import parse_record
from builder.logs.scrub import Scrubber
from builder.logs.spans import spans_of_line
from builder.store import Store
from tests.support.logs import log_line, otlp_line, patch_judge, phoenix_span, write_lines

OPENAI = "sk-proj-4fQ9xL2mN7pR1sT8vW3yZ6aB0cD5eF9gH2jK4lM7nP1qR3sT"
ANTHROPIC = "sk-ant-api03-Zq8Lm3Nx7Rt2Vw9Yb4Cd6Ef1Gh5Jk0Mn3Pq7Rs2Tu8Vx4Wy6Za1Bc9De5Fg3Hi7AA"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
       "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
BEARER = "d8F3kLq92ZxT7vBn4MwE1sYp"
GITHUB = "ghp_" + "R3nD0mT0k3nW1thTh1rtySixChars0123456"
PRIVATE_KEY = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0t\n"
               "RgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u\n-----END RSA PRIVATE KEY-----")
IBAN = "DE89370400440532013000"   # unspaced: 22 characters, not a multiple of 4 after DE89
IBAN_SPACED = "GB29 NWBK 6016 1331 9268 19"
TOLL_FREE = "1-800-555-0199"
TOLL_FREE_BRACKETS = "1 (800) 555-0199"
EMAIL = "alice.smith@example.com"

REPLACED = [
    (f"my key is {OPENAI}", "my key is [API_KEY]"),
    (f"ANTHROPIC_API_KEY={ANTHROPIC}", "ANTHROPIC_API_KEY=[API_KEY]"),
    (f"id {AWS_ID} secret {AWS_SECRET}", "id [API_KEY] secret [AWS_SECRET]"),
    (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key = [AWS_SECRET]"),
    (f"token={JWT}", "token=[JWT]"),
    (f"Authorization: Bearer {BEARER}", "Authorization: Bearer [TOKEN]"),
    (f"use {GITHUB} to clone", "use [API_KEY] to clone"),
    ("glpat-Ab3dEf6hIj9kLm2nOp5q", "[API_KEY]"),
    ("xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy", "[API_KEY]"),
    ("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "[API_KEY]"),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[API_KEY]"),
    (f"key:\n{PRIVATE_KEY}\nend", "key:\n[PRIVATE_KEY]\nend"),
    ("postgres://admin:s3cr3t-9@db:5432/app", "postgres://[CREDENTIALS]@db:5432/app"),
    ("password=Summer2024!", "password=[SECRET]"),
    (f"IBAN {IBAN}.", "IBAN [IBAN]."),
    (f"pay to {IBAN_SPACED} today", "pay to [IBAN] today"),
    ("FR14 2004 1010 0505 0001 3M02 606", "[IBAN]"),
    ("NO9386011117947", "[IBAN]"),
    ("mt84malt011000012345mtlcast001s", "[IBAN]"),
    (f"call {TOLL_FREE} now", "call [PHONE] now"),
    (f"call {TOLL_FREE_BRACKETS} now", "call [PHONE] now"),
    ("(415) 555-0199", "[PHONE]"),
    ("415.555.0199", "[PHONE]"),
    ("030/1234567", "[PHONE]"),
    ("0033 6 12 34 56 78", "[PHONE]"),
    ("07700900123", "[PHONE]"),
    ("91 123 45 67", "[PHONE]"),
    ("Tel. 612 345 678", "Tel. [PHONE]"),
    ("card 3782 822463 10005", "card [CARD]"),
]
KEPT = [
    "DE89370400440532013001",                 # a wrong check digit is not an IBAN
    "ISBN 978-0-306-40615-7", "ISBN 0-306-40615-2", "order 4556737586899855",
    "123e4567-e89b-12d3-a456-426614174000", "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "2024-01-15 10:30:00", "v10.0.19045.3803", "$1,299.99", "tracking 9400 1000 0000 0000 0000 00",
    "192.168.100.200", "api_key = os.getenv('API_KEY')", "Password must be 8 characters",
    "the key is to return it within 30 days", "Bearer authentication (RFC 6750)",
    "Lot 2023-11-0457", "scikit-learn", "tokenizer: bert-base-uncased",
]


@pytest.mark.parametrize("text, scrubbed", REPLACED)
def test_secrets_and_personal_data_are_replaced(text, scrubbed):
    assert Scrubber().text(text) == scrubbed


@pytest.mark.parametrize("text", KEPT)
def test_hard_negatives_are_kept(text):
    assert Scrubber().text(text) == text


def test_secrets_are_scrubbed_whatever_the_builtins_say():
    """`builtins` chooses among personal-data kinds; a key is never kept."""
    s = Scrubber(builtins=[])
    assert s.text(f"{EMAIL} {OPENAI}") == f"{EMAIL} [API_KEY]"


def test_iban_checksum():
    assert iban_valid(IBAN) and iban_valid(IBAN_SPACED.replace(" ", ""))
    assert not iban_valid("DE89370400440532013001") and not iban_valid("XX89370400440532013000")


def test_scrubbing_is_idempotent():
    s = Scrubber()
    once = s.text(f"{OPENAI} {IBAN} {TOLL_FREE} {EMAIL} {JWT}")
    assert s.text(once) == once


LOGS = [
    log_line("req-1", f"Why is my key {OPENAI} refused? Mail me at {EMAIL} or call {TOLL_FREE}",
             f"Use the header Authorization: Bearer {BEARER} with {AWS_ID}.",
             ids=["returns#1"], contexts=[f"Refunds go to {IBAN} within 5 days.",
                                          f"Support: {TOLL_FREE_BRACKETS}, token {JWT}"],
             session_id=f"s-{EMAIL}",
             feedback={"thumbs": "down", "reason": f"it printed {AWS_SECRET} and {ANTHROPIC}"},
             metadata={"note": f"key {GITHUB}", EMAIL: "x"}),
    log_line("req-2", "Can I pay by transfer?", f"Yes, to {IBAN_SPACED}.",
             ids=["returns#1"], contexts=[f"Private key on file:\n{PRIVATE_KEY}"],
             feedback={"thumbs": "up"}),
]
PLANTED = [OPENAI, ANTHROPIC, AWS_ID, AWS_SECRET, JWT, BEARER, GITHUB, "MIIEowIBAAKCAQEA", IBAN,
           IBAN_SPACED, TOLL_FREE, TOLL_FREE_BRACKETS, EMAIL, "alice.smith"]


def test_planted_secrets_reach_nothing_golden_writes_or_asks(tmp_path, golden_cli, monkeypatch):
    kb = write_lines(tmp_path / "kb.jsonl", [
        {"id": "returns#1", "text": "Refunds are paid by transfer within 5 days.",
         "source": "returns.md"}])
    assert golden_cli("ingest", str(kb))[0] == 0
    keeper = Store("golden.db")  # keeps the WAL from being checkpointed away
    logs = write_lines(tmp_path / f"{EMAIL}.jsonl", LOGS)
    code, out, err = golden_cli("logs", "import", str(logs))
    assert code == 0, err
    report = out.splitlines()[-1]
    for words in ("3 e-mail addresses", "2 phone numbers", "2 IBANs", "4 API keys or tokens",
                  "1 AWS secret key", "1 JWT", "1 bearer token", "1 private key"):
        assert words in report, report
    judge = patch_judge(monkeypatch)
    code, _, err = golden_cli("logs", "evaluate", "--rate", "1", "--out", "logs.html",
                              "--out", "logs.json", "--out", "logs.md")
    assert code == 0, err
    assert golden_cli("logs", "promote")[0] == 0
    with Store("golden.db") as store:
        paths = store.query("SELECT paths FROM log_imports")[0]["paths"]
        row = store.query("SELECT query, answer, feedback_reason, metadata FROM log_records"
                          " WHERE id = 'req-1'")[0]
        contexts = [r["text"] for r in store.query("SELECT text FROM log_contexts")]
        promoted = store.query("SELECT question, answer, provenance FROM candidates"
                               " WHERE type = 'production'")
    assert "[EMAIL]" in paths and "alice" not in paths
    assert row["query"] == "Why is my key [API_KEY] refused? Mail me at [EMAIL] or call [PHONE]"
    assert row["answer"] == "Use the header Authorization: Bearer [TOKEN] with [API_KEY]."
    assert row["feedback_reason"] == "it printed [AWS_SECRET] and [API_KEY]"
    assert json.loads(row["metadata"]) == {"note": "key [API_KEY]", "[EMAIL]": "x"}
    assert sorted(contexts) == sorted(["Refunds go to [IBAN] within 5 days.",
                                       "Support: [PHONE], token [JWT]",
                                       "Private key on file:\n[PRIVATE_KEY]"])
    assert promoted and any("[API_KEY]" in p["question"] for p in promoted)
    asked = json.dumps([c[1] for c in judge.calls])
    assert judge.calls and "[API_KEY]" in asked
    for raw in PLANTED:
        assert raw not in asked, raw
        assert raw not in json.dumps(promoted), raw
    wal = tmp_path / "golden.db-wal"
    assert wal.exists() and wal.stat().st_size > 0
    files = [tmp_path / "golden.db", wal, *tmp_path.glob("logs.*")]  # exports: test_logs_flywheel
    for path in files:
        data = path.read_bytes()
        for raw in PLANTED:
            assert raw.encode() not in data, f"{raw!r} found in {path.name}"
    keeper.close()


def test_an_email_used_as_a_key_is_not_echoed_in_the_error():
    line = log_line("r1", "q", feedback={"thumbs": "down", EMAIL: True})
    with pytest.raises(InputError) as info:
        parse_record(line, "logs.jsonl", 3)
    message = str(info.value)
    assert "logs.jsonl:3: feedback: a field that is not part of the format" in message
    assert "alice" not in message and "example.com" not in message


def test_a_bad_value_of_a_known_field_is_named_not_echoed():
    with pytest.raises(InputError) as info:
        parse_record(log_line("r1", "q", feedback={"thumbs": EMAIL}), "logs.jsonl", 4)
    assert "logs.jsonl:4: feedback.thumbs:" in str(info.value)
    assert "alice" not in str(info.value)


@pytest.mark.parametrize("line", [
    otlp_line([{"traceId": "ab", "spanId": "cd", "name": "x", "start": 1, "end": 2,
                "attributes": {}}]) | {"resourceSpans": [{"scopeSpans": [{"spans": [{
                    "traceId": "ab", "spanId": "cd", "startTimeUnixNano": "1",
                    "attributes": [{"key": "n", "value": {"intValue": EMAIL}}]}]}]}]},
    phoenix_span("ab", "cd", None, "CHAIN", f"2025-03-02T10:00:00 {EMAIL}",
                 "2025-03-02T10:00:01Z", {}),
])
def test_a_malformed_span_value_is_not_echoed(line):
    with pytest.raises(InputError) as info:
        spans_of_line(line, "traces.jsonl", 7)
    message = str(info.value)
    assert message.startswith("traces.jsonl:7: not a valid span") and "alice" not in message
