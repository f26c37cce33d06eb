"""Rival sentences: sentences that fit a question (or a statement) as well as the answer's own
and state another answer of its kind.

The round trip rejects a question that has one (`rival`, by code, before any reader call); the
question writer is told the words that tell a statement from its rivals (`telling_words`), so
that the question it writes has none. Both read the knowledge base through knowledge.py.
"""

from __future__ import annotations

import re

from builder.text.values import find_values, magnitudes

from builder.generate.knowledge import TOP_K, KnowledgeIndex, score_sentences
from builder.generate.terms import key_terms


def _holds(sentence: str, reference: str, language: str) -> bool:
    ref_nums = magnitudes(reference, language)
    if ref_nums:
        return ref_nums <= magnitudes(sentence, language)
    return reference.casefold() in sentence.casefold()


def rival(question: str, reference: str, language: str, scored: list[dict]) -> dict | None:
    """A sentence that fits the question at least as well as the best one stating the answer
    -- with its section and by its own words -- and states another answer of the same shape
    (another value of the answer's kind; for a name, any other sentence): the question does
    not tell them apart. Decided by code, before any reader call. None when the answer's
    sentence is not among them (nothing to compare)."""
    source = next((r for r in scored if _holds(r["sentence"], reference, language)), None)
    if source is None:
        return None
    kinds = {v.kind for v in find_values(reference, language)}
    for r in scored:
        if r["score"] < source["score"]:
            return None
        if r is source or _holds(r["sentence"], reference, language):
            continue
        if r["own"] < source["own"]:
            continue
        if not kinds or any(v.kind in kinds for v in find_values(r["sentence"], language)):
            return r
    return None


def statement_rival(statement: str, title: str, answer: str, language: str,
                    kb: KnowledgeIndex) -> dict | None:
    """A rival sentence (`rival`) for the statement itself and its title, the answer left out:
    what the question writer is shown already fits another sentence as well, so no question
    written from it can tell the two apart (it says less than its statement). None when the
    statement tells itself from every other sentence."""
    query = f"{title} {statement.replace(answer, ' ')}"
    return rival(query, answer, language, score_sentences(query, kb.search(query, TOP_K),
                                                          kb.titles))


RIVAL_SHARE = 0.5   # a sentence this close to the statement (of its score) can take its question
MAX_TELLING = 1


def telling_words(statement: str, answer: str, language: str, kb: KnowledgeIndex) -> list[str]:
    """Words of the statement that no close rival sentence (or its section) has: what a
    question must say so that `rival` finds none. The rivals are the sentences most like the
    statement itself that state another answer of its kind ("50 weeks of SPL" beside "37 weeks
    of ShPP" -> "SPL"); the rarest telling word in the knowledge base first. Empty when the
    statement has no rival, or nothing but function words tells them apart."""
    query = statement.replace(answer, " ")
    scored = score_sentences(query, kb.search(query, TOP_K), kb.titles)
    source = next((r for r in scored if r["sentence"] == statement), None)
    if source is None:
        return []
    kinds = {v.kind for v in find_values(answer, language)}
    rivals = [r for r in scored if r["score"] >= RIVAL_SHARE * source["score"]
              and not _holds(r["sentence"], answer, language)
              and (not kinds or any(v.kind in kinds for v in find_values(r["sentence"], language)))]
    if not rivals:
        return []
    theirs = set().union(*(key_terms(r["text"]) for r in rivals[:2]))
    telling = key_terms(source["text"]) - key_terms(answer) - theirs
    df = kb.words.df
    out: list[str] = []
    # the statement's own words (a section's words may be a link slug); one hyphen at most
    for word in sorted(set(re.findall(r"(?<![\w-])[^\W\d_]\w+(?:-\w+)?(?![\w-])", statement)),
                       key=lambda w: (df.get(w.casefold(), 0), w)):
        if key_terms(word) and key_terms(word) <= telling and word.casefold() not in {
                o.casefold() for o in out}:
            out.append(word)
        if len(out) >= MAX_TELLING:
            break
    return out
