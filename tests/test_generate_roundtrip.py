"""The retrieval half of the round trip (roundtrip.retrieve): code only, no call."""

from __future__ import annotations

from builder.generate.knowledge import KnowledgeIndex
from builder.generate.roundtrip import retrieve

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
