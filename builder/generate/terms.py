"""Lexical building blocks the pipeline's code checks are made of: word terms, numbers, dates.

Everything here is deterministic and language-aware in the simplest useful way: Latin-script
text is split into words; runs of CJK characters are split into overlapping character bigrams
(Chinese has no spaces, and single characters are too common to mean anything).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from builder.text.language import HAN as _CJK
from builder.text.lexicon import lexicon, unambiguous_stopwords

_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)  # "需要5天" -> 需要, 5, 天
_CJK_RUN = re.compile(rf"^[{_CJK}]+$")

# Function words that carry no topic, of every supported language: the text's language is not
# known here (a question meets a passage). Without the other languages', a Spanish question
# shares "de", "la", "que" with any sentence, and a tautology or a question that dropped its
# subject looks like it kept it. Not the lexicon's `homographs` ("son", "die", "come", "dos"):
# they are content words in another language, and an English text would lose its subject.
STOPWORDS = unambiguous_stopwords()

# English month names and abbreviations (the lexicon's), read by their first three letters.
_MONTHS = lexicon("en").months
_MON = "(" + "|".join(sorted(map(re.escape, _MONTHS), key=len, reverse=True)) + ")"
_DATE_PATTERNS = [
    (re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b"), ("y", "m", "d")),
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*日)?"), ("y", "m", "d")),
    (re.compile(rf"\b{_MON}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I), ("mon", "d", "y")),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MON}\.?,?\s+(\d{{4}})\b", re.I), ("d", "mon", "y")),
    (re.compile(rf"\b{_MON}\.?\s+(\d{{4}})\b", re.I), ("mon", "y")),
]
_YEAR = re.compile(r"(?<![\d.])((?:19|20)\d{2})(?![\d.])")
_VERSION = re.compile(r"\b(?:version|ver\.?|v)\s*(\d+(?:\.\d+){1,3})\b", re.I)
# Not inside a Latin word or a decimal ("v2", "1.5" -> one number), but after CJK ("需要5天").
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?")


def tokens(text: str) -> list[str]:
    """Lowercased word tokens; CJK runs become character bigrams (a lone character stays)."""
    out: list[str] = []
    for tok in _TOKEN.findall(text.lower()):
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


def dates(text: str) -> list[str]:
    """Dates and versions stated, normalised: 'YYYY-MM-DD', 'YYYY-MM', 'YYYY' or 'v1.2'.

    Order of first appearance, no repeats. Bare years count only when no fuller date
    contains them."""
    found: list[tuple[int, str]] = []
    covered: list[tuple[int, int]] = []
    for pattern, parts in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            if any(s <= m.start() < e for s, e in covered):
                continue
            g = dict(zip(parts, m.groups()))
            month = int(g["m"]) if g.get("m") else _MONTHS.get((g.get("mon") or "").lower()[:3], 0)
            if not 1 <= month <= 12:
                continue
            value = f"{int(g['y']):04d}-{month:02d}"
            if g.get("d"):
                value += f"-{int(g['d']):02d}"
            found.append((m.start(), value))
            covered.append((m.start(), m.end()))
    for m in _YEAR.finditer(text):
        if not any(s <= m.start() < e for s, e in covered):
            found.append((m.start(), m.group(1)))
    for m in _VERSION.finditer(text):
        found.append((m.start(), "v" + m.group(1)))
    seen: list[str] = []
    for _, value in sorted(found):
        if value not in seen:
            seen.append(value)
    return seen
