"""Faithfulness signals settled by code before any LLM verdict (`builder.score.signals`), and
the judge asking the LLM only about what code leaves open, one claim against its closest
context sentences."""

from __future__ import annotations

import pytest

from builder.score.judge import Judge, JudgeInput
from builder.score.signals import NEGATED, check_answer, content_terms, numbers, split_claims
from tests.fakes import ScriptedLLM


def verdicts(answer: str, *contexts: str) -> list[str | None]:
    return [c.verdict for c in check_answer(answer, list(contexts))]


@pytest.mark.parametrize("answer, context", [
    ("Refunds take five days.", "Refunds are paid within 5 days of the request."),
    ("Refunds take 5 days.", "Refunds are paid within five days of the request."),
    ("The plant employs 2000 people.", "The plant employs 2 000 people in three shifts."),
    ("The plant employs 2,000 people.", "The plant employs 2.000 people in three shifts."),
    ("It opened on March 5, 2021.", "Opening date: 2021-03-05, after two years of work."),
    ("Abrió el 5 de marzo de 2021.", "La tienda abrió el 2021-03-05 en Madrid."),
    ("Il a ouvert le 5 mars 2021.", "Ouverture le 05/03/2021 à Lyon."),
    ("It raised $5 million.", "The company raised $5,000,000 in its first round."),
    ("It costs 45 %.", "A fee of 45 percent applies."),
    ("Il rimborso arriva in tre giorni.", "Il rimborso arriva entro 3 giorni."),
    ("Le délai est de quatre-vingts jours.", "Le délai est de 80 jours."),
    ("Il rimborso arriva in diciotto giorni.", "Il rimborso arriva entro 18 giorni."),
    ("Die Frist beträgt dreißig Tage.", "Die Frist beträgt 30 Tage."),
    # each language's words (the lexicon's): Spanish "once" is 11, 万 a scale word
    ("El reembolso tarda once días.", "El reembolso tarda 11 días."),
    ("销售额为5万元。", "销售额为50000元。"),
    # and not another language's: in English "pies" is no unit of length, "mayo" and "Avril"
    # are no months
    ("The bakery sold 5 pies.", "The bakery is 5 metres wide and sold pies."),
    ("The onions and mayo were great.", "The onions were great."),
    ("It is a song by Avril Lavigne.", "Avril Lavigne sang it."),
])
def test_values_written_differently_are_found(answer, context):
    checks = check_answer(answer, [context])
    assert checks and all(not c.missing for c in checks), checks


@pytest.mark.parametrize("answer, context, missing", [
    ("Refunds take 7 days.", "Refunds are paid within 5 days.", "7"),
    ("Refunds take six days.", "Refunds are paid within 5 days.", "six"),
    ("It opened in June 2021.", "It opened on 2021-03-05.", "June"),
    ("The route is 5 km long.", "The route is 5 miles long.", "5 km"),
    ('The error reads "disk quota exceeded".', 'The error reads "disk full".',
     "disk quota exceeded"),
    ("The library was founded by Maria Lopez.", "The library was founded in the town.", "Maria"),
    ("Set max_retries to 3.", "Set retries to 3 in the config.", "max_retries"),
    ("It runs on GPT-4.", "It runs on a hosted model.", "GPT-4"),
    # number and unit words of the answer's language: German "elf" (11) and "Meilen", which
    # the one list shared by every language lacked; Spanish "once", which it could not hold
    ("Die Lieferung dauert elf Tage.", "Die Lieferung dauert 14 Tage.", "elf"),
    ("Die Strecke ist 5 Meilen lang.", "Die Strecke ist 5 Kilometer lang.", "5 meilen"),
    ("El reembolso tarda once días.", "El reembolso tarda 12 días.", "once"),
    ("Sie haben für die Feier drei Dutzend Eier gekauft.", "Sie haben für die Feier 30 Eier gekauft.",
     "drei Dutzend"),
    # every Latin-script language's number words reach 90, the French 70-90 in all their forms
    ("Refunds take seventy days.", "Refunds are paid within 60 days.", "seventy"),
    ("Le délai est de quatre-vingt-dix jours.", "Le délai est de 60 jours.", "quatre-vingt-dix"),
    ("Le délai est de soixante-dix jours.", "Le délai est de 60 jours.", "soixante-dix"),
    ("Le délai est de nonante jours.", "Le délai est de 60 jours.", "nonante"),
    ("Die Frist beträgt achtzig Tage.", "Die Frist beträgt 60 Tage.", "achtzig"),
    ("De termijn is zeventien dagen.", "De termijn is 60 dagen.", "zeventien"),
    ("Die Frist beträgt dreißig Tage.", "Die Frist beträgt 60 Tage.", "dreißig"),  # "dreissig"
])
def test_a_value_found_in_no_context_is_unsupported_by_code(answer, context, missing):
    (check,) = check_answer(answer, [context])
    assert check.verdict == "unsupported"
    assert any(missing in m for m in check.missing), check.missing
    assert "in no context" in check.reason


