"""Lexical building blocks the pipeline's code checks are made of: word terms, numbers, dates.

Everything here is deterministic and language-aware in the simplest useful way: Latin-script
text is split into words; runs of CJK characters are split into overlapping character bigrams
(Chinese has no spaces, and single characters are too common to mean anything).
"""

from __future__ import annotations

import os
import re
from decimal import Decimal, InvalidOperation
from itertools import combinations

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


NEAR_PREFIX = 5   # two terms sharing their first five letters are forms of one word,
NEAR_WHOLE = 4    # as is a term of four letters or more that starts the other


def near(term: str, terms: set[str]) -> bool:
    """`term` is in `terms`, or is a form of one of them by a shared start: "clos"/"close",
    "enroll"/"enrollment", "esperar"/"espera", "plan"/"planificación" -- forms the crude `stem`
    leaves apart. "three" is not "threshold", nor "bocal" "bóveda"."""
    if term in terms:
        return True
    for other in terms:
        n = len(os.path.commonprefix((term, other)))
        if n >= NEAR_PREFIX or n >= NEAR_WHOLE and n == min(len(term), len(other)):
            return True
    return False


def jaccard(a: set, b: set) -> float:
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


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


# Small numbers as words, in the languages the stopwords above cover. Articles that also mean
# one ("a" is not here, "una", "un", "ein" are) count as one. Left out: words that are also
# common other words in another of these languages ("once", "due", "sei", "sept", "cent",
# "dez", "elf").
_SPELLED = {w: str(n) for n, words in enumerate((
    "zero cero", "one uno una um uma un une eins ein eine",
    "two dos dois duas deux zwei", "three tres três trois drei tre",
    "four cuatro quatro quatre vier quattro", "five cinco cinq fünf cinque",
    "six seis sechs", "seven siete sete sieben sette", "eight ocho oito huit acht otto",
    "nine nueve nove neuf neun", "ten diez dix zehn dieci",
    "eleven onze undici", "twelve doce doze douze zwölf dodici")) for w in words.split()}
_SPELLED.update({w: str(n) for n, words in (
    (15, "fifteen quince quinze fünfzehn quindici"), (20, "twenty veinte vinte vingt zwanzig venti"),
    (30, "thirty treinta trinta trente dreißig trenta"), (100, "hundred cien cem hundert cento"))
    for w in words.split()})


def spelled_numbers(text: str) -> set[str]:
    """Small numbers the text writes as words ("five seconds" -> {"5"}), canonical like
    `numbers`. Only for reading an answer that may spell out what its reference writes in
    digits: words such as "one" are too common to count as stated numbers anywhere else."""
    return {_SPELLED[w] for w in re.findall(r"[^\W\d_]+", text.lower()) if w in _SPELLED}


def arithmetic_closure(nums: set[str]) -> set[str]:
    """`nums` plus every sum, difference, product and ratio of two of them (rounded), so an
    answer that computes from evidence numbers still counts as grounded."""
    values = []
    for n in nums:
        try:
            values.append(Decimal(n))
        except InvalidOperation:
            pass
    out = set(nums)

    def add(v: Decimal) -> None:
        for places in ("1", "0.1", "0.01"):
            try:
                out.add(format(v.quantize(Decimal(places)).normalize(), "f"))
            except InvalidOperation:  # more digits than Decimal holds: two 18-digit ids' product
                return

    for a, b in combinations(values, 2):
        add(a + b)
        add(abs(a - b))
        add(a * b)
        if b:
            add(a / b)
            add(a / b * 100)
        if a:
            add(b / a)
            add(b / a * 100)
    return out


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


def date_order_key(value: str) -> tuple:
    """Sort key for `dates()` output; versions sort after dates of the same kind."""
    try:
        if value.startswith("v"):
            return (1, tuple(int(p) for p in value[1:].split(".")))
        return (0, tuple(int(p) for p in value.split("-")))
    except ValueError:  # not from dates(): sorts first, never crashes a run
        return (-1, ())


_NUMBERED_NAME = re.compile(r"\b([A-Za-z][\w-]*)\s+(\d{1,4})\b")


def holds_all_terms(question: str, text: str) -> bool:
    """True when `text` contains every content term of `question` -- with a numbered name
    ("Trailhead 4") counting as one term, found only as that phrase: a table listing
    "Trailhead 2 | 4 seasons" holds the words "trailhead" and "4" but says nothing about a
    Trailhead 4."""
    need = key_terms(question)
    if not need or not need <= key_terms(text):
        return False
    flat = " ".join(tokens(text))
    return all(f"{w.lower()} {n}" in flat for w, n in _NUMBERED_NAME.findall(question)
               if w.lower() not in STOPWORDS)


def contains_term(text_terms: set[str], phrase: str) -> bool:
    """True when every key term of `phrase` is among `text_terms`."""
    terms = key_terms(phrase)
    return bool(terms) and terms <= text_terms


