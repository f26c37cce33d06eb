"""The knowledge base as code searches it: BM25 over every chunk, the sentences of a chunk, and
how well each sentence fits a question.

The round trip retrieves with it (a question must find its own chunk in the top `TOP_K`) and
shows the reader the sentences `score_sentences` ranks first; the question writer and the
compositions read the same index (`KnowledgeIndex`, `KbWords`): one view of the knowledge base
for every stage. Deterministic; the sentences of a chunk are cached by its id, text and title.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from builder.text.bm25 import BM25
from builder.text.lexicon import all_stopwords
from builder.text.markdown import plain, section_heading

from builder.generate.statements import extract_statements
from builder.generate.terms import key_terms, stem, tokens

TOP_K = 4
MAX_SENTENCES = 6


def search_terms(text: str) -> list[str]:
    """What retrieval matches on: word tokens (CJK bigrams), function words of every supported
    language left out, lightly stemmed."""
    stops = all_stopwords()
    return [stem(t) for t in tokens(text) if t not in stops]


MIN_SLOT_FILLERS = 3   # other words written in a topic word's place: it has siblings
MIN_ENDING_WORDS = 2   # words of the KB ending like a new word: it is spelt like the KB's language
MIN_VOCABULARY = 500   # distinct words a KB needs before its endings say how its language spells


class KnowledgeIndex:
    """The whole knowledge base as the round trip searches it: chunks, their titles, BM25."""

    def __init__(self, chunks: list[dict], titles: dict[str, str]):
        self.chunks = chunks
        self.titles = titles
        self._bm25 = BM25([f"{titles.get(c['id'], '')}\n{c['text']}" for c in chunks],
                          search_terms)

    def search(self, question: str, k: int = TOP_K) -> list[dict]:
        return [self.chunks[i] for i, _ in self._bm25.top(question, k)]

    @cached_property
    def text(self) -> str:
        """Every chunk's text, casefolded: what "the knowledge base mentions X" searches."""
        return "\n".join(c["text"] for c in self.chunks).casefold()

    @cached_property
    def text_of(self) -> dict[str, str]:
        return {c["id"]: c["text"] for c in self.chunks}

    @cached_property
    def words(self) -> KbWords:
        return KbWords.of(self.chunks)


@dataclass
class KbWords:
    """What the knowledge base says about its words: in how many chunks each occurs, and for
    each word the words written right before and right after it (the slots it fills)."""

    df: dict[str, int]
    n_chunks: int
    before: dict[str, set[str]]
    after: dict[str, set[str]]
    endings: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, chunks: list[dict]) -> "KbWords":
        df: dict[str, int] = {}
        before: dict[str, set[str]] = {}
        after: dict[str, set[str]] = {}
        for c in chunks:
            words = re.findall(r"[^\W\d_]+", c["text"].casefold())
            for w in set(words):
                df[w] = df.get(w, 0) + 1
            for x, y in zip(words, words[1:]):
                before.setdefault(y, set()).add(x)
                after.setdefault(x, set()).add(y)
        endings: dict[str, int] = {}
        for w in df:
            if len(w) >= 5:
                endings[w[-3:]] = endings.get(w[-3:], 0) + 1
        return cls(df, len(chunks), before, after, endings)

    def spelt_like_the_kb(self, word: str) -> bool:
        """`word` (one the knowledge base may never use) ends as words of the knowledge base
        end: it is spelt like the knowledge base's language. A small model asked for a French
        sibling of "maternité" often gives "maternity" or "birth"; endings tell them apart
        without a word list ("paternité", "militaire", "retraite" end like many French words;
        "birth", "cost" like none). A knowledge base of a few hundred words cannot tell."""
        low = word.casefold()
        return len(self.df) < MIN_VOCABULARY or low in self.df \
            or self.endings.get(low[-3:], 0) >= MIN_ENDING_WORDS

    def fills_a_slot(self, word: str, question: str) -> bool:
        """`word` is one of several different words the knowledge base writes in the same place
        next to the question's neighbouring word ("jury" of "jury service leave" beside
        "maternity leave", "sabbatical leave"...): a kind of thing with siblings, whose
        sibling makes a question of the same shape. "home" of "home office" is not."""
        words = re.findall(r"[^\W\d_]+", question.casefold())
        low = word.casefold()
        for i, w in enumerate(words):
            if w != low:
                continue
            for neighbour, fillers in ((words[i + 1] if i + 1 < len(words) else None, self.before),
                                       (words[i - 1] if i > 0 else None, self.after)):
                if neighbour and key_terms(neighbour):
                    others = {f for f in fillers.get(neighbour, set()) - {low} if key_terms(f)}
                    if len(others) >= MIN_SLOT_FILLERS:
                        return True
        return False


@lru_cache(maxsize=4096)
def _sentences(chunk_id: str, text: str, title: str) -> tuple[tuple[str, str], ...]:
    """(sentence, its section) for each statement of a chunk. The section is the heading right
    above the statement when the chunk holds several ("D3 - Developer 3" over its "Scope: ..."),
    else the chunk's own: what tells one section's sentence from another's."""
    rows = extract_statements({"id": chunk_id, "text": text, "document_id": ""})
    parts = title.split(" > ") if title else []
    out = []
    for r in rows:
        heading = section_heading(text, r["evidence_start"] or 0)
        heading = plain(heading).strip() if heading else ""
        own = parts[-1:] + [heading] if heading and heading not in parts else parts[-2:]
        out.append((r["text"], " > ".join(p for p in own if p)))
    return tuple(out)


def score_sentences(question: str, chunks: list[dict], titles: dict[str, str]) -> list[dict]:
    """Every sentence of `chunks` sharing a term with the question, best first: score is the
    idf-weighted (within these chunks) sum of the terms the sentence and its section share with
    the question; ties keep retrieval order. Each {"text" (with its section), "sentence",
    "chunk_id", "score", "own" (the sentence's own terms only)}."""
    want = key_terms(question)
    rows = []
    df: dict[str, int] = {}   # terms shared with the question, counted over sentences with sections
    for c in chunks:
        for sent, short in _sentences(c["id"], c["text"], titles.get(c["id"], "")):
            for t in key_terms(f"{short} {sent}") & want:
                df[t] = df.get(t, 0) + 1
    n = sum(len(_sentences(c["id"], c["text"], titles.get(c["id"], ""))) for c in chunks) or 1
    for rank, c in enumerate(chunks):
        for i, (sent, short) in enumerate(_sentences(c["id"], c["text"], titles.get(c["id"], ""))):
            shared = key_terms(f"{short} {sent}") & want
            # summed in a fixed order: a set's order changes with the process's hash seed, and
            # float sums with it, which would reorder near-equal sentences from run to run
            score = sum(math.log(1 + n / df[t]) for t in sorted(shared))
            own = sum(math.log(1 + n / df[t]) for t in sorted(key_terms(sent) & want))
            if score > 0:
                rows.append((-score, rank, i, sent, short, c["id"], own))
    rows.sort()
    return [{"text": f"{short}: {sent}" if short else sent, "sentence": sent, "chunk_id": cid,
             "score": -neg, "own": own} for neg, _, _, sent, short, cid, own in rows]


def pick_sentences(question: str, chunks: list[dict], titles: dict[str, str],
                   limit: int = MAX_SENTENCES) -> list[dict]:
    """The `limit` sentences of `chunks` most like the question (`score_sentences`)."""
    return score_sentences(question, chunks, titles)[:limit]
