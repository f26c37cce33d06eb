"""The retrieval half of the round trip (roundtrip.retrieve): code only, no call."""

from __future__ import annotations

from builder.generate.knowledge import KnowledgeIndex
from builder.generate.roundtrip import retrieve

from tests.fakes import scripted_reader

LEAVE = ("Employees may carry over up to five days of annual leave into the next year. "
         "Requests to carry over leave go to the line manager before December.")
PARENTAL = ("Parental leave lasts up to eighteen weeks for each child. Employees ask for "
            "parental leave at least four weeks before it starts.")
TRAINING = ("Each employee has a training budget of 1,000 euros a year. Training days do not "
            "count as annual leave.")


def _kb(*texts: str) -> KnowledgeIndex:
    chunks = [{"id": f"c{i}", "document_id": f"d{i}", "text": t} for i, t in enumerate(texts)]
    return KnowledgeIndex(chunks, {c["id"]: "" for c in chunks})


def test_a_question_that_finds_another_passage_first_fails_without_a_call():
    kb = _kb(LEAVE, PARENTAL, TRAINING)
    found = retrieve("How many days of annual leave can employees carry over into the next year?",
                     "five days", "c0", "en", kb)
    assert found.problem is None and found.rank == 1 and found.sentences
    # written from the leave chunk, but it reads as a question about parental leave: a user's
    # retriever brings the parental chunk first, and the item tests nothing of the leave chunk
    vague = retrieve("How long before parental leave must employees ask?", "December", "c0",
                     "en", kb)
    assert vague.problem is not None and vague.problem.startswith(
        "retrieval: the question finds another passage first (its own comes 2nd)")
    assert vague.rank == 2 and vague.sentences == []


def test_a_copy_of_the_passage_ranked_first_does_not_count_against_it():
    # the same policy kept in an older page: it states the answer too, so ranking it first is
    # no sign the question points elsewhere
    old = LEAVE + " Carry over to the next year needs no form. Annual leave carry over."
    kb = _kb(old, LEAVE, TRAINING)
    question = "How many days of annual leave can employees carry over into the next year?"
    assert kb.search(question)[0]["id"] == "c0"
    found = retrieve(question, "five days", "c1", "en", kb)
    assert found.problem is None and found.rank == 2


def test_a_reader_answer_of_more_than_the_reference_fails_the_round_trip():
    """Code chose "deflate"; the question asks which encodings, and the reader, shown the
    sentence, answers "gzip and deflate": the question asks for more than its answer. Words
    the question says, and values written another way, are no more."""
    import asyncio

    from builder.generate.roundtrip import round_trip

    text = ("Responses compressed with gzip and deflate are decoded automatically. "
            "Requests time out after five seconds of network inactivity.")
    kb = _kb(text, LEAVE, TRAINING)

    def read(question: str, reference: str, answer: str):
        return asyncio.run(round_trip(scripted_reader(answer), question, reference, "c0", "en", kb))

    more = read("Which response encodings are decoded automatically?", "deflate", "gzip and deflate")
    assert more.problem == ("the reader answered 'gzip and deflate', more than the reference "
                            "(gzip): the question asks for more than its answer")
    assert read("Which response encodings are decoded automatically?", "gzip and deflate",
                "gzip and deflate").problem is None
    # "five seconds" is the reference's value; "network inactivity" is the question's words
    assert read("After how long of network inactivity do requests time out?", "5 seconds",
                "five seconds of network inactivity").problem is None


def test_says_more_reads_values_the_question_and_scripts_without_spaces():
    from builder.generate.reader import says_more

    assert says_more("600 euros", "600 euros HT", "Combien coûte une journée ?", "fr") == (
        "the reader answered '600 euros HT', more than the reference (ht): the question asks "
        "for more than its answer")
    assert says_more("600 euros", "600 euros HT", "Combien coûte une journée HT ?", "fr") is None
    # the currency's code after its symbol is the value's own unit, no more than it
    assert says_more("$1,000", "$1,000 USD", "What may be spent on gifts?", "en") is None
    assert says_more("3 semaines", "de quelques jours à 3 semaines",
                     "Combien de temps prend un bon de commande ?", "fr") is not None
    assert says_more("York", "New York", "Where is the company based?", "en") is not None
    assert says_more("12 months", "12 months service",
                     "How long must staff be in service?", "en") is None
    # a script written without spaces: each character the reference's or the question's
    assert says_more("30天", "30天内", "发票在多少天内支付？", "zh") is None
    assert says_more("30天", "30天以后", "发票在多少天支付？", "zh") is not None
