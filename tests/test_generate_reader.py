"""The round trip's code checks before any reader call: a question that fits another sentence,
stating another answer of the same kind, as well as its own does not tell them apart."""

from __future__ import annotations

from builder.generate.knowledge import KnowledgeIndex, score_sentences
from builder.generate.rivals import rival, statement_rival, telling_words

from tests.fakes import scripted_reader

PLANS = {"id": "p", "document_id": "plans.md", "language": "en", "seq": 0,
         "text": "# Sync plans\n\n## Standard\n\nFiles of up to 5 MB each are synced to every device.\n\n"
                 "## Plus\n\nFiles of up to 200 MB each are synced to every device.\n"}
OTHER = {"id": "o", "document_id": "other.md", "language": "en", "seq": 0,
         "text": "Support answers questions by email within two working days of receiving them."}


def check(question: str, answer: str):
    kb = KnowledgeIndex([PLANS, OTHER], {"p": "Sync plans", "o": "Support"})
    return rival(question, answer, "en", score_sentences(question, kb.search(question), kb.titles))


def test_a_question_that_drops_what_tells_two_values_apart_has_a_rival():
    found = check("What is the maximum size of a synced file?", "5 MB")
    assert found is not None and "200 MB" in found["sentence"]


def test_naming_the_subject_its_section_states_removes_the_rival():
    # one chunk, two sections: the heading right above a sentence is what names its subject
    assert check("Up to what size are files synced on the Standard plan?", "5 MB") is None
    assert check("What is the largest file synced on the Plus plan?", "200 MB") is None


def test_a_sentence_with_no_value_of_the_answers_kind_is_no_rival():
    assert check("Within how long does support answer questions by email?", "two working days") is None


def test_a_statement_whose_title_does_not_tell_it_from_another_has_a_rival_before_any_question():
    fee = "A restocking fee of 5% applies to opened items."
    pages = [{"id": "a", "document_id": "returns-old.md", "language": "en", "seq": 0,
              "text": "A restocking fee of 10% applies to opened items."},
             {"id": "b", "document_id": "returns.md", "language": "en", "seq": 0, "text": fee},
             OTHER]
    same = KnowledgeIndex(pages, {"a": "Returns", "b": "Returns", "o": "Support"})
    found = statement_rival(fee, "Returns", "5%", "en", same)
    assert found is not None and "10%" in found["sentence"]
    # a title that tells the pages apart gives the question writer a word to name
    told = KnowledgeIndex(pages, {"a": "Returns", "b": "Returns for members", "o": "Support"})
    assert statement_rival(fee, "Returns for members", "5%", "en", told) is None
    # nothing else states a value of its kind
    alone = "Support answers questions by email within two working days of receiving them."
    assert statement_rival(alone, "Support", "two working days", "en", same) is None


def test_a_statement_with_a_close_rival_must_be_asked_with_the_word_that_tells_them_apart():
    leave = {"id": "l", "document_id": "leave.md", "language": "en", "seq": 0,
             "text": "Eligible parents can take up to 50 weeks of SPL after the birth of a child.\n\n"
                     "Eligible parents can take up to 37 weeks of ShPP after the birth of a child.\n"}
    kb = KnowledgeIndex([leave, OTHER], {"l": "Parental leave", "o": "Support"})
    first = "Eligible parents can take up to 50 weeks of SPL after the birth of a child."
    assert telling_words(first, "50 weeks", "en", kb) == ["SPL"]
    # nothing close states another duration: no word is forced on the question
    alone = "Support answers questions by email within two working days of receiving them."
    assert telling_words(alone, "two working days", "en", kb) == []


def test_a_value_the_reader_restates_in_english_is_grounded_by_its_value_in_the_named_sentence():
    import asyncio
    from builder.generate.reader import ask

    sentences = [{"text": "Support: réponse sous deux jours.",
                  "sentence": "Le support répond sous deux jours ouvrés."},
                 {"text": "Factures: payées sous 30 jours.",
                  "sentence": "Les factures sont payées sous 30 jours après réception."}]

    got = asyncio.run(ask(scripted_reader("30 days", 2),
                          "Sous quel délai les factures sont-elles payées ?",
                          sentences, "fr"))
    assert (got.answer, got.grounded) == ("30 jours", True)
    # a value the named sentence does not hold, or a whole phrase, stays ungrounded
    assert not asyncio.run(ask(scripted_reader("45 days", 2), "?", sentences, "fr")).grounded
    assert not asyncio.run(ask(scripted_reader("30 days for all invoices sent by mail", 2), "?",
                               sentences, "fr")).grounded
    # not named: the one sentence shown that holds the value; two that hold it: none
    got = asyncio.run(ask(scripted_reader("30 days", 0), "?", sentences, "fr"))
    assert (got.answer, got.sentence) == ("30 jours", sentences[1]["sentence"])
    twice = sentences + [{"text": "x", "sentence": "Les avoirs sont remboursés sous 30 jours."}]
    assert not asyncio.run(ask(scripted_reader("30 days", 0), "?", twice, "fr")).grounded
    third = asyncio.run(ask(scripted_reader("30 days", 3), "?", twice, "fr"))
    assert third.sentence == twice[2]["sentence"]


def test_months_and_a_magnitude_stated_twice_are_restated_values_too():
    """"6 months" is a count of months read as French and a duration read as English: each
    reading is tried on its own. "112 jours ... soit 16 semaines" states one magnitude twice:
    the words with the answer's number are the ones it restates."""
    import asyncio
    from builder.generate.reader import ask

    leave = ("Vous avez droit au même congé que les salariés : 112 jours, répartis en 6 semaines "
             "de congé prénatal et 10 semaines de postnatal, soit 16 semaines.")
    sentences = [{"text": "Comité: revoir la Startup 6 mois après son lancement.",
                  "sentence": "Le sponsor revoit la Startup 6 mois après son lancement."},
                 {"text": f"Maternité: {leave}", "sentence": leave}]

    def read(answer: str, named: int):
        got = asyncio.run(ask(scripted_reader(answer, named), "?", sentences, "fr"))
        return got.answer if got.grounded else None

    assert read("6 months", 1) == "6 mois"
    assert read("112 days", 2) == "112 jours"
    assert read("16 weeks", 2) == "16 semaines"
    assert read("8 months", 1) is None          # a magnitude the sentence does not state
    assert read("20 weeks", 2) is None
