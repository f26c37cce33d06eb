"""A question must stand alone: it may not point at the text, nor at something only the text
showed ("this benefit"), in any supported language."""

from __future__ import annotations

import pytest

from builder.generate.form import bound_problem, document_ref_problem, question_problems
from builder.text.lexicon import SUPPORTED, lexicon


@pytest.mark.parametrize("question, language", [
    ("Where can you find further information on this benefit?", "en"),
    ("Quel est le montant de cette prime ?", "fr"),
    ("¿Cuál es el límite de este plan?", "es"),
    ("Wie lange gilt diese Regel?", "de"),
    ("这个计划的期限是多少？", "zh"),
    ("According to the passage, how long is the notice period?", "en"),
])
def test_a_question_leaning_on_what_the_text_showed_is_refused(question, language):
    assert document_ref_problem(question, language) is not None


@pytest.mark.parametrize("question, language", [
    ("How long is the notice period for a Senior Engineer?", "en"),
    ("Qu'est-ce que le CRPA ?", "fr"),          # "ce" of "qu'est-ce que" is no determiner
    ("What is the scheme that employees must keep paying into?", "en"),
    ("员工应该在几天内提交报销？", "zh"),          # 应该 ("should") holds 该
])
def test_a_standalone_question_is_not_refused(question, language):
    assert document_ref_problem(question, language) is None


def test_every_language_names_its_demonstratives_and_example_cues():
    for code in SUPPORTED:
        assert lexicon(code).demonstratives and lexicon(code).examples, code


def test_a_mention_may_be_inflected_but_not_replaced():
    from builder.generate.form import mention_problem
    assert mention_problem("Quel est le tarif des chargés de déploiement juniors ?",
                           ["Chargé de déploiement"]) is None
    assert mention_problem("Quel est le salaire de l'observateur junior ?", ["Développeur"])
    assert mention_problem("How many days trigger a formal meeting?", ["informal"])


SPELLS = "the question spells out the abbreviation it asks for"
REPEATS = "the answer only repeats words of the question"


@pytest.mark.parametrize("question,answer,language,reason", [
    # the expansion gives one letter a word, short words passed over
    ("What is the short name of the General Data Protection Regulation of the EU?", "GDPR", "en",
     SPELLS),
    # two or three letters a word for a longer acronym, in any language
    ("Quelle est l'autorité de régulation de la communication audiovisuelle et numérique ?",
     "ARCOM", "fr", SPELLS),
    ("Which unit does the Central Processing Unit name?", "CPU", "en", SPELLS),
    # an acronym the question does not spell out
    ("Which authority regulates broadcasting in France?", "ARCOM", "en", None),
    ("Which format stores the exported dataset?", "JSONL", "en", None),
    ("Who approves a request for parental leave?", "HR", "en", None),
    # every word of the answer already in the question, inflected or not
    ("What is the scheme for electric vehicles?", "Electric Vehicle", "en", REPEATS),
    ("Quels documents les sous-traitants signent-ils ?", "Document signé", "fr", REPEATS),
    ("How many days of leave can you carry over?", "five days", "en", None),
    ("Which scheme lets employees lease an electric car?", "Electric Vehicle", "en", None),
])
def test_a_question_that_holds_its_answer_in_other_words_is_refused(question, answer, language,
                                                                   reason):
    from builder.generate.form import leak_problem
    assert leak_problem(question, answer, language) == reason


def test_words_written_with_decomposed_accents_are_whole_words():
    from builder.generate.terms import key_terms, tokens
    decomposed = "chiffre d’affaires infe\u0301rieur a\u0300 33 200 €"
    assert "inférieur" in tokens(decomposed)
    assert key_terms(decomposed) & key_terms("Quel chiffre d'affaires inférieur ?") >= {"inférieur"}
    from builder.generate.form import contains
    assert contains("Quel est le plafond de chiffre d'affaires inférieur ?", "infe\u0301rieur")


def test_a_question_holding_the_prompts_answer_mark_is_refused():
    from builder.generate.form import question_problems
    statement = "The company pays full salary for 18 weeks."
    marked = "How many weeks is full salary paid for the first <answer>first</answer> of leave?"
    assert "holds the prompt's answer mark" in question_problems(
        marked, answer="18 weeks", language="en", statement=statement)
    assert question_problems("How many weeks does the company pay full salary for?",
                             answer="18 weeks", language="en", statement=statement) == []


@pytest.mark.parametrize("question, answer, language", [
    ("What is the minimum size of content that can be decoded?", "less than 32 octets", "en"),
    ("What is the maximum duration of absence that needs a meeting?", "exceeding 20 working days", "en"),
    ("¿Cuál es el almacenamiento máximo del plan?", "al menos 10 GB", "es"),
    ("Quelle est la durée minimum du préavis ?", "jusqu'à 3 mois", "fr"),
    ("Wie viele Tage darf die Frist höchstens betragen?", "mindestens 3 Tage", "de"),
])
def test_a_question_for_the_other_bound_than_its_answer_sets_is_refused(question, answer, language):
    assert bound_problem(question, answer, language)
    assert any("other bound" in p for p in question_problems(
        question, answer=answer, language=language, statement="unrelated words here"))


@pytest.mark.parametrize("question, answer, language", [
    ("What is the maximum number of days of leave?", "up to 5 days", "en"),
    ("How long may the notice period be?", "less than 32 days", "en"),  # no bound asked
    ("What is the minimum service before parental pay?", "26 weeks", "en"),  # bare value
    ("Quelle est la durée minimum du préavis ?", "au moins 1 mois", "fr"),
])
def test_a_question_for_the_bound_its_answer_sets_or_none_is_not(question, answer, language):
    assert bound_problem(question, answer, language) is None
