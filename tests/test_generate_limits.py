"""Numeric limits and the situations on either side of them (reasoning items, limits.py)."""

from decimal import Decimal

import pytest

from builder.generate.limits import limits, scenario


@pytest.mark.parametrize("text,op,value,unit", [
    ("You can carry over up to a maximum of 5 days of unused holiday.", "<=", "5", "days"),
    ("Requests need at least 4 weeks of notice.", ">=", "4", "weeks"),
    ("A fit note is needed after 7 calendar days of absence.", ">", "7", "calendar days"),
    ("Refunds are possible within 14 days of purchase.", "<=", "14", "days"),
    ("Nursery fees must be at least £1,000 per month.", ">=", "1000", "£"),
    ("El reembolso se solicita en un plazo de 14 días.", "<=", "14", "días"),
    ("Le remboursement est possible jusqu'à 30 jours après l'achat.", "<=", "30", "jours"),
])
def test_a_limit_is_read_with_its_direction_value_and_unit(text, op, value, unit):
    [limit] = limits(text)
    assert (limit.op, limit.value, limit.unit) == (op, Decimal(value), unit)
    assert limit.phrase in text


def test_statements_without_a_comparator_set_no_limit():
    assert limits("We offer 25 days of holiday each year.") == []


@pytest.mark.parametrize("op,inside,outside", [("<=", 3, 7), (">=", 7, 3), (">", 7, 3)])
def test_scenarios_fall_on_both_sides_and_the_outcome_is_computed(op, inside, outside):
    word = {"<=": "up to", ">=": "at least", ">": "more than"}[op]
    [limit] = limits(f"You can take {word} 5 days.")
    seen = {scenario(limit, seed) for seed in range(40)}
    assert {v for v, holds in seen if holds} == {Decimal(inside)}
    assert {v for v, holds in seen if not holds} == {Decimal(outside)}
    assert scenario(limit, "same seed") == scenario(limit, "same seed")
    assert limit.say(Decimal(1)) == "1 day" and limit.say(Decimal(7)) == "7 days"
