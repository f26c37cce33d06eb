"""Privacy before storage: what the scrubber replaces and what it leaves, golden.toml
patterns, and ids that held personal data."""

from __future__ import annotations

import pytest

from builder.config import load_config
from builder.errors import InputError
from builder.logs.personal_data import luhn_valid
from builder.logs.scrub import Scrubber, load_scrubber
from builder.store import Store
from tests.support.logs import log_line, write_lines

REPLACED = [
    ("write to john.doe+orders@mail.example.co.uk please", "write to [EMAIL] please"),
    ("call +1 (555) 123-4567 now", "call [PHONE] now"),
    ("ring 555-123-4567.", "ring [PHONE]."),
    ("+44 20 7946 0958", "[PHONE]"),
    ("+44 (0) 20 7946 0958", "[PHONE]"),
    ("(020) 7946 0958", "[PHONE]"),
    ("06 12 34 56 78", "[PHONE]"),
    ("0151 496 0000", "[PHONE]"),
    ("Tel: 030 1234567", "Tel: [PHONE]"),
    ("+15551234567", "[PHONE]"),
    ("card 4111 1111 1111 1111 ok", "card [CARD] ok"),
    ("4111111111111111", "[CARD]"),
    ("5500-0000-0000-0004", "[CARD]"),
    ("1234 5678 9012 3456", "[CARD]"),  # four groups of four: card-like even without Luhn
    ("a 378282246310005 amex", "a [CARD] amex"),
]
KEPT = [
    "on 2024-01-15 10:30 UTC", "15.01.2024", "price 1,299.00", "123 456 789 units",
    "order 1234567890", "version 3.14.159", "ISBN 978-3-16-148410-0", "1 000 000",
    "room 12 floor 3", "2024 2025 2026", "from 2023-01-01 to 2023-12-31", "id 4111111111111112",
    "v1.2.3", "user@localhost", "the @ sign",
]


@pytest.mark.parametrize("text, scrubbed", REPLACED)
def test_personal_data_is_replaced(text, scrubbed):
    assert Scrubber().text(text) == scrubbed


@pytest.mark.parametrize("text", KEPT)
def test_numbers_that_are_not_personal_data_are_kept(text):
    assert Scrubber().text(text) == text


def test_luhn():
    assert luhn_valid("4111111111111111") and luhn_valid("378282246310005")
    assert not luhn_valid("4111111111111112")


def test_counts_and_summary():
    s = Scrubber()
    s.text("a@b.io and c@d.io, call 555-123-4567")
    s.value({"note": "card 4111 1111 1111 1111", "nested": ["x@y.org"]})
    assert dict(s.counts) == {"email": 3, "phone": 1, "card": 1}
    assert s.summary(2) == "3 e-mail addresses, 1 phone number, 1 card number in 2 records"


def test_pseudonyms_keep_distinct_ids_distinct_and_drop_the_raw_value():
    s = Scrubber(key=b"k" * 32)
    a, b = s.pseudonym("ann@example.com"), s.pseudonym("bob@example.com")
    assert a != b and a.startswith("[EMAIL]~") and "ann" not in a
    assert s.pseudonym("ann@example.com") == a  # the same raw id, the same pseudonym
    assert s.pseudonym("req-81") == "req-81"
    assert Scrubber(key=b"j" * 32).pseudonym("ann@example.com") != a  # keyed per database


def test_golden_toml_patterns_and_builtins(tmp_path, golden_cli):
    (tmp_path / "golden.toml").write_text(
        '[logs.scrub]\nbuiltins = ["email"]\n\n[logs.scrub.patterns]\n'
        'customer_id = "CUST-\\\\d{6}"\n')
    path = write_lines(tmp_path / "logs.jsonl", [
        log_line("r1", "Order CUST-123456 for a@b.io, call 555-123-4567")])
    code, out, err = golden_cli("logs", "import", str(path))
    assert code == 0, err
    assert "1 e-mail address, 1 customer_id match in 1 record" in out
    with Store("golden.db") as store:
        row = store.query("SELECT query FROM log_records")[0]
        imported = store.query("SELECT scrubbed FROM log_imports")[0]["scrubbed"]
    assert row["query"] == "Order [CUSTOMER_ID] for [EMAIL], call 555-123-4567"  # phone off
    assert imported == '{"email": 1, "customer_id": 1}'


@pytest.mark.parametrize("toml, message", [
    ('[logs.scrub.patterns]\nbad = "("\n', "golden.toml:2: logs.scrub.patterns.bad: invalid "
                                           "regular expression"),
    ('[logs.scrub.patterns]\nempty = "x*"\n', "golden.toml:2: logs.scrub.patterns.empty: the "
                                              "pattern matches the empty string"),
    ('[logs.scrub.patterns]\n"two words" = "x"\n', "logs.scrub.patterns.two words: a pattern "
                                                   "name"),
    ('[logs.scrub]\nbuiltins = ["ssn"]\n', "golden.toml:2: logs.scrub.builtins: Value error, "
                                           "unknown built-in 'ssn'"),
    ('[logs.scrub]\nmask = true\n', "golden.toml:2: logs.scrub.mask: Extra inputs"),
])
def test_a_bad_scrub_setting_is_one_line_naming_the_line(tmp_path, toml, message):
    (tmp_path / "golden.toml").write_text(toml)
    with pytest.raises(InputError) as info:
        load_scrubber(load_config(), b"")
    assert message in str(info.value)


def test_nothing_is_written_before_scrubbing(tmp_path, golden_cli):
    """A bad pattern stops the import before the database gets anything of the file."""
    (tmp_path / "golden.toml").write_text('[logs.scrub.patterns]\nbad = "("\n')
    path = write_lines(tmp_path / "logs.jsonl", [log_line("r1", "mail a@b.io")])
    code, _, err = golden_cli("logs", "import", str(path))
    assert code == 2 and "invalid regular expression" in err
    with Store("golden.db") as store:
        assert store.query("SELECT count(*) AS n FROM log_records")[0]["n"] == 0
