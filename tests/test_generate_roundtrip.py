"""Round-trip consistency: the code that decides whether a second, independent answer agrees
with the reference, and whether an answer is really in the passages."""

import pytest

from builder.generate.roundtrip import answers_match, grounded_in, polarity


@pytest.mark.parametrize("reference,got,question", [
    ("25 days", "25 days", "How many days of holiday does dxw offer?"),
    ("up to a maximum of 5 days", "5 days", "How many unused days can be carried over?"),
    ("your delivery lead or line manager", "Delivery Lead", "Who must agree TOIL in advance?"),
    ("BreatheHR", "We use BreatheHR to track who's off", "Which tool tracks who is off?"),
    ("No, only on a work device", "No", "Can I open client data on my own laptop?"),
    ("Sí, hasta 100 GB", "Sí: puedes aumentar el almacenamiento hasta 100 GB",
     "¿Puedo ampliar el almacenamiento de Sync Plus?"),
    # the reader spells out what the reference writes in digits (httpx's "five seconds")
    ("after 5 seconds", "five seconds", "What network inactivity triggers a timeout?"),
    ("3 bóvedas", "tres bóvedas", "¿Cuántas bóvedas incluye el plan?"),
])
def test_agreeing_answers_match(reference, got, question):
    ok, why = answers_match(reference, got, question)
    assert ok, why


@pytest.mark.parametrize("reference,got,question,reason", [
    # another level of the same rubric: only the question's own words are shared
    ("makes an impact on one or more subsystems or team pods",
     "makes an impact on the whole team, not just on specific parts of it",
     "What impact does a developer make?", "terms"),
    ("No, only on a work device", "Yes, you can use a personal device", "Can I use my laptop?", "yes"),
    ("30 days", "45 days", "How long is the return window?", "states 45"),
    ("30 days", "within a month", "How long is the return window?", "value"),
    ("30 days", "twenty days", "How long is the return window?", "states 20"),
    # "once" is Spanish eleven but English first: not read as a number
    ("11 days", "once a year", "How long is the return window?", "value"),
    # a tautology matches nothing, however the round trip answers
    ("An occasional side project, free or paid", "An occasional side project",
     "What is an occasional side project, free or paid?", "repeats the question"),
    ("BreatheHR", "", "Which tool tracks who is off?", "no answer"),
])
def test_disagreeing_answers_do_not_match(reference, got, question, reason):
    ok, why = answers_match(reference, got, question)
    assert not ok
    assert reason in why


def test_polarity_reads_the_first_word_in_several_languages():
    assert polarity("Yes, within 30 days") is True
    assert polarity("No: only on a work device") is False
    assert polarity("Sí, puedes") is True and polarity("Non, jamais") is False
    assert polarity("Si no tienes una, regístrate") is None  # Spanish "si" is "if"
    assert polarity("Within 30 days") is None


def test_an_answer_is_grounded_only_in_a_passage_that_states_it():
    passages = [{"id": "a", "text": "Visitors pay $10 a year for a library card."},
                {"id": "b", "text": "Residents get a card for free."}]
    assert grounded_in("$10 a year", passages, preferred=2) == 0  # named wrongly, found anyway
    assert grounded_in("for free", passages) == 1
    assert grounded_in("$12 a year", passages) is None  # a number no passage states
    assert grounded_in("The card costs nothing for anyone", passages) is None


def test_small_numbers_in_words_are_read_in_several_languages():
    from builder.generate.terms import spelled_numbers

    assert spelled_numbers("five seconds") == {"5"}
    assert spelled_numbers("Doce meses y una bóveda") == {"12", "1"}
    assert spelled_numbers("zwölf Monate, trois jours") == {"12", "3"}
    assert spelled_numbers("someone, fiver, 5 days, once, due") == set()
