"""Values in text: amounts, percentages, durations, dates, years, quantities, counts.

Generation asks about values because code can find them, compare them and compute with them in
any language: an answer span chosen by code ("12 weeks"), a round trip compared by code ("twelve
weeks" states 12 weeks), and harder items whose answers are computed (the larger of two amounts,
the difference of two durations). The language-specific words (number words, month names,
duration units, "percent") come from `builder.text.lexicon`; symbols and digits are shared.

`find_values(text, lang)` returns non-overlapping `Value`s in text order. Magnitudes are floats
in a base unit per dimension (durations in days, or in seconds below a day; amounts in their
currency), so two values are `comparable` when kind and unit agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from builder.text.language import CJK_CHAR
from builder.text.lexicon import all_stopwords, lexicon

# Numbers: "1,200", "1.200", "1 200", "12", "3.5", "3,5". Not inside a word, an identifier, a
# version ("1.2.3"), a time ("10:30") or a longer run of digits and dots.
_NUM = r"\d{1,3}(?:[,.\u00a0\u202f ]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?"
_LATIN_WORD = r"A-Za-z0-9_\u00c0-\u024f"  # CJK text runs into digits ("需要5天"): not a word edge
_NUMBER = re.compile(rf"(?<![{_LATIN_WORD}.,:/#@\-])({_NUM})(?![{_LATIN_WORD}]|[.,:]\d|[\-/][{_LATIN_WORD}])")
_CURRENCY_SYMBOLS = {"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR",
                     "₩": "KRW", "₽": "RUB", "R$": "BRL", "CA$": "CAD", "C$": "CAD", "A$": "AUD",
                     "CHF": "CHF", "元": "CNY", "円": "JPY", "원": "KRW"}
_CURRENCY_CODES = ("euros", "euro", "Euros", "Euro", "USD", "EUR", "GBP", "JPY", "CNY", "CAD",
                   "AUD", "CHF", "INR", "BRL", "MXN", "SEK", "NOK", "DKK", "PLN", "KRW", "RUB")
# Units written with symbols the same way in every language (storage, time, length, mass...).
_SYMBOL_UNITS = ("KB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "kB", "Mb", "Gb",
                 "ms", "µs", "μs", "ns", "km", "cm", "mm", "kg", "mg", "ml", "mL", "px", "MHz",
                 "GHz", "kWh", "kW", "°C", "°F", "m²", "km²", "RPM", "rpm", "req/s", "qps")
_PERCENT_SIGN = re.compile(r"\s?%")
_CJK_NUMBER = re.compile(r"[零一二两三四五六七八九十百千万]+")
_CJK_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
               "八": 8, "九": 9}
_POSSESSIVE = re.compile(r"(?:['’]s|['’])$")
_WORDS_AFTER = re.compile(r"[ \u00a0]*([^\W\d_][\w'’-]*(?:[ \u00a0]+[^\W\d_][\w'’-]*)?)")
_DAY_SECONDS = 86400.0
_DURATION_DAYS = {"second": 1 / _DAY_SECONDS, "minute": 60 / _DAY_SECONDS,
                  "hour": 3600 / _DAY_SECONDS, "day": 1.0, "week": 7.0, "month": 30.4375,
                  "year": 365.25, "workday": 1.0}


@dataclass(frozen=True)
class Value:
    """One value of a text. `unit`: a currency code, "%", a duration unit's dimension ("time"
    or "workday"), a symbol unit, a counted noun, or ""."""

    start: int
    end: int
    text: str
    kind: str            # amount | percent | duration | date | year | quantity | count | number
    magnitude: float
    unit: str = ""


def parse_number(raw: str, lang: str = "en") -> float | None:
    """"1,200" -> 1200, "1.200" -> 1200 (es/de/fr...), "3,5" -> 3.5 (not en), "1 200" -> 1200."""
    s = raw.replace("\u00a0", " ").replace("\u202f", " ").strip()
    if " " in s:
        s = s.replace(" ", "")
    comma_decimal = lang not in ("en", "zh", "ja", "ko")
    if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", s):
        s = s.replace(",", "")
    elif re.fullmatch(r"\d{1,3}(\.\d{3})+(,\d+)?", s) and (comma_decimal or s.count(".") > 1):
        s = s.replace(".", "").replace(",", ".")
    elif re.fullmatch(r"\d+,\d+", s):
        s = s.replace(",", ".") if comma_decimal else s.replace(",", "")
    try:
        return float(s)
    except ValueError:
        return None


def _cjk_number(raw: str) -> float | None:
    """"十二" -> 12, "两" -> 2, "三十" -> 30 (up to 99; larger ones are written in digits)."""
    if raw == "十":
        return 10.0
    if "十" in raw:
        tens, _, ones = raw.partition("十")
        t = _CJK_DIGITS.get(tens, 1) if tens else 1
        o = _CJK_DIGITS.get(ones, 0) if ones else 0
        if (tens and tens not in _CJK_DIGITS) or (ones and ones not in _CJK_DIGITS):
            return None
        return float(t * 10 + o)
    if len(raw) == 1 and raw in _CJK_DIGITS:
        return float(_CJK_DIGITS[raw])
    return None


def _unit_after(text: str, pos: int, lang: str) -> tuple[str, str, int] | None:
    """(unit word, its dimension, end) of a duration unit starting at `pos` (after spaces)."""
    units = lexicon(lang).units
    m = _WORDS_AFTER.match(text, pos)
    if m:
        words = m.group(1)
        for candidate in (words, words.split()[0]):  # "working days" before "working"
            # a possessive ("4 weeks' notice", "1 week's notice") is still the unit
            bare = _POSSESSIVE.sub("", candidate)
            if bare.casefold() in units:
                end = m.start(1) + len(bare)
                return bare, units[bare.casefold()], end
    # CJK: the unit follows the digits directly ("5天", "3か月", "2주")
    for word in sorted((w for w in units if not w.isascii()), key=len, reverse=True):
        if text.startswith(word, pos) and not word[0].isalpha() or (
                text.startswith(word, pos) and not text[pos:pos + 1].isascii()
                and not re.match(r"[A-Za-zÀ-ÿ]", word)):
            return word, units[word], pos + len(word)
    return None


def _symbol_unit_after(text: str, pos: int) -> tuple[str, int] | None:
    m = re.match(r"[ \u00a0]?", text[pos:])
    at = pos + (m.end() if m else 0)
    for sym in sorted(_SYMBOL_UNITS, key=len, reverse=True):
        if text.startswith(sym, at) and not (text[at + len(sym):at + len(sym) + 1].isalnum()):
            return sym, at + len(sym)
    return None


def _currency_before(text: str, start: int) -> tuple[str, int] | None:
    for sym in sorted(_CURRENCY_SYMBOLS, key=len, reverse=True):
        s = start - len(sym)
        if s >= 0 and text[s:start] == sym and not (sym[0].isalpha() and s > 0
                                                    and text[s - 1].isalpha()):
            return _CURRENCY_SYMBOLS[sym], s
    m = re.search(r"(?:^|(?<=[^\w]))(" + "|".join(_CURRENCY_CODES) + r")[ \u00a0]?$",
                  text[max(0, start - 5):start])
    if m:
        return m.group(1), start - (len(text[max(0, start - 5):start]) - m.start(1))
    return None


def _currency_after(text: str, end: int) -> tuple[str, int] | None:
    m = re.match(r"[ \u00a0]?(" + "|".join(re.escape(s) for s in sorted(
        _CURRENCY_SYMBOLS, key=len, reverse=True)) + "|" + "|".join(_CURRENCY_CODES)
        + r")(?![A-Za-z])", text[end:])
    if m:
        code = _CURRENCY_SYMBOLS.get(m.group(1), m.group(1))
        code = "EUR" if code.casefold().startswith("euro") else code
        return code, end + m.end()
    return None


def _percent_after(text: str, end: int, lang: str) -> int | None:
    m = _PERCENT_SIGN.match(text, end)
    if m:
        return m.end()
    tail = text[end:end + 24].casefold()
    for word in lexicon(lang).percent:
        for sep in (" ", "\u00a0", ""):
            if tail.startswith(sep + word) and not tail[len(sep + word):len(sep + word) + 1].isalpha():
                return end + len(sep + word)
    return None


def _dates(text: str, lang: str) -> list[Value]:
    """Full dates and month-year dates, in the language's month names or in digits."""
    months = lexicon(lang).months | lexicon("en").months
    names = "|".join(sorted((re.escape(m) for m in months), key=len, reverse=True))
    out: list[Value] = []

    def add(m: re.Match, y: str, mo: int | str, d: str | None) -> None:
        month = months.get(str(mo).casefold().rstrip("."), None) if not str(mo).isdigit() else int(mo)
        try:
            day = date(int(y), int(month or 0), int(d or 1))
        except (ValueError, TypeError):
            return
        kind_text = m.group(0).strip()
        out.append(Value(m.start(), m.start() + len(m.group(0).rstrip()), kind_text, "date",
                         float(day.toordinal()), "day" if d else "month"))

    for m in re.finditer(r"(?<![\d.])(\d{4})-(\d{1,2})-(\d{1,2})(?![\d])", text):
        add(m, m.group(1), m.group(2), m.group(3))
    for m in re.finditer(r"(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월](?:\s*(\d{1,2})\s*[日일])?", text):
        add(m, m.group(1), m.group(2), m.group(3))
    flags = re.I | re.U
    for m in re.finditer(rf"(?<!\w)({names})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})(?!\d)",
                         text, flags):
        add(m, m.group(3), m.group(1), m.group(2))
    for m in re.finditer(rf"(?<![\w.])(\d{{1,2}})(?:er|º|°|\.)?\s+(?:de\s+)?({names})\.?,?\s+(?:de\s+)?"
                         rf"(\d{{4}})(?!\d)", text, flags):
        add(m, m.group(3), m.group(2), m.group(1))
    for m in re.finditer(rf"(?<!\w)({names})\.?\s+(?:de\s+)?(\d{{4}})(?!\d)", text, flags):
        add(m, m.group(2), m.group(1), None)
    # keep the longest of overlapping matches
    out.sort(key=lambda v: (v.start, -(v.end - v.start)))
    kept: list[Value] = []
    for v in out:
        if not kept or v.start >= kept[-1].end:
            kept.append(v)
    return kept


