"""The lexicon: every supported language supplies every concern, read the same way."""

from __future__ import annotations

import pytest

from builder.text.language import LANGUAGE_NAMES
from builder.text.lexicon import DURATION_UNITS, KEYS, MEASURE_KINDS, SUPPORTED, lexicon, raw_keys


def test_supported_is_what_language_detection_can_return():
    assert set(SUPPORTED) == set(LANGUAGE_NAMES)


@pytest.mark.parametrize("code", SUPPORTED)
def test_every_language_supplies_every_concern(code):
    assert set(KEYS) <= raw_keys(code), f"{code}.toml lacks {set(KEYS) - raw_keys(code)}"
    lex = lexicon(code)
    for key in KEYS:
        assert getattr(lex, key), f"{code}: {key} is empty"
    assert set(lex.units.values()) <= set(DURATION_UNITS)
    assert set(lex.months.values()) <= set(range(1, 13))
    assert {lex.months[m] for m in lex.months} == set(range(1, 13)), f"{code}: months incomplete"
    assert not (lex.yes & lex.no), f"{code}: a word is both yes and no"
    assert {kind for kind, _ in lex.measures.values()} <= set(MEASURE_KINDS)
    assert all(exponent > 0 for exponent in lex.scales.values())
    # a citation noun comes before a context's position ("passage 2"): a function word, a
    # number, a month or a unit there would take a value for a citation
    assert not lex.citations & (lex.stopwords | set(lex.numbers) | set(lex.months) | set(lex.units)
                                | set(lex.measures)), f"{code}: a citation noun is another word"


def test_unknown_and_regional_codes():
    assert lexicon("pt-BR").code == "pt"
    assert lexicon("xx").code == "en"
    assert lexicon(None).code == "en"
