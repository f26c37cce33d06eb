"""The whole-KB absence check: does any chunk of the knowledge base answer a question?

An unanswerable candidate is only worth keeping when the KB really does not hold its answer.
The code test here runs twice, with the same rule both times: when `unanswerable.py` screens a
proposed question, and when `verify.py` verifies the candidate (`kb_does_not_answer`; the
verifier's LLM absence check then reads the best few of the same hits).

The rule: search the WHOLE knowledge base with FTS5/BM25 (top `TOP_K`) and call the question
answered when one hit holds every content term of the question (`terms.holds_all_terms`, with
a numbered name such as "Trailhead 4" counting as one phrase). Lexical and deterministic: a
synonym of a covered topic passes it, which is why the LLM check and the reviewer follow.
"""

from __future__ import annotations

from builder.store.search import search_chunks

from builder.generate.terms import holds_all_terms

TOP_K = 5  # chunks of the whole KB the code check reads


def chunk_answering(store, question: str) -> dict | None:
    """The first of the top-`TOP_K` chunks of the whole knowledge base that holds every content
    term of `question` (title included), or None when no chunk does."""
    for hit in search_chunks(store, question, k=TOP_K):
        if holds_all_terms(question, hit["text"] + " " + (hit.get("title") or "")):
            return hit
    return None
