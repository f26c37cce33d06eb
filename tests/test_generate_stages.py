"""Stage-level behaviour: span location, terms, fact grounding, plan, difficulty, dedup."""

from __future__ import annotations

import pytest

from builder.errors import InputError
from builder.generate import dedup
from builder.generate.difficulty import level
from builder.vocabulary import DEFENSIVE
from builder.generate.plan import (
    largest_remainder, parse_mix, parse_types,
    type_targets,
)
from builder.text.locate import locate_span
from builder.generate.terms import numbers
from builder.text.values import stated_dates
from builder.text.language import detect_language


def test_locate_span_exact_fuzzy_and_fabricated():
    chunk = "Returns:\nNorthwind accepts returns within  45 days, of purchase."
    assert locate_span(chunk, "accepts returns") == (19, 34)
    start, end = locate_span(chunk, "northwind accepts returns within 45 days of purchase")
    assert chunk[start:end] == "Northwind accepts returns within  45 days, of purchase"
    assert locate_span(chunk, "Northwind accepts returns within 90 days") is None
    assert locate_span(chunk, "ab") is None


def test_numbers_dates_and_language():
    assert numbers("costs $1,000.50 or 45.0 days") == {"1000.5", "45"}
    assert stated_dates("effective 2025-03-01, before March 1, 2023 and 2024年5月") == \
        ["2025-03-01", "2023-03-01", "2024-05"]
    assert stated_dates("since version 2.1") == []  # a version is no date
    assert detect_language("标准配送需要5天送达") == "zh"
    assert detect_language("Standard shipping takes 5 days") == "en"


def test_plan_sums_to_n_with_defensive_floor():
    plan, notes = type_targets(20, None, None)
    assert sum(plan.values()) == 20 and not notes
    assert sum(plan.get(t, 0) for t in DEFENSIVE) >= 3
    plan, notes = type_targets(10, {"single_hop": 1, "multi_hop": 1}, None)
    assert plan == {"single_hop": 5, "multi_hop": 5} and notes
    plan, _ = type_targets(7, None, ["single_hop", "unanswerable"])
    assert sum(plan.values()) == 7 and plan["unanswerable"] >= 1
    assert largest_remainder(3, {"single_hop": 1, "reasoning": 1}) == {"single_hop": 2, "reasoning": 1}
    with pytest.raises(InputError):
        parse_mix("single_hop=abc")
    with pytest.raises(InputError):
        parse_mix("bogus=1")
    with pytest.raises(InputError):
        parse_types("single_hop,nope")


def test_a_local_model_leaves_out_the_kinds_it_phrases_badly_unless_asked_for_them():
    """The 1.5B model's unanswerable swaps, ambiguous generalisations and multi-hop descriptions
    were wrong more often than right on the development set: with a local model their places go
    to kinds code answers, in turn, unless the user names the kind; an endpoint keeps the plan;
    temporal is never composed, whatever the model."""
    from builder.generate.plan import for_generator
    plan, _ = type_targets(20, None, None)
    assert (plan["unanswerable"], plan["ambiguous"], plan["multi_hop"]) == (2, 1, 2)
    local, notes = for_generator(plan, local=True, mix=None, types=None)
    assert local == {"single_hop": plan["single_hop"], "reasoning": plan["reasoning"] + 2,
                     "comparative": plan["comparative"] + 3}
    assert notes == ["unanswerable, ambiguous, multi_hop: left out with a local model (wrong "
                     "more often than right on our development set; --types or --mix naming "
                     "one asks for it anyway); their 5 place(s) go to comparative and reasoning"]
    assert for_generator(plan, local=False, mix=None, types=None) == (plan, [])
    one = {"single_hop": 9, "unanswerable": 1}
    assert for_generator(one, local=True, mix=None, types=None)[1][0].endswith(
        "its 1 place(s) go to comparative")
    asked = type_targets(10, None, ["single_hop", "unanswerable", "ambiguous"])[0]
    kept, notes = for_generator(asked, local=True, mix=None,
                                types=["single_hop", "unanswerable", "ambiguous"])
    assert kept == asked and notes == []
    mixed = {"single_hop": 0.5, "unanswerable": 0.25, "temporal": 0.25}
    plan, notes = for_generator(type_targets(8, mixed, None)[0], local=True, mix=mixed, types=None)
    assert plan == {"single_hop": 6, "unanswerable": 2} and notes[0].startswith("temporal")


def test_difficulty_levels():
    assert [level(p) for p in (0, 1, 2, 3, 4, 7)] == ["easy", "easy", "medium", "medium", "hard", "hard"]


def _cand(cid, q, a, verdict="passed", created="2025-01-01"):
    return {"id": cid, "question": q, "answer": a, "verdict": verdict, "verification": [],
            "created_at": created, "duplicate_of": None}


def test_dedup_exact_near_and_distinct():
    pool = [
        _cand("a", "How long is the return window at Northwind?", "45 days", verdict="failed"),
        _cand("b", "how long is the return window at northwind", "45 days"),
        _cand("c", "How long is the return window at Northwind, exactly?", "45 days."),
        _cand("d", "What is the price of the Gold membership?", "$49 per year"),
        _cand("e", "What is the price of the Basic membership?", "$19 per year"),
        _cand("f", "Which carrier delivers express parcels?", "UPS"),
    ]
    pairs = dict(dedup.find_duplicates(pool))
    assert pairs == {"a": "b", "c": "b"}  # b kept: passed beats failed, smaller id among equals
    sig = dedup.minhash(dedup.shingles("same text here"))
    assert sig == dedup.minhash(dedup.shingles("Same text, here!"))