def without_dates(text: str) -> str:
    """`text` with its dates, years and version numbers blanked out, so the numbers left are
    values (prices, durations, counts)."""
    for pattern, _ in _DATE_PATTERNS:
        text = pattern.sub(" ", text)
    text = _VERSION.sub(" ", text)
    return _YEAR.sub(" ", text)


_VALUE_UNIT = re.compile(
    rf"([$€£¥])?\s?(\d[\d,]*(?:\.\d+)?)\s?(%|[A-Za-z]+|[{_CJK}])?", re.UNICODE)


def values_by_unit(text: str) -> dict[str, set[str]]:
    """The numbers in `text` by the unit they carry: a currency sign, '%', or the (stemmed) word
    or CJK character right after the number ("5 MB ... 200 MB" -> {"mb": {"5", "200"}})."""
    found: dict[str, set[str]] = {}
    for m in _VALUE_UNIT.finditer(without_dates(text)):
        unit = m.group(1)
        if not unit and m.group(3) and (word := m.group(3).lower()) not in STOPWORDS:
            unit = stem(word) if word.isascii() else word
        if unit:
            found.setdefault(unit, set()).add(m.group(2))
    return found


def value_units(text: str) -> set[str]:
    """Units that numbers in `text` carry ("5 days" -> "day", "$12" -> "$")."""
    return set(values_by_unit(text))


def word_before_value(text: str) -> str | None:
    """A cheap guess at the attribute the first value in `text` belongs to: the content word
    after a percentage or price ("10% discount" -> "discount"), else the content word before
    the value ("weighs 2 kg" -> "weighs", "costs $49 per year" -> "costs")."""
    plain = without_dates(text)
    m = _NUMBER.search(plain)
    if not m:
        return None
    rest = plain[m.end():]
    if rest.startswith("%") or plain[max(0, m.start() - 1):m.start()] in "$€£¥" and m.start() > 0:
        after = _TOKEN.findall(rest.lower())
        if after and after[0] not in STOPWORDS:
            word = after[0]
            return word[:2] if _CJK_RUN.match(word) and len(word) > 2 else word
    before = [t for t in _TOKEN.findall(plain[: m.start()].lower()) if t not in STOPWORDS]
    if not before:
        return None
    word = before[-1]
    return word[-2:] if _CJK_RUN.match(word) and len(word) > 2 else word


_VALUE_PHRASES = [
    *(p for p, _ in _DATE_PATTERNS),
    re.compile(r"(?:[A-Z]{2,3})?[$€£¥]\s?\d[\d,]*(?:\.\d+)?"),                # $6.95, CA$75
    re.compile(r"\d+(?:\.\d+)?\s?%"),                                         # 10%
    re.compile(r"\b\d{1,2}:\d{2}\s?(?:a\.m\.|p\.m\.|am|pm|noon|midnight)?", re.I),  # 3:00 p.m.
    re.compile(r"\b\d[\d-]{6,}\d\b"),                                         # 1-800-555-0147
    # a number glued to a URL or name (":8030", "v2.1") is not a value, and a comma belongs to
    # it only as a thousands separator ("8030, pass" came out of "localhost:8030, pass ...")
    re.compile(r"(?<![:/.\w])\d+(?:,\d{3})*(?:\.\d+)?(?:\s*(?:to|-|–)\s*\d+(?:,\d{3})*(?:\.\d+)?)?"
               r"(?:\s+(?:business|calendar|working))?\s+[A-Za-z]+"),      # 45 days, 1 to 2 days
    re.compile(r"\d+(?:\.\d+)?\s?(?:个工作日|工作日|小时|天|周|个月|月|年|美元|加元|元|磅|公斤)"),  # 5天
]


def answer_target(fact: dict) -> str | None:
    """The value a single-hop question about `fact` (a facts row) should ask for, chosen by
    code: the value of a table cell fact (its `cell` record: "Gold — Annual fee: $60" -> "$60"),
    else the first value phrase of its text (a date, price, percentage, time, phone number or
    number with its unit). None when the fact states no value; then the question writer picks
    the answer."""
    cell = fact.get("cell")
    if cell and len(cell["value"]) <= 80:
        return cell["value"].strip()
    fact = fact["text"]
    best: tuple[int, int] | None = None
    for pattern in _VALUE_PHRASES:
        for hit in pattern.finditer(fact):
            if key_terms(hit.group(0)) <= STOPWORDS and not numbers(hit.group(0)):
                continue
            unit = hit.group(0).split()[-1].lower()
            if pattern is _VALUE_PHRASES[-2] and unit in STOPWORDS:
                continue  # "5 and", "2 of"
            span = (hit.start(), -(hit.end() - hit.start()))
            if best is None or span < best:
                best = span
                best_text = hit.group(0)
            break
    return best_text.strip() if best is not None else None