def test_claims_stated_in_the_contexts_are_supported_and_the_rest_left_open():
    contexts = ["The store opened in 1998. It sells tea and coffee.",
                "Staff get 25 days of leave a year."]
    assert verdicts("The store opened in 1998.", *contexts) == ["supported"]
    # every word in one sentence, another order
    assert verdicts("Tea and coffee are sold by the store.", *contexts) == [None]
    assert verdicts("It sells coffee and tea.", *contexts) == ["supported"]
    # a negation the context does not have is not settled by code
    assert verdicts("It does not sell coffee and tea.", *contexts) == [None]
    assert verdicts("The staff are happy.", *contexts) == [None]


def test_refusal_sentences_are_not_claims():
    assert split_claims("The passages contain no information on the date. It sells tea.") == [
        "It sells tea."]
    assert split_claims("I cannot find that in the sources.") == []


def test_german_nouns_are_not_names_and_cjk_numbers_are_checked():
    assert verdicts("Der Urlaub dauert 25 Tage.", "Mitarbeiter haben 25 Tage Urlaub im Jahr.") \
        == [None]
    assert verdicts("退款需要7天。", "退款在5天内完成。") == ["unsupported"]


async def test_the_llm_sees_one_open_claim_and_its_closest_sentences_only():
    contexts = ["Returns are accepted within 30 days. Shipping is free over 50 euros. "
                "The shop is in Rotterdam. Gift cards never expire. Staff wear blue."]
    asked = []

    def respond(prompt, variables, role):
        if prompt == "judge_claim":
            asked.append(variables)
            return {"reason": "scripted", "supported": False}
        raise AssertionError(prompt)

    judge = Judge(ScriptedLLM(respond), metrics=("faithfulness",))
    item = JudgeInput("q", "What is the return policy?", "", "Returns are accepted within "
                      "30 days. Returns need the receipt. Returns cost 9 euros.", contexts, True)
    assert judge.planned_calls(item) == 1
    out = (await judge.judge_all([item]))["q"]
    (call,) = asked
    assert call["claim"] == "Returns need the receipt."
    assert "Returns are accepted within 30 days." in call["evidence"]
    assert "Staff wear blue" not in call["evidence"]  # not the whole context
    claims = out.details["faithfulness"]["claims"]
    assert [(c["supported"], c["decided_by"]) for c in claims] == [
        (True, "code"), (False, "llm"), (False, "code")]
    assert out.metrics["hallucination_rate"] == 1.0
    assert out.metrics["faithfulness_supported"] == pytest.approx(1 / 3)


async def test_settle_hallucination_asks_nothing_once_code_found_one():
    def respond(prompt, variables, role):
        raise AssertionError("no LLM call expected")

    judge = Judge(ScriptedLLM(respond), metrics=("faithfulness",), settle_hallucination=True)
    item = JudgeInput("q", "Q?", "", "It opened in 2001. Staff like it.",
                      ["It opened in 1998."], True)
    assert judge.planned_calls(item) == 0
    out = (await judge.judge_all([item]))["q"]
    assert out.metrics == {"hallucination_rate": 1.0}



def test_scale_words_mean_what_they_mean_in_their_language():
    (en,) = numbers("2 billion euros", "en")
    (de,) = numbers("2 Billionen Euro", "de")  # a German Billion is a million millions
    assert en.forms == {"2", "2000000000"} and de.forms == {"2", "2000000000000"}


