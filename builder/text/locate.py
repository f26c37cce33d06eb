"""Finding a quoted span inside a chunk: exact first, then tolerant of whitespace, punctuation
and case.

Small models re-type quotes: they collapse line breaks, drop a comma, change curly quotes or
capitalise the first word. `locate_span` maps both texts to a normal form (casefolded letters
and digits only) while remembering where each kept character came from, so a match in the
normal form gives offsets into the ORIGINAL chunk text. A quote that does not occur even in the
normal form is treated as fabricated (None).
"""

from __future__ import annotations

import unicodedata


def _normal_chars(text: str) -> tuple[str, list[int]]:
    """Letters and digits of `text`, casefolded and NFKC-normalised, with their source offsets."""
    chars: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        norm = unicodedata.normalize("NFKC", ch).casefold()
        for c in norm:
            if c.isalnum():
                chars.append(c)
                where.append(i)
    return "".join(chars), where


def locate_span(chunk: str, quote: str, *, min_chars: int = 4) -> tuple[int, int] | None:
    """(start, end) offsets of `quote` in `chunk`, or None when it is not there.

    Exact match wins; otherwise the first match in the normal form. Quotes with fewer than
    `min_chars` letters/digits are refused (too short to prove anything)."""
    quote = quote.strip()
    if not quote:
        return None
    at = chunk.find(quote)
    if at >= 0 and len(quote) >= min_chars:
        return at, at + len(quote)
    norm_q, _ = _normal_chars(quote)
    if len(norm_q) < min_chars:
        return None
    norm_c, where = _normal_chars(chunk)
    at = norm_c.find(norm_q)
    if at < 0:
        return None
    return where[at], where[at + len(norm_q) - 1] + 1