def stated_dates(text: str, lang: str = "en") -> list[str]:
    """The dates a text states, normalised ("YYYY-MM-DD", "YYYY-MM", "YYYY"), in order of first
    appearance, no repeats: what `find_values` reads as a date or a year, in the text's language
    (month names of every language the lexicon has, years, CJK dates)."""
    out: list[str] = []
    for v in find_values(text, lang):
        if v.kind == "date":
            d = date.fromordinal(int(v.magnitude))
            stated = d.isoformat() if v.unit == "day" else f"{d.year:04d}-{d.month:02d}"
        elif v.kind == "year":
            stated = f"{int(v.magnitude):04d}"
        else:
            continue
        if stated not in out:
            out.append(stated)
    return out


def find_values(text: str, lang: str = "en") -> list[Value]:
    """The values of `text` in order, none overlapping another (dates first, then numbers with
    what makes them a value: a currency, "%", a duration unit, a symbol unit, a counted noun)."""
    lang = lexicon(lang).code
    found: list[Value] = list(_dates(text, lang))
    taken = [(v.start, v.end) for v in found]

    def free(s: int, e: int) -> bool:
        return all(e <= a or s >= b for a, b in taken)

    for m in _NUMBER.finditer(text):
        s, e = m.span(1)
        if not free(s, e):
            continue
        magnitude = parse_number(m.group(1), lang)
        if magnitude is None:
            continue
        value = _classify(text, s, e, magnitude, lang)
        if value and free(value.start, value.end):
            found.append(value)
            taken.append((value.start, value.end))
    found.extend(_word_numbers(text, lang, free, taken))
    return sorted(found, key=lambda v: v.start)


