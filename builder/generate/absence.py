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

from builder.store.search import absent_terms, search_chunks

from builder.generate.terms import STOPWORDS, holds_all_terms, tokens

TOP_K = 5  # chunks of the whole KB the code check reads


def chunk_answering(store, question: str) -> dict | None:
    """The first of the top-`TOP_K` chunks of the whole knowledge base that holds every content
    term of `question` (title included), or None when no chunk does."""
    for hit in search_chunks(store, question, k=TOP_K):
        if holds_all_terms(question, hit["text"] + " " + (hit.get("title") or "")):
            return hit
    return None


MIN_KNOWN_WORDS = 1      # an in-domain question uses at least this many of the KB's words ...
MIN_KNOWN_SHARE = 1 / 3  # ... and they are at least a third of its content words


def content_words(text: str) -> list[str]:
    """The question's words that carry content (no stopwords, no bare numbers), in order."""
    return [t for t in dict.fromkeys(tokens(text)) if t not in STOPWORDS and not t.isdigit()]


def off_domain(store, question: str) -> str | None:
    """Why an unanswerable question is not one a user of THIS knowledge base would ask, or None.

    A defensive item tests that the RAG system refuses what its documents do not cover; "Are you
    a vegetarian?" for an HR handbook tests nothing (seen in earlier runs). So the question must
    use the knowledge base's own vocabulary: at least MIN_KNOWN_WORDS of its content words occur
    in the KB, and they are at least MIN_KNOWN_SHARE of them (an invented sibling -- "What are
    the opening hours of the Tacoma store?" -- names one new thing among known words)."""
    words = content_words(question)
    if not words:
        return "no content words"
    missing = set(absent_terms(store, words))
    known = [w for w in words if w not in missing]
    if len(known) < MIN_KNOWN_WORDS or len(known) / len(words) < MIN_KNOWN_SHARE:
        return (f"off the knowledge base's topics: only {len(known)} of its {len(words)} content "
                "words occur in it")
    return None
