"""A question must stand alone: it may not point at the text, nor at something only the text
showed ("this benefit"), in any supported language."""

from __future__ import annotations

import pytest

from builder.generate.form import document_ref_problem
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
