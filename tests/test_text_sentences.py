"""The one sentence rule (builder.text.sentences), as statements, claims and refusals read it."""

from __future__ import annotations

from builder.text.sentences import sentence_spans, split_sentences


def sentences(text: str) -> list[str]:
    return [text[a:b].strip() for a, b in sentence_spans(text)]


def test_spans_cover_the_text_without_gaps():
    text = "Refunds take 5 days. Gold members pay $60 a year! Ask staff?  Yes."
    spans = sentence_spans(text)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert sentences(text) == ["Refunds take 5 days.", "Gold members pay $60 a year!", "Ask staff?",
                               "Yes."]


def test_abbreviations_decimals_and_lower_case_do_not_end_a_sentence():
    assert sentences("Bring gear, e.g. Tents and stoves. Version 2.5 is out.") == [
        "Bring gear, e.g. Tents and stoves.", "Version 2.5 is out."]
    assert sentences("Ask Mr. Smith about it. It opens at 3:00 p.m. Pacific time.") == [
        "Ask Mr. Smith about it.", "It opens at 3:00 p.m. Pacific time."]
    assert sentences("Closed at 4:00 p.m. On holidays it opens late.") == [
        "Closed at 4:00 p.m.", "On holidays it opens late."]
    assert sentences("See the docs. then continue") == ["See the docs. then continue"]
    # an opener of any supported language after "etc." starts the next sentence; a name does not
    assert sentences("Bring tents, stoves etc. Please note the fee.") == [
        "Bring tents, stoves etc.", "Please note the fee."]
    assert sentences("Tentes, réchauds etc. Veuillez noter le tarif.") == [
        "Tentes, réchauds etc.", "Veuillez noter le tarif."]
    assert sentences("Made by Acme Inc. Denver builds the rest.") == [
        "Made by Acme Inc. Denver builds the rest."]


def test_chinese_ends_after_its_own_punctuation():
    assert sentences("退款需要5天。会员每年60美元！") == ["退款需要5天。", "会员每年60美元！"]


def test_split_sentences_ends_a_sentence_at_every_line_break():
    assert split_sentences("First line without a stop\nSecond one. Third one.\n\n") == [
        "First line without a stop", "Second one.", "Third one."]
