"""The question writer offers several wordings; code keeps the best (questions._choose)."""

from __future__ import annotations

from builder.generate.answers import Span
from builder.generate.form import question_problems
from builder.generate.models import WrittenQuestions
from builder.generate.questions import _choose, question_vars
from builder.llm.prompts import load_prompt

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
        "How many days of leave can employees carry over into the next year?"], [], precheck)
    # the first fails specificity; of the two that pass, the passage ranks higher for the third
    assert question == "How many days of leave can employees carry over into the next year?"
    assert problems == [] and len(seen) == 3
    assert {s[1:] for s in seen} == {("five days", "c", "en")}


def test_duplicate_and_blank_wordings_are_dropped_and_an_old_single_reply_still_reads():
    _, _, _, offered = _choose(_span(), ["How long is the carry-over? Five days.",
                                         "How long is the carry-over?", "  "], [], None)
    assert offered == ["How long is the carry-over?"]
    assert WrittenQuestions.model_validate({"question": "Why?"}).questions == ["Why?"]
    assert WrittenQuestions.model_validate({"questions": ["A?", "B?"]}).questions == ["A?", "B?"]


def test_the_question_prompt_marks_the_answer_where_it_stands_in_the_passage():
    """The writer is shown what the words around the answer say it is, not the bare value."""
    vars_ = question_vars(_span(), ["annual leave"], None)
    user = load_prompt("question").render(vars_)[-1]["content"]
    assert "Passage: Employees may carry over up to <answer>five days</answer> of annual leave" \
        in user
    assert "Answer: five days (a duration)" in user
    assert "The question must contain the words: annual leave" in user


def test_a_name_is_shown_a_worked_example_for_a_name():
    """The prompt's fixed example asks for a duration; a name span is also shown one for a name
    (from another company, in the prompt file); a value or a table cell nothing more, and a
    name shown its partner's question no second example. A value's request reads as it did
    before (version 9)."""
    prompt = load_prompt("question")

    def user(kind: str, partner: dict | None = None) -> str:
        span = _span()
        span.kind = kind
        return prompt.render(question_vars(span, [], partner))[-1]["content"]
    name = user("name")
    assert name.startswith("An example for a name (from another company):")
    assert "<answer>LibraryHub</answer>" in name and "Now your passage:\nLanguage:" in name
    for other in ("cell", "duration"):
        assert user(other).startswith("\nLanguage: English\n") and "example" not in user(other)
    partner = {"passage": "P", "answer": "A", "question": "Q?"}
    assert "An example for" not in user("name", partner)
    assert user("name", partner).startswith("A question that worked for a related passage")


def test_an_answer_written_otherwise_in_the_passage_is_marked_after_it():
    span = _span()
    span.answer = "FIVE DAYS"  # case differs: found without case
    assert question_vars(span, [], None)["before"] == "Employees may carry over up to "
    span.answer = "5 days"     # not in the passage as written: shown after it, passage whole
    v = question_vars(span, [], None)
    assert v["before"] == STATEMENT + " " and v["after"] == ""


def _value(statement: str, answer: str, language: str = "en", **kw) -> Span:
    return Span(id="s", fact={"id": "f", "text": statement}, chunk_id="c", document_id="d",
                language=language, title="Club > Rules", answer=answer, kind="duration", **kw)


def test_the_words_next_to_an_answer_are_its_nearest_content_words_on_each_side():
    assert _value("Members must give 8 weeks notice of a change.", "8 weeks").nearby == \
        ["give", "notice"]
    # function words and a bound's own words are passed over; markup is not a word
    assert _value("Private **lessons** are paid up to £40.", "£40").nearby == ["paid"]
    assert _value("Private lessons - up to £40", "£40").nearby == ["lessons"]
    assert _value("会员须提前8周通知。", "8周", "zh").nearby == ["提前", "通知"]
    # a table cell is said by its row and column, not by the cells beside it
    assert _value("Coach — Senior: 550", "550", mention=["Coach", "Senior"]).nearby == []


def test_a_question_that_uses_no_word_next_to_its_answer_is_refused():
    span = _value("Members must give 8 weeks notice of a change of plan.", "8 weeks")
    asked_else = "For how long can members change their plan?"
    problems = question_problems(asked_else, answer="8 weeks", language="en",
                                 statement=span.statement, nearby=span.nearby)
    assert problems == ["does not say what its answer is (none of 'give', 'notice')"]
    for good in ("How much notice must members give of a change of plan?",
                 "How many weeks' notice do members owe before changing plan?"):
        assert question_problems(good, answer="8 weeks", language="en",
                                 statement=span.statement, nearby=span.nearby) == []
    # the writer is told the words
    user = load_prompt("question").render(question_vars(span, [], None))[-1]["content"]
    assert "The question must use one of these words next to the answer: give, notice" in user


def test_words_next_to_an_answer_in_scripts_without_spaces_are_found_as_text():
    for statement, answer, language, question in [
        ("会員は8週間前に通知が必要です。", "8週間", "ja", "会員は何週間前に通知が必要ですか？"),
        ("회원은 8주 전에 통지해야 합니다.", "8주", "ko", "회원이 몇 주 전에 통지해야 합니까?"),
        ("员工须提前30天提交报销。", "30天", "zh", "报销需要员工提前多少天申请？"),
    ]:
        span = _value(statement, answer, language)
        assert span.nearby and question_problems(
            question, answer=answer, language=language, statement=statement,
            nearby=span.nearby) == [], (language, span.nearby)
    span = _value("员工须提前30天提交报销。", "30天", "zh")
    assert question_problems("员工的报销期限是多少天？", answer="30天", language="zh",
                             statement=span.statement, nearby=span.nearby)
