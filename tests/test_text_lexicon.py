"""The lexicon: every supported language supplies every concern, read the same way."""

from __future__ import annotations

import pytest

from builder.text.language import LANGUAGE_NAMES
from builder.text.lexicon import (
    DURATION_UNITS, KEYS, MEASURE_KINDS, OPTIONAL, SUPPORTED, all_stopwords, lexicon, raw_keys,
    unambiguous_stopwords,
)
from builder.text.values import magnitudes

CJK = ("zh", "ja", "ko")
LATIN = tuple(code for code in SUPPORTED if code not in CJK)


def test_supported_is_what_language_detection_can_return():
    assert set(SUPPORTED) == set(LANGUAGE_NAMES)


@pytest.mark.parametrize("code", SUPPORTED)
def test_every_language_supplies_every_concern(code):
    assert set(KEYS) <= raw_keys(code), f"{code}.toml lacks {set(KEYS) - raw_keys(code)}"
    lex = lexicon(code)
    for key in KEYS:
        value = getattr(lex, key)
        assert isinstance(value, bool) or value or key in OPTIONAL, f"{code}: {key} is empty"
    assert lex.homographs <= lex.stopwords, f"{code}: a homograph that is no stopword"
    assert code in CJK or lex.filler, f"{code}: filler is empty"
    assert set(lex.units.values()) <= set(DURATION_UNITS)
    assert set(lex.months.values()) <= set(range(1, 13))
    assert {lex.months[m] for m in lex.months} == set(range(1, 13)), f"{code}: months incomplete"
    assert not (lex.yes & lex.no), f"{code}: a word is both yes and no"
    assert lex.answer_no in lex.no
    # a ceiling and a floor are bounds of the language, and no bound is both
    bounds = set(lex.bounds_before) | set(lex.bounds_after)
    assert lex.ceilings | lex.floors <= bounds, f"{code}: {(lex.ceilings | lex.floors) - bounds}"
    assert not lex.ceilings & lex.floors, f"{code}: a bound is both a ceiling and a floor"
    # a capital letter marks a name in every Latin-script language but German; CJK has none
    assert lex.nouns_capitalised == (code == "de")
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


@pytest.mark.parametrize("code", LATIN)
def test_number_words_cover_the_same_range_in_every_latin_script_language(code):
    covered = set(lexicon(code).numbers.values())
    wanted = {0, 0.5, *range(1, 21), *range(30, 100, 10), 100}
    assert wanted <= covered, f"{code} lacks {sorted(wanted - covered)}"


@pytest.mark.parametrize("text, number", [
    ("soixante-dix jours", 70), ("septante jours", 70), ("quatre-vingt jours", 80),
    ("quatre-vingts jours", 80), ("huitante jours", 80), ("quatre-vingt-dix jours", 90),
    ("nonante jours", 90), ("dix-sept jours", 17),
])
def test_french_compound_numbers_are_one_number(text, number):
    assert magnitudes(text, "fr") == {number}


def test_text_of_unknown_language_drops_function_words_but_not_homographs():
    shared = unambiguous_stopwords()
    assert {"kann", "auf", "pour", "het", "の"} <= shared
    # function words in one language, content words in English: an English text keeps them
    assert {"son", "die", "come", "dos", "door", "op"}.isdisjoint(shared)
    assert {"son", "die", "come", "dos"} <= all_stopwords()