def _classify(text: str, s: int, e: int, magnitude: float, lang: str) -> Value | None:
    if (cur := _currency_before(text, s)) is not None:
        code, start = cur
        return Value(start, e, text[start:e], "amount", magnitude, code)
    if (cur := _currency_after(text, e)) is not None:
        code, end = cur
        return Value(s, end, text[s:end], "amount", magnitude, code)
    if (end := _percent_after(text, e, lang)) is not None:
        return Value(s, end, text[s:end], "percent", magnitude, "%")
    if (unit := _unit_after(text, e, lang)) is not None:
        word, dim, end = unit
        return Value(s, end, text[s:end], "duration", magnitude * _DURATION_DAYS[dim],
                     "workday" if dim == "workday" else "time")
    if (sym := _symbol_unit_after(text, e)) is not None:
        unit, end = sym
        return Value(s, end, text[s:end], "quantity", magnitude, unit)
    raw = text[s:e]
    if re.fullmatch(r"(1[6-9]|20)\d\d", raw):
        return Value(s, e, raw, "year", magnitude, "year")
    if (m := _WORDS_AFTER.match(text, e)) and " " in m.group(1) and (
            unit := _unit_after(text, m.start(1) + len(m.group(1).split()[0]), lang)) is not None:
        word, dim, end = unit   # one word between the number and its unit: "7 continuous days"
        return Value(s, end, text[s:end], "duration", magnitude * _DURATION_DAYS[dim],
                     "workday" if dim == "workday" else "time")
    if (counted := _counted_noun(text, e, lang)) is not None:
        noun, end = counted
        return Value(s, end, text[s:end], "count", magnitude, noun)
    return Value(s, e, raw, "number", magnitude, "")


