"""Faithfulness signals code can settle before any LLM verdict: the answer is cut into claims
(sentences), and each claim is checked against the contexts by what a small model does not
need to judge.

Per claim, in this order:

1. **Checkable values** -- numbers (digits, "2 000" / "2,000" / "2.000", "1.5" / "1,5",
   "5 million", "5万"), numbers written as words with a unit after them ("five days"),
   month names, quoted strings, and names and identifiers (a capitalised word inside a
   sentence, CamelCase, snake_case, ALLCAPS, words with digits such as "GPT-4"; not in German,
   where every noun is capitalised, nor in CJK text). Every form is normalised, so "5" /
   "five", "2 000" / "2000" and "March 5, 2021" / "2021-03-05" / "5 de marzo de 2021" meet. A
   value found in no context makes the claim **unsupported** (decided by code, the value named
   in the reason). A value with a unit ("5 km") whose number the contexts give only with
   another unit of the same kind ("5 miles") is unsupported too. Two kinds of value are not
   the answer's claims and count as found: a citation of a context by its position
   ("Passage 2 says", "[2]", "(source 1)", with a number from 1 to the count of contexts; the
   nouns are the lexicon's `citations`), and a value the user's question states ("Windows
   10", a name, the question quoted back, or restated in the question's words). The question
   gives values only: it never makes a claim's words found in step 2.
2. **Found as written** -- when every checkable value is found and the claim's words appear
   verbatim in a context (twelve characters or more), or every content word (`content_terms`)
   appears in one context sentence or two adjacent ones and both or neither have a negation
   (`_covered`), the claim is **supported** (decided by code).
3. Otherwise the claim is **undecided**: the LLM judges it alone, against the `EVIDENCE`
   context sentences most like it (BM25 over the contexts' sentences), not the whole context.

Claims are the answer's sentences with a content word; a sentence that says the contexts do
not give something (`refusal.check_refusal`'s phrases) is not a claim, and of a sentence that
does both, only the clauses that state something are.

The words come from the lexicon (`builder.text.lexicon`), and which language's depends on what
a wrong reading costs:
- a claim is read in the answer's language (its contexts' when the answer is too short to
  tell): number words, scale words ("million"; a German "Billion" is 10^12), "percent",
  units of measure and months (the answer's language and English, as generation reads dates).
  Another language's words would make values the answer never stated (Spanish "once" is 11,
  "mayo" is May) and so claims code calls unsupported;
- each context is read in its own language and the answer's (`Evidence`): reading more can
  only find more of a context's values;
- negations are every language's (`NEGATIONS`): a word taken for a negation where it is none
  only leaves a claim to the LLM.
- function words (`STOPWORDS`) are every language's: the lexicon's `filler`, a narrower list
  than its `stopwords` (see the comment there).
Symbols and digits are shared by every language.

Deterministic and pure: the same answer and contexts always give the same claims, verdicts and
evidence, in answer order.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from builder.text.language import HAN, HANGUL, KANA, detect_language
from builder.text.lexicon import all_filler, every_language, lexicon
from builder.text.sentences import split_sentences

SIGNALS_VERSION = "5"  # bumped when a rule changes: part of the judge's calibration key
                       # 2: sentences by builder.text.sentences (one rule with generation);
                       # Italian "tre" is 3, not 2
                       # 3: the lexicon's words, read in the text's language (module doc)
                       # 4: a context cited by its position is no value; the question's
                       # values are given
                       # 5: number words 16-19 and 70-90 in every Latin-script language
                       # ("seventy", "soixante-dix", "quatre-vingts", "nonante"); "ß" for
                       # "ss" in number words ("dreißig")
EVIDENCE = 3           # context sentences a claim is judged against

_CJK_CLASS = HAN + KANA + HANGUL
_CJK_START = re.compile(f"[{_CJK_CLASS}]")
_HAN_START = re.compile(f"[{HAN}]")
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_WORD = re.compile(rf"[{_CJK_CLASS}]+|[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_CJK_RUN = re.compile(rf"^[{_CJK_CLASS}]+$")

# Negations of every supported language, whatever the text's language: a word read as a
# negation where it is none only makes a claim and its evidence disagree, which leaves the claim
# to the LLM; it never lets code call a claim supported. CJK ones are found inside words, and
# mark the text with NEGATED.
NEGATED = "¬"
_NEGATION_WORDS = frozenset(w for w in every_language("negations") if not _CJK_START.match(w))
_NEGATION_CUES = re.compile("|".join(sorted((re.escape(w) for w in every_language("negations")
                                             if _CJK_START.match(w)), key=len, reverse=True)))
NEGATIONS = _NEGATION_WORDS | {NEGATED}

# Units written the same way in every language; the words for units are each language's
# (`measures`, and `units` for durations).
_SHARED_UNITS = {
    **dict.fromkeys("km kms".split(), ("length", "km")), "cm": ("length", "cm"),
    "ft": ("length", "ft"), "in.": ("length", "in"),
    **dict.fromkeys("kg kgs".split(), ("mass", "kg")), **dict.fromkeys("lb lbs".split(), ("mass", "lb")),
    "g": ("mass", "g"), "t": ("mass", "t"), "h": ("time", "h"), "min": ("time", "min"),
    **dict.fromkeys("$ usd".split(), ("money", "usd")), **dict.fromkeys("€ eur".split(), ("money", "eur")),
    **dict.fromkeys("£ gbp".split(), ("money", "gbp")), **dict.fromkeys("¥ jpy".split(), ("money", "jpy")),
    "°c": ("temperature", "c"), "°f": ("temperature", "f"),
}
_DURATION = {"second": "s", "minute": "min", "hour": "h", "day": "day", "workday": "workday",
             "week": "week", "month": "month", "year": "year"}


def _alternation(words) -> str:
    """A regex alternation of `words`, longest first; a Latin-script word must end at a word
    boundary, a CJK one is found inside a run of CJK text."""
    return "|".join(re.escape(w) + ("" if _CJK_START.match(w[-1]) else r"\b")
                    for w in sorted(words, key=len, reverse=True))


@dataclass(frozen=True)
class _Reading:
    """What signals reads in one language, built once from its lexicon: number words, scale
    words, "percent", month names, unit words, framing words."""
    code: str
    number: re.Pattern
    scales: dict[str, int]
    spelled: dict[str, float]       # number words of two and more, for claims
    spelled_re: re.Pattern
    every_number: dict[str, float]  # every number word and scale word, for contexts
    every_number_re: re.Pattern
    lone_scales: frozenset[str]     # scale words read alone ("a million"), not after a number
    dozens_re: re.Pattern           # "two dozen": a number word, then a word for a dozen
    months: dict[str, int]
    month_re: re.Pattern
    units: dict[str, tuple[str, str]]
    cjk_units: tuple[str, ...]      # longest first: found at the start of a run of CJK text
    framing: frozenset[str]


def _words_re(table) -> re.Pattern:
    """Any word of `table` (casefolded, as the lexicon's keys are), whole. A casefolded "ss" may
    be written "ß" ("dreißig" is the lexicon's "dreissig"): read the match with `casefold()`."""
    if not table:
        return re.compile(r"(?!x)x")  # matches nothing
    words = sorted(table, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(" + "|".join(re.escape(w).replace("ss", "(?:ss|ß)") for w in words)
                      + r")(?![\w-])", re.IGNORECASE)


@lru_cache(maxsize=None)
def _reading(language: str | None) -> _Reading:
    lex = lexicon(language)
    latin_numbers = {w: n for w, n in lex.numbers.items() if not _CJK_START.match(w)}
    spelled = {w: n for w, n in latin_numbers.items() if n >= 2 and n == int(n)}
    lone_scales = {w: 10.0 ** e for w, e in lex.scales.items()
                   if len(w) >= 4 and w.isalpha() and not _CJK_START.match(w)}
    every_number = {**latin_numbers, **lone_scales}
    number = re.compile(
        r"(?<![A-Za-z0-9_.,])(\d{1,3}(?:(?:[ \u00a0\u202f\u2009,.'])\d{3})+|\d+)((?:[.,]\d+)?)"
        r"(?:\s*(%|" + _alternation(lex.percent) + r"))?"
        r"(?:\s*(" + _alternation(lex.scales) + r"))?", re.IGNORECASE)
    months = {**lexicon("en").months, **lex.months}
    latin = [m for m in months if not _CJK_START.match(m)]
    cjk = [m for m in months if _CJK_START.match(m)]
    month_re = re.compile(r"(?<![\w])(" + "|".join(sorted(map(re.escape, latin), key=len, reverse=True))
                          + r")\.?(?![\w])" + ("|(" + "|".join(sorted(map(re.escape, cjk), key=len,
                                                                        reverse=True)) + ")"
                                               if cjk else ""), re.IGNORECASE)
    units = {**{w: ("time", _DURATION[u]) for w, u in lex.units.items() if " " not in w},
             **lex.measures, **_SHARED_UNITS}
    dozens_re = re.compile(rf"(?<![\w-])({'|'.join(map(re.escape, spelled))})\s+"
                           rf"({'|'.join(map(re.escape, lex.dozen))})(?![\w-])", re.IGNORECASE
                           ) if spelled else re.compile(r"(?!x)x")
    cjk_units = tuple(sorted((u for u in units if _CJK_START.match(u)), key=len, reverse=True))
    return _Reading(lex.code, number, dict(lex.scales), spelled, _words_re(spelled),
                    every_number, _words_re(every_number), frozenset(lone_scales), dozens_re,
                    months, month_re, units, cjk_units, frozenset(stem(w) for w in lex.framing))

# ----------------------------------------------------------------- numbers


def _values(whole: str, frac: str, scale: str | None, scales: dict[str, int]) -> set[str]:
    """Every reading of one written number, canonical ("2.000" -> {"2", "2000"}): the
    separators of the languages golden supports disagree, so both readings are kept."""
    digits = re.sub(r"[ \u00a0\u202f\u2009,.']", "", whole)
    readings = {digits}
    if re.fullmatch(r"\d{1,3}[.,]\d{3}", whole):  # "2.000" or "2,000": thousands or a decimal
        readings.add(whole.replace(",", "."))
    if frac:
        readings = {f"{r.split('.')[0]}.{frac[1:]}" for r in readings if "." not in r} | {
            r for r in readings if "." in r}
    out = set()
    for r in readings:
        out.add(_canon(r))
        exp = scales.get((scale or "").lower())
        if exp:
            out.add(_canon(str(float(r) * 10 ** exp)))
    return out


def _canon(text: str) -> str:
    try:
        value = float(text)
    except ValueError:
        return text
    if math.isfinite(value) and value == int(value):
        return str(int(value))
    return f"{value:.6g}"


@dataclass(frozen=True)
class Value:
    """One checkable value of a claim: what was written, the canonical forms it may take, and
    for a number with a unit, the unit as written and its (kind, canonical unit)."""
    text: str
    forms: frozenset[str]
    kind: str  # "number", "month", "quote", "name"
    unit: str | None = None
    dimension: tuple[str, str] | None = None


def numbers(text: str, language: str | None = "en") -> list[Value]:
    """Numbers in digits, with their percent or scale word ("5 million") in `language`, and
    "two dozen" (a number word times a word for twelve)."""
    reading = _reading(language)
    out = []
    for m in reading.number.finditer(text):
        whole, frac, percent, scale = m.group(1), m.group(2), m.group(3), m.group(4)
        if scale and len(scale) == 1 and scale.isascii() and not _money_before(text, m.start()):
            scale = None  # "5 m" is five metres, "5 b" a grade: a scale only after a currency
        forms = _values(whole, frac, scale, reading.scales)
        unit = "%" if percent else _unit_after(text, m.end(), reading) or _currency_before(
            text, m.start())
        out.append(_number(m.group(0).strip(), forms, unit, reading))
    for m in reading.dozens_re.finditer(text):
        n = reading.spelled[m.group(1).casefold()]
        out.append(Value(m.group(0), frozenset({_canon(str(n * 12))}), "number"))
    return out


def spelled(text: str, language: str | None = "en", *, one: bool = False) -> list[Value]:
    """Numbers written as words in `language`, with the unit after them; `one` adds "one",
    "zero", "half" and a scale word read alone ("a million", not the one of "1.5 million"):
    read in contexts only ("one" as an article is everywhere)."""
    reading = _reading(language)
    table, pattern = ((reading.every_number, reading.every_number_re) if one else
                      (reading.spelled, reading.spelled_re))
    out = []
    for m in pattern.finditer(text):
        word = m.group(1).casefold()
        if word in reading.lone_scales and _after_number(text, m.start(), reading):
            continue
        out.append(_number(m.group(1), {_canon(str(table[word]))},
                           _unit_after(text, m.end(), reading), reading))
    return out


_WORD_BEFORE = re.compile(r"([^\W_]+)[\s\u00a0]*$")


def _after_number(text: str, start: int, reading: _Reading) -> bool:
    """Whether a digit or a number word comes right before `start` ("1.5 million")."""
    m = _WORD_BEFORE.search(text, max(0, start - 30), start)
    return bool(m) and (m.group(1)[-1].isdigit() or m.group(1).lower() in reading.every_number)


def _number(text: str, forms, unit: str | None, reading: _Reading) -> Value:
    return Value(text, frozenset(forms), "number", unit,
                 reading.units.get(unit) if unit and unit != "%" else None)


# ----------------------------------------------------------------- units

_UNIT_AFTER = re.compile(r"\s*(°[cf]|[$€£¥]|[^\W\d_]+\.?)", re.IGNORECASE)
_CURRENCY_BEFORE = re.compile(r"([$€£¥]|usd|eur|gbp)\s*$", re.IGNORECASE)


def _unit_after(text: str, end: int, reading: _Reading) -> str | None:
    """The unit word right after a number; in CJK text, the longest unit word the run of
    characters after the number starts with ("5公里长" -> 公里)."""
    m = _UNIT_AFTER.match(text, end)
    if not m:
        return None
    word = m.group(1).lower()
    if word in reading.units:
        return word
    if word.rstrip(".") in reading.units:
        return word.rstrip(".")
    if _CJK_START.match(word):
        return next((u for u in reading.cjk_units if word.startswith(u)), None)
    return None


def _currency_before(text: str, start: int) -> str | None:
    m = _CURRENCY_BEFORE.search(text[max(0, start - 5):start])
    return m.group(1).lower() if m else None


def _money_before(text: str, start: int) -> bool:
    return _currency_before(text, start) is not None


# ----------------------------------------------------------------- months

_NUMERIC_DATE = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b"
                           r"|\b(\d{1,2})[-/.](\d{1,2})[-/.](\d{2,4})\b")
_CJK_DATE = re.compile(r"(\d{1,4})\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*日)?")


def _ambiguous_month(word: str, months: dict[str, int]) -> bool:
    """A month name that is also a common word or an abbreviation ("may", "mar", "sept",
    "janv"): read as a month only with a day or a year beside it ("May 2021", "5 mar 2020")."""
    if _HAN_START.match(word):
        return False  # 三月 is March and nothing else
    return len(word) <= 3 or any(other != word and other.startswith(word)
                                 and months[other] == months[word] for other in months)


def months(text: str, language: str | None = "en", *, loose: bool = False) -> list[Value]:
    """Months named in the text (as "month:N"), in `language` or English; with `loose`, also
    the months a numeric date may mean (both day/month orders), which is how contexts are read."""
    reading = _reading(language)
    stopwords = lexicon(language).stopwords
    out = []
    for m in reading.month_re.finditer(text):
        written = m.group(1) or m.group(2)
        word = written.lower()
        if _ambiguous_month(word, reading.months):
            around = text[max(0, m.start() - 6):m.end() + 7]
            if not re.search(r"\d", around):
                continue
        if word in stopwords and written == word:
            continue  # "may" in lower case is the English modal verb
        out.append(Value(m.group(0), frozenset({f"month:{reading.months[word]}"}), "month"))
    if loose:
        for m in _NUMERIC_DATE.finditer(text):
            parts = [p for p in m.groups() if p]
            forms = {f"month:{int(p)}" for p in (parts[1:3] if len(parts[0]) == 4 else parts[:2])
                     if 1 <= int(p) <= 12}
            if forms:
                out.append(Value(m.group(0), frozenset(forms), "month"))
        for m in _CJK_DATE.finditer(text):
            out.append(Value(m.group(0), frozenset({f"month:{int(m.group(2))}"}), "month"))
    return out


# ----------------------------------------------------------------- citations

_CITED = r"(\d{1,3}(?:(?:\s*[,;&/\u2013-]\s*|\s+[^\W\d_]{1,3}\s+)\d{1,3})*)"
_BRACKET_CITATION = re.compile(r"[\[(\u3010]\s*(\d{1,3}(?:\s*[,;&/\u2013-]\s*\d{1,3})*)\s*[\])\u3011]")


@lru_cache(maxsize=None)
def _citation_re(language: str | None) -> re.Pattern:
    """A citation noun of `language` (the lexicon's `citations`), then one position or a list
    of them ("passages 1 and 3", "source #2", "文档2")."""
    nouns = lexicon(language).citations
    latin = "|".join(sorted((re.escape(n) for n in nouns if not _CJK_START.match(n)), key=len,
                            reverse=True))
    cjk = "|".join(sorted((re.escape(n) for n in nouns if _CJK_START.match(n)), key=len,
                          reverse=True))
    noun = "|".join(filter(None, (latin and rf"(?<![\w])(?:{latin})", cjk)))
    return re.compile(rf"(?:{noun})\s*(?:#|no\.|nr\.|n°)?\s*{_CITED}(?![^\W_{_CJK_CLASS}]|[.,]\d)",
                      re.IGNORECASE)


def citations(text: str, contexts: int, language: str | None = "en") -> list[tuple[int, int]]:
    """Where `text` cites a context by its position ("Passage 2", "source 3", "[2]", "(1, 3)"),
    as (start, end) spans: a position from 1 to `contexts` points at a context given, so it is
    a reference, not a value the answer claims. A noun's list of positions ends before the first
    one out of range ("passage 2 and 30 people": 30 is a value); a bracket counts only when all
    its numbers are in range."""
    spans = []
    for m in _citation_re(language).finditer(text):
        end = None
        for n in re.finditer(r"\d+", m.group(1)):
            if not 1 <= int(n.group()) <= contexts:
                break
            end = m.start(1) + n.end()
        if end is not None:
            spans.append((m.start(), end))
    for m in _BRACKET_CITATION.finditer(text):
        if all(1 <= int(n) <= contexts for n in re.findall(r"\d+", m.group(1))):
            spans.append((m.start(), m.end()))
    return sorted(spans)


def _uncited(text: str, contexts: int, language: str | None) -> str:
    """`text` with its citations of contexts blanked out (positions kept)."""
    for start, end in citations(text, contexts, language):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


# ----------------------------------------------------------------- quotes and names

_QUOTE = re.compile(r"\"([^\"\n]{3,120})\"|“([^”\n]{3,120})”|«\s*([^»\n]{3,120}?)\s*»"
                    r"|「([^」\n]{2,120})」|„([^“”\n]{3,120})[“”]"
                    r"|(?<![\w])'([^'\n]{3,120})'(?![\w])")
_IDENT = re.compile(r"(?<![\w])[A-Za-z][\w./:-]*\d[\w.-]*[A-Za-z0-9]|(?<![\w])[A-Za-z]+\d"
                    r"|(?<![\w])[a-z]+_[a-z0-9_]+"
                    r"|(?<![\w])[a-z]+[A-Z][a-zA-Z0-9]*"
                    r"|(?<![\w])[A-Z][a-z]+[A-Z][a-zA-Z0-9]*")
_CAPITAL = re.compile(r"(?<![\w'’-])([A-ZÀ-ÖØ-Þ][\w'’-]*)")


def quotes(text: str) -> list[Value]:
    return [Value(q, frozenset({_norm(q)}), "quote")
            for m in _QUOTE.finditer(text) for q in m.groups() if q and _WORD.search(q)]


def names(text: str, language: str) -> list[Value]:
    """Names and identifiers: words with digits (not plain numbers), snake_case, camelCase, and
    -- outside German and CJK text -- capitalised words that do not start a sentence."""
    out: list[Value] = []
    seen = set()
    for m in _IDENT.finditer(text):
        word = m.group(0).strip(".-")
        if word and not re.fullmatch(r"[\d.,:/-]+", word) and word.lower() not in seen:
            seen.add(word.lower())
            out.append(Value(word, frozenset({word.lower()}), "name"))
    if language in ("de", "zh", "ja", "ko"):
        return out
    for m in _CAPITAL.finditer(text):
        word = re.sub(r"['’]s?$", "", m.group(1).rstrip("-"))
        before = text[:m.start()].rstrip()
        if not before or before[-1] in ".!?:;\"“(«¿¡-*•" or re.search(r"\n\s*$", text[:m.start()]):
            continue  # a sentence's or a list item's first word is capitalised anyway
        if _numeral_or_month(word, language) or word.lower() in seen or word.isupper() and len(word) <= 2:
            continue
        seen.add(word.lower())
        out.append(Value(word, frozenset({word.lower()}), "name"))
    return out


def _numeral_or_month(word: str, language: str) -> bool:
    low = word.lower()
    reading = _reading(language)
    return low in reading.spelled or low in reading.months or low in ("i",)


# ----------------------------------------------------------------- words

# Function words, dropped from a claim's content: the lexicon's `filler` of every language (a
# claim and its contexts may be written in two), not its `stopwords`, which hold words a claim's
# truth turns on ("all", "per", "via", "without") and lack ones it does not ("both", "one",
# "other", "same").
STOPWORDS = all_filler()
_NEAR_PREFIX = 5


def words(text: str) -> list[str]:
    """Lower-cased words; CJK runs become overlapping character bigrams."""
    out = []
    for w in _WORD.findall(_norm(text)):
        if _CJK_RUN.match(w):
            out += [w[i:i + 2] for i in range(max(1, len(w) - 1))]
        else:
            out.append(w)
    return out


def stem(word: str) -> str:
    """A crude stem: the first five letters of a long word ("supports", "supported" ->
    "suppo"), so inflections meet without a stemmer per language."""
    return word[:_NEAR_PREFIX] if len(word) > _NEAR_PREFIX and not word.isdigit() else word


def content_terms(text: str, language: str | None = None) -> set[str]:
    """The stems of `text`'s content words: not function words (`STOPWORDS`), negations kept,
    and not the words an answer frames its claims with in `language` (the lexicon's `framing`:
    "the passage describes ..."; detected from `text` when not given). A CJK negation adds
    `NEGATED`."""
    framing = _reading(language or detect_language(text)).framing
    terms = {stem(w) for w in words(text) if w not in STOPWORDS or w in NEGATIONS} - framing
    if _NEGATION_CUES.search(text):
        terms.add(NEGATED)
    return terms


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return text.replace("’", "'").replace("‘", "'")


# ----------------------------------------------------------------- claims and contexts

def split_claims(answer: str, prompts_dir: str | None = None,
                 language: str | None = None) -> list[str]:
    """The answer's claim-bearing sentences, in order (list items are sentences too);
    `language` is the answer's (detected when not given)."""
    from builder.score.refusal import check_refusal

    language = language or detect_language(answer)
    pieces = []
    for line in answer.splitlines():
        line = _LIST_MARK.sub("", line).strip()
        pieces += split_sentences(line)
    claims = []
    for sentence in pieces:
        check = check_refusal(sentence, prompts_dir)
        if check.verdict == "partial":
            claims += check.claim_clauses
        elif not check.refusal_clauses and content_terms(sentence, language):
            claims.append(sentence)  # short ones too: "Blue." answers a question
    return claims


def context_sentences(contexts: Sequence[str]) -> list[str]:
    return [s for ctx in contexts for s in split_sentences(ctx)]


class _Values:
    """The checkable values of one text, read once in each of `languages`: its numbers (with the
    units written after them), months, words and normalised text, which `has` meets a claim's
    values against."""

    def __init__(self, text: str, languages: Sequence[str]):
        self.norm = _norm(text)
        self.flat = " ".join(words(text))
        self.word_set = set(words(text))
        found = [v for lang in languages for v in numbers(text, lang) + spelled(text, lang, one=True)]
        self.numbers = {f for v in found for f in v.forms}
        self.units: dict[str, set[tuple[str, str]]] = {}
        for v in found:
            if v.unit:
                for f in v.forms:
                    self.units.setdefault(f, set()).add(v.dimension or ("?", v.unit))
        self.months = {f for lang in languages for v in months(text, lang, loose=True)
                       for f in v.forms}

    def has(self, value: Value) -> bool:
        if value.kind == "number":
            if not value.forms & self.numbers:
                return False
            if value.unit:  # "5 km" against a text that says "5 miles" only
                kind, unit = value.dimension or (None, None)
                seen = set().union(*(self.units.get(f, set()) for f in value.forms))
                same_kind = {u for u in seen if u[0] == kind}
                if kind and same_kind and (kind, unit) not in same_kind:
                    return False
            return True
        if value.kind == "month":
            return bool(value.forms & self.months)
        if value.kind == "quote":
            return _norm(value.text) in self.norm or " ".join(words(value.text)) in self.flat
        word = next(iter(value.forms))
        return (word in self.norm if not word.isalpha() else
                word in self.word_set or any(w.startswith(word[:_NEAR_PREFIX])
                                             for w in self.word_set if len(word) > _NEAR_PREFIX))


class Evidence:
    """The contexts, read once: their normalised text, their values, their sentences with a
    BM25 index, so every claim of an answer is checked against the same reading; and the
    user's question, whose values are given, not claimed.

    Each context is read in its own language (detected) and in the answer's (`language`, when
    given): a context may quote the answer's language, and a short one may be detected wrongly.
    Reading a context in one language more can only find more of its values. The question is
    read for values only: it never makes a claim's words "found" (a claim that restates the
    question as a statement is no more supported for it)."""

    def __init__(self, contexts: Sequence[str], language: str | None = None, question: str = ""):
        self.count = len(contexts)
        self.text = "\n".join(contexts)
        detected = [detect_language(ctx) for ctx in contexts]
        self.sentences, self.terms = [], []
        for ctx, lang in zip(contexts, detected):
            for sentence in split_sentences(ctx):
                self.sentences.append(sentence)
                self.terms.append(content_terms(sentence, lang))
        self.all_terms = set().union(*self.terms) if self.terms else set()
        languages = sorted(set(detected) | ({language} if language else set()))
        self.values = _Values(self.text, languages)
        self.flat = self.values.flat
        self.question = _Values(question, sorted({detect_language(question), *languages})
                                ) if question.strip() else None
        self.question_terms = content_terms(question) if question.strip() else set()
        tokens = [[stem(w) for w in words(s)] for s in self.sentences]
        self._bm25 = _BM25(tokens)

    def most_like(self, claim: str, n: int = EVIDENCE) -> list[str]:
        """The `n` context sentences most like the claim (BM25), in context order."""
        scores = self._bm25.scores([stem(w) for w in words(claim)])
        best = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:n]
        return [self.sentences[i] for i in sorted(best) if scores[i] > 0] or self.sentences[:n]

    def has(self, value: Value) -> bool:
        """Whether a context gives the value, or the question does: a value the user stated
        ("Windows 10", a name, the question quoted back) is given, not claimed. A quote whose
        content words are all the question's is the question restated ("How long must I keep
        tax records?" for "how long to keep tax record")."""
        if self.values.has(value):
            return True
        if self.question is None:
            return False
        if value.kind == "quote":
            terms = content_terms(value.text)
            if terms and terms <= self.question_terms:
                return True
        return self.question.has(value)


class _BM25:
    def __init__(self, docs: list[list[str]], k1: float = 1.2, b: float = 0.75):
        self.docs = [Counter(d) for d in docs]
        self.lengths = [len(d) for d in docs]
        self.avg = (sum(self.lengths) / len(docs)) if docs else 0.0
        df: Counter = Counter()
        for d in self.docs:
            df.update(d.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.k1, self.b = k1, b

    def scores(self, query: list[str]) -> list[float]:
        out = []
        for doc, length in zip(self.docs, self.lengths):
            s = 0.0
            for t in set(query):
                tf = doc.get(t)
                if tf:
                    norm = self.k1 * (1 - self.b + self.b * length / (self.avg or 1))
                    s += self.idf[t] * tf * (self.k1 + 1) / (tf + norm)
            out.append(s)
        return out


@dataclass
class ClaimCheck:
    """Code's reading of one claim: `verdict` "supported", "unsupported" or None (the LLM
    decides), why, and the context sentences it would be judged against."""
    claim: str
    verdict: str | None
    reason: str
    evidence: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def claim_values(claim: str, language: str) -> list[Value]:
    """What code checks in a claim. Numbers written as words count only with a unit ("five
    days"): "two films" is usually a count the answer made, not a figure it copied."""
    values = (numbers(claim, language) + months(claim, language) + quotes(claim)
              + names(claim, language))
    values += [v for v in spelled(claim, language) if v.unit]
    return values


def check_claim(claim: str, evidence: Evidence, language: str = "en") -> ClaimCheck:
    """Code's verdict on one claim (see the module docstring). A citation of a context by its
    position ("Passage 2 says ...") is neither a value nor a word of the claim (`citations`)."""
    said = _uncited(claim, evidence.count, language)
    values = claim_values(said, language)
    missing = [f"{v.text} {v.unit}" if v.kind == "number" and v.unit and v.unit not in v.text
               else v.text for v in values if not evidence.has(v)]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:3])
        return ClaimCheck(claim, "unsupported", f"{shown} appear(s) in no context",
                          evidence.most_like(claim), missing)
    if _verbatim(said, evidence):
        return ClaimCheck(claim, "supported", "stated verbatim in the contexts")
    terms = content_terms(said, language)
    if terms and _covered(terms, evidence):
        return ClaimCheck(claim, "supported",
                          "every word and value of the claim is in one passage of the contexts")
    return ClaimCheck(claim, None, "", evidence.most_like(claim))