def test_negations_of_every_language_are_content_cjk_ones_inside_words():
    assert verdicts("Il negozio non vende tè.", "Il negozio vende tè e caffè.") == [None]
    assert verdicts("Le magasin vend du thé sans sucre.", "Le magasin vend du thé et du sucre.") \
        == [None]
    assert NEGATED in content_terms("退款不需要收据。", "zh")
    assert NEGATED in content_terms("返金には領収書が必要ありません。", "ja")
    assert NEGATED not in content_terms("退款需要收据。", "zh")


@pytest.mark.parametrize("answer", [
    "Passage 2 says refunds take 5 days.",
    "According to Passage 1, the store opened in 1998.",  # "Passage" is no name either
    "Refunds take 5 days (passage 2).",
    "Refunds take 5 days [2], and the store opened in 1998 [1].",
    "As passages 1 and 2 say, refunds take 5 days.",
    "Según el pasaje 2, el reembolso tarda 5 días.",
    "根据文档2，退款需要5天。",
])
def test_a_context_cited_by_its_position_is_a_reference_not_a_value(answer):
    contexts = ["The store opened in 1998.", "Refunds take 5 days. El reembolso tarda 5 días. "
                "退款需要5天。"]
    checks = check_answer(answer, contexts)
    assert checks and all(not c.missing for c in checks), checks


def test_a_position_beyond_the_contexts_given_is_a_value():
    (check,) = check_answer("Passage 4 says refunds take 5 days.", ["Refunds take 5 days.",
                                                                   "The store opened in 1998."])
    assert check.verdict == "unsupported" and check.missing == ["4"]
    (check,) = check_answer("Refunds take 5 days [3].", ["Refunds take 5 days."])
    assert check.verdict == "unsupported" and check.missing == ["3"]


@pytest.mark.parametrize("answer, question", [
    ("To uninstall uTorrent on Windows 10, open the Control Panel.",
     "how to uninstall utorrent windows 10"),
    ("Here are the steps to cook Sinigang na Baboy: boil the pork.", "how to cook sinigang na baboy"),
    # the question quoted back, as asked or restated in its words
    ('Here is a brief answer to the question "spicy pineapple shrimp stir fry": fry the shrimp.',
     "spicy pineapple shrimp stir fry"),
    ('The answer to the question "How long do you have to keep income tax records?" is three '
     'years.', "how long do you have to keep income tax record"),
])
def test_values_the_question_states_are_given_not_claimed(answer, question):
    contexts = ["Open the Control Panel and remove the program. Boil the pork with tamarind. "
                "Fry the shrimp with pineapple. Keep tax returns for three years."]
    assert any(c.verdict == "unsupported" for c in check_answer(answer, contexts))
    checks = check_answer(answer, contexts, question=question)
    assert checks and all(not c.missing for c in checks), checks


def test_a_value_from_the_question_never_makes_a_claim_supported():
    contexts = ["The store opens at 9 and closes at 17."]
    assert verdicts("The store is open 24 hours.", *contexts) == ["unsupported"]
    checks = check_answer("The store is open 24 hours.", contexts,
                          question="Is the store open 24 hours?")
    assert [c.verdict for c in checks] == [None]  # the LLM judges it against the contexts
    # a quote the question's words do not make up is still checked
    (check,) = check_answer('It says "open all night".', contexts, question="Is it open at night?")
    assert check.missing == ["open all night"]


async def test_the_judge_reads_the_items_question_as_given():
    asked = []

    def respond(prompt, variables, role):
        asked.append(variables["claim"])
        return {"reason": "scripted", "supported": True}

    judge = Judge(ScriptedLLM(respond), metrics=("faithfulness",))
    item = JudgeInput("q", "How do I reset the X200?", "", "To reset the X200, hold the power "
                      "button.", ["Hold the power button for ten seconds to reset the device."], True)
    out = (await judge.judge_all([item]))["q"]
    assert asked == ["To reset the X200, hold the power button."]
    assert out.metrics["hallucination_rate"] == 0.0


def test_a_citation_is_no_word_of_the_claim():
    contexts = ["Refunds take 5 days.", "The store opened in 1998."]
    # "2" was a content word no context sentence has: the claim went to the LLM
    assert verdicts("Refunds take 5 days (passage 1).", *contexts) == ["supported"]
    # a sentence that only cites a context states nothing
    assert verdicts("Refunds take 5 days.\n(Passage 1)", *contexts) == ["supported"]