MAX_COUNTED_WORDS = 2
_NEXT_WORD = re.compile(r" ([^\W\d_][\w'’-]*)")
MAX_SHORT_UNIT = 3


def _counted_noun(text: str, end: int, lang: str) -> tuple[str, int] | None:
    """(the counted noun, where the count's words end) for a number written before what it
    counts ("32 octets", "200 Mo", "7 continuous days"): a count's answer is the number with
    its words, since "200" alone is not what the text says. Up to `MAX_COUNTED_WORDS` words,
    ending at a function word or punctuation. A capitalised word after a number is a name (a
    list number before a citation, "18 Ruben ..."), not what is counted, unless it is a short
    unit symbol ("Mo", "KB")."""
    stops = all_stopwords()   # holds every language's, `lang`'s (or its English fallback) too
    words: list[re.Match] = []
    pos = end
    while len(words) < MAX_COUNTED_WORDS:
        m = _NEXT_WORD.match(text, pos)
        if not m:
            break
        word = m.group(1)
        if word.casefold() in stops or (word[0].isupper() and len(word) > MAX_SHORT_UNIT):
            break
        words.append(m)
        pos = m.end()
    if not words:
        return None
    return _POSSESSIVE.sub("", words[0].group(1)).casefold(), words[-1].end()


_WORD_RUN = re.compile(r"(?<!\w)[^\W\d_]+(?:-[^\W\d_]+)*")