def _verbatim(claim: str, evidence: Evidence) -> bool:
    flat = " ".join(words(claim))
    return len(flat) >= 12 and flat in evidence.flat


def _covered(terms: set[str], evidence: Evidence) -> bool:
    """Every content term (negations included) in one context sentence or two adjacent ones,
    and a negation in both the claim and that window or in neither. Terms are stems, so a
    negation counts here when its first five letters are one ("not", "never", "kein",
    "nichts" as "nicht"); "without" and "cannot" count only as content words."""
    claim_neg = bool(terms & NEGATIONS)
    for i, sent in enumerate(evidence.terms):
        for window in (sent, sent | (evidence.terms[i + 1] if i + 1 < len(evidence.terms)
                                     else set())):
            if terms <= window and claim_neg == bool(window & NEGATIONS):
                return True
    return False


def check_answer(answer: str, contexts: Sequence[str], prompts_dir: str | None = None,
                 question: str = "") -> list[ClaimCheck]:
    """Every claim of the answer with code's verdict, in answer order. The answer is read in
    its language, or its contexts' when it is too short to tell; `question`, the user's, gives
    values the answer may repeat without claiming them."""
    language = detect_language(answer, default="") or detect_language("\n".join(contexts))
    claims = [c for c in split_claims(answer, prompts_dir, language)  # "(Passage 1)" says nothing
              if content_terms(_uncited(c, len(contexts), language), language)]
    if not claims:
        return []
    evidence = Evidence(contexts, language, question)
    return [check_claim(c, evidence, language) for c in claims]
