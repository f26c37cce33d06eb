"""Form checks: does the reference answer answer the question it belongs to?"""

import pytest

from builder.generate import answer_form as af


@pytest.mark.parametrize("question,answer,ok", [
    ("How many days of holiday do staff get?", "25 days", True),
    ("How many days of holiday do staff get?", "Plenty, agreed with your manager", False),
    ("How long is the probation period?", "six months", True),
    ("When are expenses paid?", "At the end of each month", True),
    ("When are expenses paid?", "through BreatheHR", False),
    ("Who approves holiday requests?", "your line manager", True),
    ("What is the purpose of a holiday?", "25 days", False),
    ("Can I carry over unused holiday?", "Yes, up to 5 days", True),
    ("Can I carry over unused holiday?", "up to 5 days", False),
    ("Which tool is used to book holiday?", "Yes", False),
    ("¿Cuántos GB incluye Sync Plus?", "10 GB", True),
    ("¿Cuándo se renueva la licencia?", "cada año", True),
])
def test_the_answer_is_of_the_kind_the_question_asks_for(question, answer, ok):
    assert af.fits_question(question, answer)[0] is ok


@pytest.mark.parametrize("question,answer,ok", [
    ("What is an occasional side project?", "An occasional side project, free or paid.", False),
    ("How can you support Obsidian?", "You can support Obsidian.", False),
    ("Which tool is used to request holiday?", "BreatheHR", True),
    ("Can you carry over holiday?", "Yes", True),
])
def test_the_answer_adds_what_the_question_does_not_say(question, answer, ok):
    assert af.adds_information(question, answer)[0] is ok


def test_restating_a_long_statement_is_not_an_answer():
    statement = ("TOIL should be agreed with your delivery lead or line manager ahead of doing "
                 "the extra work.")
    assert not af.not_sentence_copy("How do you calculate TOIL?", statement, statement)[0]
    assert af.not_sentence_copy("Who agrees TOIL?", "your delivery lead or line manager", statement)[0]
    assert af.not_sentence_copy("Must TOIL be agreed in advance?", "Yes. " + statement, statement)[0]


def test_questions_that_point_at_a_document_are_not_standalone():
    assert not af.standalone("What is the main focus of this section of the Playbook?")[0]
    assert not af.standalone("¿Qué explica esta página?")[0]
    assert af.standalone("What does section 4 of the contract cover?")[0]


def test_a_prompt_example_question_is_recognised_whatever_the_kb():
    prompt = ('Example reply: {"question": "How much does a pass cost?", "answer": "It depends"}\n'
              "Question: How much does a library card cost a visitor?\n")
    examples = af.example_questions(prompt)
    assert "How much does a pass cost?" in examples
    assert not af.not_an_example("How much does a pass cost?", examples)[0]
    assert not af.not_an_example("How much does the pass cost?", examples)[0]
    assert af.not_an_example("How much does the Gold membership cost per year?", examples)[0]