def number_words(text: str, lang: str = "en") -> list[tuple[int, int, float]]:
    """(start, end, number) of each number word of `lang` (the lexicon's `numbers`), in order.
    A hyphenated compound the lexicon spells whole is one number ("soixante-dix" 70, "dix-sept"
    17, "quatre-vingt-dix" 90), the longest one from the left first ("quatre-vingt-dix-sept":
    90, then 7); the other parts of a compound are read alone ("vingt-cinq": 20, then 5)."""
    words = lexicon(lang).numbers
    out: list[tuple[int, int, float]] = []
    for m in _WORD_RUN.finditer(text):
        parts = m.group(0).split("-")
        starts = [m.start()]
        for part in parts[:-1]:
            starts.append(starts[-1] + len(part) + 1)
        i = 0
        while i < len(parts):
            for j in range(len(parts), i, -1):
                compound = "-".join(parts[i:j]).casefold()
                if compound in words:
                    out.append((starts[i], starts[j - 1] + len(parts[j - 1]), words[compound]))
                    i = j
                    break
            else:
                i += 1
    return out


def _word_numbers(text: str, lang: str, free, taken) -> list[Value]:
    """Durations written in words ("two weeks", "十天"): the only word numbers worth an answer;
    a bare "one" is too common to be a value."""
    out: list[Value] = []
    for start, stop, number in number_words(text, lang):
        unit = _unit_after(text, stop, lang)
        if unit and free(start, unit[2]):
            word, dim, end = unit
            out.append(Value(start, end, text[start:end], "duration",
                             number * _DURATION_DAYS[dim], "workday" if dim == "workday" else "time"))
            taken.append((start, end))
    for m in _CJK_NUMBER.finditer(text):
        n = _cjk_number(m.group(0))
        if n is None:
            continue
        unit = _unit_after(text, m.end(), lang)
        if unit and free(m.start(), unit[2]) and not unit[0].isascii():
            word, dim, end = unit
            out.append(Value(m.start(), end, text[m.start():end], "duration",
                             n * _DURATION_DAYS[dim], "workday" if dim == "workday" else "time"))
            taken.append((m.start(), end))
    return out


def comparable(a: Value, b: Value) -> bool:
    """Values of one kind and unit: their order and difference mean something."""
    return a.kind == b.kind and a.unit == b.unit and a.kind in (
        "amount", "percent", "duration", "date", "year", "quantity", "count")


def magnitudes(text: str, lang: str = "en") -> set[float]:
    """Every number `text` states, as written: in digits ("5 seconds" -> 5) or as a small number
    word ("five seconds" -> 5), plus each date's day number. What a round trip compares: two
    answers that state different numbers state different values."""
    out: set[float] = set()
    for v in find_values(text, lang):
        if v.kind == "date":
            out.add(v.magnitude)
            continue
        digits = re.search(_NUM, v.text)
        n = parse_number(digits.group(0), lang) if digits else None
        if n is not None:
            out.add(n)
        elif v.kind != "duration":  # a duration in words: its number word is added below
            out.add(v.magnitude)
    out.update(number for _, _, number in number_words(text, lang))
    for m in _CJK_NUMBER.finditer(text):
        if (n := _cjk_number(m.group(0))) is not None:
            out.add(n)
    return out


_RATE = re.compile(r"[ \u00a0]*(?:/|([^\W\d_]{1,4})[ \u00a0]+)[ \u00a0]*([^\W\d_]+)")


def rate_after(text: str, end: int, lang: str = "en") -> tuple[str, int] | None:
    """(dimension, end) of the period a value at `text[:end]` is counted over, when one follows
    it: a connecting word of at most four letters, or a slash, then ONE duration unit in the
    singular ("£1,000 per month", "4 weeks a year", "25 jours par an", "10 Tage pro Jahr",
    "$5/day"). Structural: the units are the lexicon's duration words, and a unit counts as
    singular when dropping its last letter gives no other unit ("days" -> "day" is a plural).
    A unit followed by a number ("2 weeks of day 1", "of day one") is a point, not a period."""
    m = _RATE.match(text, end)
    if not m or (m.group(1) and not m.group(1).islower()):
        return None
    lex = lexicon(lang)
    word = m.group(2).casefold()
    if word not in lex.units or word[:-1] in lex.units:
        return None
    after = text[m.end():].lstrip(_SPACES)
    if after[:1].isdigit() or re.split(r"\W", after.casefold(), maxsplit=1)[0] in lex.numbers:
        return None
    return lex.units[word], m.end()


