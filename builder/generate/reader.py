"""The reader: one call that answers a question from numbered sentences (`reader.prompt`), and
code's reading of its reply.

Alberti et al. (2019) keep a generated question only when answering it again gives the same
answer; the reader is that second answer. Code, not the model, decides what the reply says:
it must be words of a sentence it was shown (`ask`: the sentence it named first, then the
others), and it must state the reference -- the same numbers and no other (two values where
one was asked is a vague question), or most of the reference's terms for a name
(`states_reference`) -- and, in the round trip, say no more than it (`says_more`). The round
trip (roundtrip.py) and the compositions (compose.py) both ask it.
"""

from __future__ import annotations

import re

from dataclasses import dataclass

from builder.text.language import CJK_CHAR
from builder.text.locate import locate_span
from builder.text.values import find_values, magnitudes

from builder.generate.models import ReaderReply
from builder.generate.terms import key_terms

PROMPT = "reader"
MIN_RECALL = 0.75


def states_reference(reference: str, got: str, language: str) -> str | None:
    """None when `got` states the reference answer; else why not."""
    if not got.strip():
        return "the reader found no answer"
    if len(got.split()) > max(8, 3 * len(reference.split())):
        return f"the reader answered with a whole sentence ({got!r}): the question asks for more"
    ref_nums = magnitudes(reference, language)
    got_nums = magnitudes(got, language)
    if ref_nums:
        if not ref_nums <= got_nums:
            return f"the reader answered {got!r}"
        if got_nums - ref_nums:
            return f"the reader answered {got!r}: another value too"
        return None
    ref_terms, got_terms = key_terms(reference), key_terms(got)
    if not ref_terms:
        return None if reference.strip().casefold() in got.casefold() else f"the reader answered {got!r}"
    recall = len(ref_terms & got_terms) / len(ref_terms)
    if recall >= MIN_RECALL and len(got_terms) <= 3 * len(ref_terms) + 2:
        return None
    return f"the reader answered {got!r}"


def says_more(reference: str, got: str, question: str, language: str) -> str | None:
    """Why the reader's answer says more than the reference, or None. A content word of the
    answer that is neither the reference's nor the question's ("gzip and deflate" for
    "deflate", "New York" for "York", "600 euros HT" for "600 euros" when the question does not
    say HT, "de quelques jours à 3 semaines" for "3 semaines") means the question asks for more
    than the answer code chose: the reference is half of what a reader finds. Values are
    compared by `states_reference` and left out here ("five seconds" is "5 seconds", "$1,000
    USD" is "$1,000"), and so are words the question already says ("12 months service" for
    "... to be in service?"). A term of a script written without spaces is covered when each
    of its characters is."""
    rest, units = got, set()
    for lang in dict.fromkeys((language, "en")):
        for value in find_values(rest, lang):
            rest = rest.replace(value.text, " ")
            if value.unit:
                units.add(str(value.unit).casefold())
    said = key_terms(reference) | key_terms(question) | units
    chars = set(CJK_CHAR.findall(reference + question))
    extra = sorted(t for t in key_terms(rest) if not t.isdigit() and t not in said
                   and not (CJK_CHAR.search(t) and set(CJK_CHAR.findall(t)) <= chars))
    if not extra:
        return None
    return (f"the reader answered {got!r}, more than the reference ({', '.join(extra)}): "
            "the question asks for more than its answer")


@dataclass
class Reply:
    """A reader's reply as code reads it: the answer, and the sentence it is words of (""
    when it is words of none: the model's own knowledge, or nothing)."""

    answer: str
    sentence: str = ""

    @property
    def grounded(self) -> bool:
        return bool(self.sentence)


async def ask(ctx, question: str, sentences: list[dict], language: str = "en") -> Reply | None:
    """One reader call; None when the call failed. The sentence the reader named is looked in
    first, then the others. A value the reader restated in the prompt's language ("30 days"
    for "30 jours") is grounded by its value (`_restated_value`) in the sentence it named, or
    else in the one sentence shown that holds that value."""
    res = await ctx.call(PROMPT, {"sentences": [{"text": s["text"]} for s in sentences],
                                  "question": question}, ReaderReply, role="verifier")
    if not res.ok:
        return None
    answer = " ".join(res.value.answer.split()).strip(" .")
    if not answer or not any(ch.isalnum() for ch in answer):
        return Reply("")
    named = res.value.sentence
    order = sentences[named - 1:named] + sentences if 1 <= named <= len(sentences) else sentences
    for s in order:
        if locate_span(s["sentence"], answer, min_chars=1) is not None:
            return Reply(answer, s["sentence"])
    restated = {s["sentence"]: words for s in sentences
                if (words := _restated_value(answer, s["sentence"], language)) is not None}
    named_sentence = sentences[named - 1]["sentence"] if 1 <= named <= len(sentences) else None
    if named_sentence in restated:
        return Reply(restated[named_sentence], named_sentence)
    if len(restated) == 1:
        [(sentence, words)] = restated.items()
        return Reply(words, sentence)
    return Reply(answer)


def _restated_value(answer: str, sentence: str, language: str) -> str | None:
    """The sentence's words for the one value the answer states, when the answer is that value
    restated (a small model answers in the prompt's language, English, or rewrites the number):
    the same kind and magnitude, and exactly one such value in the sentence. Otherwise None:
    a value the sentence does not hold stays ungrounded.

    The answer is read in the question's language, then in English, each reading on its own:
    "6 months" is a count of months to French rules and a duration to English ones, and the
    two readings' magnitudes differ. A sentence stating the magnitude twice ("112 jours ...
    soit 16 semaines") is read by the one written with the answer's number."""
    for lang in dict.fromkeys((language, "en")):
        said = find_values(answer, lang)
        if len(said) != 1 or len(answer.split()) > len(said[0].text.split()) + 2:
            continue  # no value, two values, or more than a value: a phrase, not a restatement
        value = said[0]
        same = [v for v in find_values(sentence, language)
                if v.kind == value.kind and v.magnitude == value.magnitude]
        if len(same) > 1:
            same = [v for v in same if _numbers(v.text) == _numbers(value.text)]
        if len(same) == 1:
            return same[0].text
    return None


def _numbers(text: str) -> list[str]:
    return re.findall(r"\d+", text)
