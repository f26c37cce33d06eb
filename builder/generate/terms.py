"""Lexical building blocks the pipeline's code checks are made of: word terms, numbers, dates.

Everything here is deterministic and language-aware in the simplest useful way: Latin-script
text is split into words; runs of CJK characters are split into overlapping character bigrams
(Chinese has no spaces, and single characters are too common to mean anything).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from builder.text.language import HAN as _CJK

_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)  # "需要5天" -> 需要, 5, 天
_CJK_RUN = re.compile(rf"^[{_CJK}]+$")

# Function words that carry no topic. Data, not prose: extend freely.
STOPWORDS = frozenset(
    """a an the and or but if then than of to in on at by for with from as is are was were be been
    being it its this that these those there here what which who whom whose when where why how do
    does did done has have had can could may might must shall should will would not no nor any all
    each every some such per via into onto over under about after before within without between
    also only just more most less least very much many one you your we our they their he she his
    her them us i me my mine yours ours theirs s t""".split()
) | frozenset("的 了 是 在 和 与 及 或 吗 呢 吧 啊 什么 多少 哪 哪些 如何 怎么 为什么 几".split()
) | frozenset(  # Spanish, Portuguese, French, Italian, German function words that are not
    # also English content words ("sea", "son", "die", "solo", "mit", "come", "dos" are left
    # out): without them a Spanish question shares "de", "la", "que" with any sentence, and a
    # tautology or a question that dropped its subject looks like it kept it.
    """de del la las el los un una unos unas y o u e ni que con sin por para en al lo se su sus
    tu tus mi mis te le les nos es está están ser estar ha han hay como cómo qué cuál cuáles
    cuándo dónde quién quiénes este esta estos estas ese esa esos esas muy más menos ya sí
    también pero entre sobre hasta desde durante cada todo todos toda todas otro otra otros
    otras puede pueden puedes debe deben debes usted ustedes nuestro nuestra tiene tienen
    da das do uma umas os com sem pelo pela em na no nas nos ao aos à às seu sua seus suas
    você é são não também mais muito qual quais quando onde quem isso isto
    des du une et ou avec sans dans sur au aux ce cette ces est sont être avoir il elle
    ils elles vous nous leur leurs qui quoi quel quelle quels quelles où comment aussi très
    il lo gli della delle dei degli nel nella nei con senza per che è sono essere avere anche
    molto quale quali questo questa questi queste
    der das dem den des ein eine einer eines einem einen und oder ohne für von zu im ist
    sind sein haben wird werden nicht auch sehr welche welcher welches wo wie was wer""".split())

_MONTHS = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december".split(), 1)}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MON = (r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
        r"|sep(?:tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
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
