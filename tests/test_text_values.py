"""Values found by code, in several languages: what answers, comparisons and round trips use."""

from __future__ import annotations

import pytest

from builder.text.bm25 import BM25
from builder.text.values import comparable, find_values, magnitudes


def kinds(text, lang):
    return [(v.text, v.kind) for v in find_values(text, lang)]


@pytest.mark.parametrize("lang,text,expected", [
    ("en", "Parents get 12 weeks of full pay and $1,200 per year; 15% of staff.",
     [("12 weeks", "duration"), ("$1,200", "amount"), ("15%", "percent")]),
    ("en", "Since January 15, 2024 the limit is 10 GB.",
     [("January 15, 2024", "date"), ("10 GB", "quantity")]),
    ("es", "Tienes 30 días o dos semanas; 8 € al año desde el 15 de enero de 2024.",
     [("30 días", "duration"), ("dos semanas", "duration"), ("8 €", "amount"),
      ("15 de enero de 2024", "date")]),
    ("fr", "Le délai est de 2 mois pour 1 200 € et 23,5 %.",
     [("2 mois", "duration"), ("1 200 €", "amount"), ("23,5 %", "percent")]),
    ("de", "Die Frist beträgt 14 Tage oder 1.500 Euro.",
     [("14 Tage", "duration"), ("1.500 Euro", "amount")]),
    ("zh", "退货需要5天，费用为100元，两周内。2024年3月1日起。",
     [("5天", "duration"), ("100元", "amount"), ("两周", "duration"), ("2024年3月1日", "date")]),
])
def test_values_in_several_languages(lang, text, expected):
    assert kinds(text, lang) == expected


def test_identifiers_versions_and_times_are_not_values():
    assert kinds("Use v2 with version 1.2.3 at 10:30 on host abc123.", "en") == []


def test_magnitudes_and_comparability():
    assert magnitudes("five seconds", "en") == magnitudes("5 seconds", "en") == {5.0}
    assert magnitudes("两周", "zh") == {2.0}
    assert 1500.0 in magnitudes("1.500 Euro", "de")
    assert 1.5 in magnitudes("1.500 dollars", "en")
    weeks, days = find_values("12 weeks", "en")[0], find_values("10 days", "en")[0]
    assert comparable(weeks, days) and weeks.magnitude == 84 and days.magnitude == 10
    money, pct = find_values("$5", "en")[0], find_values("5%", "en")[0]
    assert not comparable(money, pct)


def test_bm25_ranks_the_matching_text_first_in_any_script():
    from builder.generate.knowledge import search_terms
    texts = ["Returns are accepted within 30 days.", "Shipping takes 5 days.",
             "标准配送需要5天送达。", "退货政策：30天内可退货。"]
    index = BM25(texts, search_terms)
    assert index.top("how long do returns take", 1)[0][0] == 0
    assert index.top("退货需要多少天", 1)[0][0] == 3
    assert index.top("zzz", 3) == []


def test_a_count_answer_keeps_what_it_counts_and_a_possessive_unit_is_still_a_unit():
    def one(text, lang="en"):
        (v,) = find_values(text, lang)
        return v.text, v.kind, round(v.magnitude, 2)
    # "200" alone is not what the text says: the count carries its words, up to a function word
    assert one("a limit of 200 Mo per file", "fr") == ("200 Mo", "count", 200)
    assert one("less than 32 octets will be decoded") == ("32 octets", "count", 32)
    assert one("costs 60 gas per call") == ("60 gas", "count", 60)
    # a possessive is still the unit; a word between number and unit keeps it a duration
    assert one("We ask for at least 4 weeks' notice") == ("4 weeks", "duration", 28)
    assert one("made with 1 week’s notice") == ("1 week", "duration", 7)
    assert one("remain in care for at least 7 continuous days") == ("7 continuous days", "duration", 7)
    # a list number before a citation is no count of "Ruben"
    assert one("18 Ruben Recabarren and Bogdan Carbunar") == ("18", "number", 18)


def test_stated_dates_read_every_language_and_a_year_before_a_full_stop():
    """The statements' `dates` come from the one value reader: month names of the text's
    language (the old English-only reader found '2021' in the French line, and no year
    before a full stop)."""
    from builder.text.values import stated_dates

    assert stated_dates("Publié le 3 mars 2021, révisé en juin 2022.", "fr") == ["2021-03-03", "2022-06"]
    assert stated_dates("Released on March 5, 2023 and updated in 2024.", "en") == ["2023-03-05", "2024"]
    assert stated_dates("Am 1. Mai 2020 und wieder am 1. Mai 2020.", "de") == ["2020-05-01"]
    assert stated_dates("2019年5月发布", "zh") == ["2019-05"]
    assert stated_dates("Costs 30 EUR for 2 weeks.", "en") == []


@pytest.mark.parametrize("lang,text,span,bound", [
    ("en", "We refund up to £150 for screenings.", "up to £150", "up to"),
    ("en", "Parcels may weigh 5 GB or more per site.", "5 GB or more", "or more"),
    ("en", "Please understand 5 days is the usual wait.", "5 days", ""),
    ("de", "Die Straße ist bis zu 3 Tage gesperrt.", "bis zu 3 Tage", "bis zu"),  # ß casefolds longer
    ("fr", "Vous avez droit à 25 jours maximum par an.", "25 jours maximum", "maximum"),
    ("fr", "Les factures sont envoyées dans les 15 jours après la fin des travaux.",
     "dans les 15 jours", "dans les"),
    ("ja", "申請は5日以内に提出してください。", "5日以内", "以内"),
])
def test_a_value_takes_the_words_that_bound_it_and_gives_them_back(lang, text, span, bound):
    from builder.text.values import bounded, split_bound
    (value,) = [v for v in find_values(text, lang) if v.kind != "number"]
    start, end = bounded(text, value.start, value.end, lang)
    assert text[start:end] == span
    assert split_bound(span, lang) == (bound, value.text)


@pytest.mark.parametrize("lang,text,span,period", [
    ("en", "The nursery fund pays at least £1,000 per month for each child.",
     "at least £1,000 per month", "month"),
    ("en", "Parents may take up to 4 weeks a year of unpaid leave.", "up to 4 weeks a year", "year"),
    ("fr", "Chaque agent a droit à 25 jours par an de congés payés.", "25 jours par an", "year"),
    ("de", "Mitarbeitende haben 30 Tage pro Jahr Urlaub.", "30 Tage pro Jahr", "year"),
    ("es", "Se pagan 20 días al año de vacaciones.", "20 días al año", "year"),
    # no period: a plural unit, two connecting words, a point in time, a capitalised word
    ("en", "Parents may take up to 18 weeks in total.", "up to 18 weeks", ""),
    ("en", "Reply within 14 days of the month it was sent.", "within 14 days", ""),
    ("en", "You get a laptop within 2 weeks of day one.", "within 2 weeks", ""),
    ("en", "The loan lasts 3 months A year later it ends.", "3 months", ""),
])
def test_a_value_takes_the_period_it_is_counted_over(lang, text, span, period):
    """A monthly fee without its month reads as the fee, and a yearly allowance compared with a
    total compares two different things: the period is part of the span, in any language."""
    from builder.text.values import bounded, rate_of
    value = next(v for v in find_values(text, lang) if v.kind != "number")
    start, end = bounded(text, value.start, value.end, lang)
    assert text[start:end] == span
    assert rate_of(span, lang) == period
