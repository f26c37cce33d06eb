"""Lexical building blocks the pipeline's code checks are made of: word terms and numbers
(dates: `builder.text.values.stated_dates`).

Everything here is deterministic and language-aware in the simplest useful way: Latin-script
text is split into words; runs of CJK characters are split into overlapping character bigrams
(Chinese has no spaces, and single characters are too common to mean anything).
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation

from builder.text.language import HAN as _CJK
from builder.text.lexicon import unambiguous_stopwords

_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)  # "需要5天" -> 需要, 5, 天
_CJK_RUN = re.compile(rf"^[{_CJK}]+$")

# Function words that carry no topic, of every supported language: the text's language is not
# known here (a question meets a passage). Without the other languages', a Spanish question
# shares "de", "la", "que" with any sentence, and a tautology or a question that dropped its
# subject looks like it kept it. Not the lexicon's `homographs` ("son", "die", "come", "dos"):
# they are content words in another language, and an English text would lose its subject.
STOPWORDS = unambiguous_stopwords()

# Not inside a Latin word or a decimal ("v2", "1.5" -> one number), but after CJK ("需要5天").
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?")


def tokens(text: str) -> list[str]:
    """Lowercased word tokens; CJK runs become character bigrams (a lone character stays).
    Text is read composed (NFC): a file written with decomposed accents ("e" + U+0301, as
    some editors save) would otherwise split "supérieur" at its accent into "sup", "rieur",
    and no question typed the usual way would share the word."""
    out: list[str] = []
    for tok in _TOKEN.findall(unicodedata.normalize("NFC", text).lower()):
        if _CJK_RUN.match(tok):
            if len(tok) == 1:
                out.append(tok)
            else:
                out.extend(tok[i:i + 2] for i in range(len(tok) - 1))
        else:
            out.append(tok)
    return out


def stem(term: str) -> str:
    """A crude English suffix strip so "joined"/"joins"/"joining" meet "join"."""
    if not term.isascii() or term.isdigit():
        return term
    for suffix in ("ing", "ed", "es", "s"):
        if len(term) > len(suffix) + 2 and term.endswith(suffix):
            return term[: -len(suffix)]
    return term


def key_terms(text: str) -> set[str]:
    """Content terms: tokens minus stopwords, lightly stemmed. One-letter names ("Plan B")
    are kept: they often tell two entities apart."""
    return {stem(t) for t in tokens(text) if t not in STOPWORDS}


def jaccard(a: set, b: set) -> float:
    """Shared members over all members: how alike two sets of terms (or shingles) are; 0 for two
    empty sets."""
    return len(a & b) / len(a | b) if a or b else 0.0


def names_something(label: str) -> bool:
    """Whether a label (a table row's name, the words two parallel statements differ by) holds
    a content term a user could type: "Plan B", "Level 2", "D1" do; "E", "1.", "to" do not (a
    list's numbering, a lone letter, a function word tell nothing apart in a question)."""
    return any(len(t) >= 2 for t in key_terms(label))


def _canon_number(whole: str, frac: str | None) -> str:
    raw = whole.replace(",", "") + (f".{frac}" if frac else "")
    try:
        value = Decimal(raw).normalize()
    except InvalidOperation:
        return raw
    text = format(value, "f")
    return text


def numbers(text: str) -> set[str]:
    """Numbers stated in the text, canonical ("1,000" -> "1000", "45.0" -> "45")."""
    return {_canon_number(m.group(1), m.group(2)) for m in _NUMBER.finditer(text)}
