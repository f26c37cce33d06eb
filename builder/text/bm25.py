"""Okapi BM25 over a fixed set of texts, in memory, in any language.

The generator's round trip retrieves with the question alone over the whole knowledge base. It
needs retrieval that works the same in every language golden supports: SQLite's FTS5 tokenizer
reads a run of Chinese or Japanese characters as one token, so a Chinese question never matches
its chunk there. `tokens` (words for spaced scripts, character bigrams for CJK runs) does, and a
knowledge base of a few thousand chunks indexes in well under a second.

Scores are the standard BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)));
ties are broken by the order the texts were given, so results are deterministic.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

K1 = 1.2
B = 0.75


class BM25:
    def __init__(self, texts: Sequence[str], tokenize: Callable[[str], list[str]]):
        self._tokenize = tokenize
        self._docs = [Counter(tokenize(t)) for t in texts]
        self._len = [sum(d.values()) for d in self._docs]
        self._avg = (sum(self._len) / len(self._len)) if self._len else 0.0
        df: Counter = Counter()
        for d in self._docs:
            df.update(d.keys())
        n = len(self._docs)
        self._idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self._postings: dict[str, list[int]] = {}
        for i, d in enumerate(self._docs):
            for t in d:
                self._postings.setdefault(t, []).append(i)

    def top(self, query: str, k: int) -> list[tuple[int, float]]:
        """The `k` best (index, score) pairs for `query`, best first; only texts sharing a term."""
        scores: dict[int, float] = {}
        for t in sorted(set(self._tokenize(query))):  # a fixed order: float sums must not vary with the hash seed
            idf = self._idf.get(t)
            if idf is None:
                continue
            for i in self._postings[t]:
                tf = self._docs[i][t]
                norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * self._len[i] / (self._avg or 1)))
                scores[i] = scores.get(i, 0.0) + idf * norm
        return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