def rate_of(answer: str, lang: str = "en") -> str:
    """The period the (last) value of an answer is counted over ("month" for "at least £1,000
    per month"), or "": a monthly amount and a total are no two values of one thing."""
    values = find_values(answer, lang)
    found = rate_after(answer, values[-1].end, lang) if values else None
    return found[0] if found else ""


def bounded(text: str, start: int, end: int, lang: str = "en") -> tuple[int, int]:
    """The span of the value at `text[start:end]` with the words that bound it ("up to £150",
    "at least 26 weeks", "25 jours maximum", "5日以内") and the period it is counted over ("£1,000
    per month": `rate_after`), when they stand right next to it: a limit stated without its
    bound reads as an exact value, and a question written for it asks for "the cost" where the
    text states a ceiling; a monthly fee without its month reads as the fee. Latin-script bounds
    are whole words, with a space between them and the value; CJK ones may touch the number, as
    those scripts write them. Compared a slice at a time, so a letter that casefolds longer
    ("ß") moves no index."""
    lex = lexicon(lang)
    if rate := rate_after(text, end, lang):
        end = rate[1]
    head = text[:start].rstrip(_SPACES)
    spaced = len(head) < start
    for bound in lex.bounds_before:
        at = len(head) - len(bound)
        if at >= 0 and head[at:].casefold() == bound and (spaced or _cjk(bound)) \
                and not (_latin(bound[0]) and at > 0 and head[at - 1].isalnum()):
            start = at
            break
    at = len(text) - len(text[end:].lstrip(_SPACES))
    for bound in lex.bounds_after:
        stop = at + len(bound)
        if text[at:stop].casefold() == bound and (at > end or _cjk(bound)) \
                and not (_latin(bound[-1]) and text[stop:stop + 1].isalnum()):
            end = stop
            break
    return start, end


def split_bound(answer: str, lang: str = "en") -> tuple[str, str]:
    """(the bound, the value) of an answer span `bounded` chose: ("up to", "£150") for "up to
    £150", ("", "25 days") for "25 days"; the bound's words as written, joined by a space."""
    found, value = _bounds(answer, lang)
    return " ".join(found), value


def bound_direction(answer: str, lang: str = "en") -> str | None:
    """"ceiling" when the answer's bound sets a most ("up to £150", "5日以内"), "floor" when it
    sets a least ("at least 26 weeks", "25 jours minimum"); None for a bare or approximate value
    ("about 30 days"), or one bounded both ways."""
    lex = lexicon(lang)
    found = {"ceiling" if b in lex.ceilings else "floor" if b in lex.floors else "neither"
             for b in (w.casefold() for w in _bounds(answer, lang)[0])}
    return found.pop() if len(found) == 1 and "neither" not in found else None


def _bounds(answer: str, lang: str) -> tuple[list[str], str]:
    """The bounds before and after the value (none, one or both, as written) and the value."""
    lex = lexicon(lang)
    found = []
    for bound in lex.bounds_before:
        rest = answer[len(bound):]
        if answer[:len(bound)].casefold() == bound and rest and (
                rest[0] in _SPACES or _cjk(bound)) and rest.strip(_SPACES):
            found.append(answer[:len(bound)])
            answer = rest.lstrip(_SPACES)
            break
    for bound in lex.bounds_after:
        rest = answer[:len(answer) - len(bound)]
        if len(answer) > len(bound) and answer[len(rest):].casefold() == bound and (
                rest[-1] in _SPACES or _cjk(bound)) and rest.strip(_SPACES):
            found.append(answer[len(rest):])
            answer = rest.rstrip(_SPACES)
            break
    return found, answer


_SPACES = " \u00a0"


def _cjk(word: str) -> bool:
    return CJK_CHAR.search(word) is not None


def _latin(ch: str) -> bool:
    """A letter or digit of a script that writes spaces between words."""
    return ch.isalnum() and not _cjk(ch)
