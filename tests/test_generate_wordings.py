"""The question writer offers several wordings; code keeps the best (questions._choose)."""

from __future__ import annotations

from builder.generate.answers import Span
from builder.generate.models import WrittenQuestions
from builder.generate.questions import _choose

STATEMENT = "Employees may carry over up to five days of annual leave into the next year."


def _span() -> Span:
    return Span(id="s", fact={"id": "f", "text": STATEMENT}, chunk_id="c", document_id="d",
                language="en", title="Leave > Annual leave", answer="five days", kind="duration")


def test_a_wording_that_holds_its_answer_gives_way_to_the_next():
    question, answer, problems, offered = _choose(_span(), [
        "Can employees carry over five days of annual leave?",
        "How many days of annual leave can employees carry over into the next year?"], [], None)
    assert question.startswith("How many days") and answer == "five days" and problems == []
    assert len(offered) == 2


def test_every_wording_failing_keeps_the_first_with_its_problems():
    question, _, problems, _ = _choose(_span(), [
        "Can employees carry over five days of leave?", "Is it five days?"], [], None)
    assert question == "Can employees carry over five days of leave?"
    assert any("contains its answer" in p for p in problems)


def test_the_round_trip_code_half_decides_between_wordings_that_pass_the_form():
    seen = []

    def precheck(question, reference, chunk, language):
        seen.append((question, reference, chunk, language))
        if "leave" not in question:
            return "specificity: another sentence fits the question as well", 1
        return None, 3 if "annual" in question else 2

    question, _, problems, _ = _choose(_span(), [
        "How many days can employees carry over?",
        "How many days of annual leave can employees carry over into the next year?",
        "How many days of leave can employees carry into the next year?"], [], precheck)
    # the first fails specificity; of the two that pass, the passage ranks higher for the third
    assert question == "How many days of leave can employees carry into the next year?"
    assert problems == [] and len(seen) == 3
    assert {s[1:] for s in seen} == {("five days", "c", "en")}


def test_duplicate_and_blank_wordings_are_dropped_and_an_old_single_reply_still_reads():
    _, _, _, offered = _choose(_span(), ["How long is the carry-over? Five days.",
                                         "How long is the carry-over?", "  "], [], None)
    assert offered == ["How long is the carry-over?"]
    assert WrittenQuestions.model_validate({"question": "Why?"}).questions == ["Why?"]
    assert WrittenQuestions.model_validate({"questions": ["A?", "B?"]}).questions == ["A?", "B?"]
