"""Faithfulness signals code can settle before any LLM verdict: the answer is cut into claims
(sentences), and each claim is checked against the contexts by what a small model does not
need to judge.

Per claim, in this order:

1. **Checkable values** -- numbers (digits, "2 000" / "2,000" / "2.000", "1.5" / "1,5",
   "5 million"), small numbers written as words ("five", "cinco", "fünf", ...: 2-20, tens,
   hundred), month names (en, es, fr, de, pt, it, nl; numeric and CJK dates give their month
   too), quoted strings, and names and identifiers (a capitalised word inside a sentence,
   CamelCase, snake_case, ALLCAPS, words with digits such as "GPT-4"; not in German, where
   every noun is capitalised, nor in CJK text). Every form is normalised, so "5" / "five",
   "2 000" / "2000" and "March 5, 2021" / "2021-03-05" / "5 de marzo de 2021" meet. A value
   found in no context makes the claim **unsupported** (decided by code, the value named in the
   reason). A value with a unit ("5 km") whose number the contexts give only with another unit
   of the same kind ("5 miles") is unsupported too.
2. **Found as written** -- when every checkable value is found and the claim's words appear
   verbatim in a context, or every content word (stopwords dropped, a crude stem) including
   its negations appears in one context sentence or two adjacent ones, the claim is
   **supported** (decided by code).
3. Otherwise the claim is **undecided**: the LLM judges it alone, against the `EVIDENCE`
   context sentences most like it (BM25 over the contexts' sentences), not the whole context.

Claims are the answer's sentences with a content word; a sentence that says the contexts do
not give something (`refusal.check_refusal`'s phrases) is not a claim.

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

from builder.text.language import HAN, HANGUL, KANA, detect_language
from builder.text.sentences import split_sentences

SIGNALS_VERSION = "2"  # bumped when a rule changes: part of the judge's calibration key
                       # 2: sentences by builder.text.sentences (one rule with generation);
                       # Italian "tre" is 3, not 2
EVIDENCE = 3           # context sentences a claim is judged against
NEGATIONS = frozenset("""not no never none nor cannot without n't kein keine keinen nicht nie
    ne pas jamais aucun aucune sans nunca ningún ninguna ningun sin nada não nunca nenhum
    nenhuma sem non mai nessun nessuna senza niet geen nooit zonder""".split())

_CJK_CLASS = HAN + KANA + HANGUL
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_WORD = re.compile(rf"[{_CJK_CLASS}]+|[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_CJK_RUN = re.compile(rf"^[{_CJK_CLASS}]+$")

# ----------------------------------------------------------------- numbers

_SCALES = {"thousand": 3, "mil": 3, "tausend": 3, "mille": 3, "duizend": 3, "k": 3,
           "million": 6, "millions": 6, "millón": 6, "millones": 6, "millon": 6, "milhão": 6,
           "milhões": 6, "millionen": 6, "milione": 6, "milioni": 6, "miljoen": 6, "mio": 6,
           "m": 6, "mn": 6,
           "billion": 9, "billions": 9, "bn": 9, "milliard": 9, "milliarde": 9,
           "milliarden": 9, "miliardo": 9, "miliardi": 9, "miljard": 9, "bilhão": 9,
           "bilhões": 9, "mrd": 9, "b": 9, "trillion": 12}
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.,])(\d{1,3}(?:(?:[ \u00a0\u202f\u2009,.'])\d{3})+|\d+)((?:[.,]\d+)?)"
    r"(?:\s*(%|percent\b|per cent\b|por ciento\b|pour cent\b|prozent\b|por cento\b|per cento\b"
    r"|procent\b))?"
    r"(?:\s*(" + "|".join(sorted(_SCALES, key=len, reverse=True)) + r")\b)?", re.IGNORECASE)
_SPELLED: dict[str, int] = {}
for _n, _words in (
        (2, "two dos dois duas deux zwei twee"), (3, "three tres três trois drei tre drie"),
        (4, "four cuatro quatro quatre vier quattro"), (5, "five cinco cinq fünf cinque vijf"),
        (6, "six seis sechs zes"), (7, "seven siete sete sieben sette zeven"),
        (8, "eight ocho oito huit acht otto"), (9, "nine nueve nove neuf neun negen"),
        (10, "ten diez dix zehn dieci tien"), (11, "eleven undici"),
        (12, "twelve doce doze douze zwölf dodici twaalf dozen"), (13, "thirteen trece treize"),
        (14, "fourteen catorce quatorze"), (15, "fifteen quince quinze fünfzehn quindici"),
        (16, "sixteen dieciséis seize"), (17, "seventeen diecisiete"), (18, "eighteen dieciocho"),
        (19, "nineteen diecinueve"), (20, "twenty veinte vinte vingt zwanzig venti twintig"),
        (30, "thirty treinta trinta trente dreißig trenta dertig"),
        (40, "forty cuarenta quarenta quarante vierzig quaranta veertig"),
        (50, "fifty cincuenta cinquenta cinquante fünfzig cinquanta vijftig"),
        (60, "sixty sesenta sessenta soixante sechzig sessanta zestig"),
        (70, "seventy setenta soixante-dix siebzig settanta zeventig"),
        (80, "eighty ochenta oitenta quatre-vingts achtzig ottanta tachtig"),
        (90, "ninety noventa quatre-vingt-dix neunzig novanta negentig"),
        (100, "hundred cien cem cent hundert cento honderd"),
        (1000, "thousand")):
    _SPELLED.update(dict.fromkeys(_words.split(), _n))
_SPELLED_RE = re.compile(r"(?<![\w-])(" + "|".join(sorted(map(re.escape, _SPELLED), key=len,
                                                             reverse=True)) + r")(?![\w-])",
                         re.IGNORECASE)
_SPELLED_WITH_ONE = {**_SPELLED, **dict.fromkeys("one uno una um uma un une ein eine eins één".split(), 1)}
_SPELLED_ONE_RE = re.compile(r"(?<![\w-])(" + "|".join(sorted(map(re.escape, _SPELLED_WITH_ONE),
                             key=len, reverse=True)) + r")(?![\w-])", re.IGNORECASE)
_DOZENS = re.compile(r"\b(two|three|four|a few|several)\s+dozen\b", re.IGNORECASE)


def _values(whole: str, frac: str, scale: str | None) -> set[str]:
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
        exp = _SCALES.get((scale or "").lower())
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
    """One checkable value of a claim: what was written, and the canonical forms it may take."""
    text: str
    forms: frozenset[str]
    kind: str  # "number", "month", "quote", "name"
    unit: str | None = None


def numbers(text: str) -> list[Value]:
    out = []
    for m in _NUMBER.finditer(text):
        whole, frac, percent, scale = m.group(1), m.group(2), m.group(3), m.group(4)
        if scale and scale.lower() in ("m", "b", "k") and not _money_before(text, m.start()):
            scale = None  # "5 m" is five metres, "5 b" a grade: a scale only after a currency
        forms = _values(whole, frac, scale)
        unit = "%" if percent else _unit_after(text, m.end()) or _currency_before(text, m.start())
        out.append(Value(m.group(0).strip(), frozenset(forms), "number", unit))
    for m in _DOZENS.finditer(text):
        n = {"two": 24, "three": 36, "four": 48}.get(m.group(1).lower())
        if n:
            out.append(Value(m.group(0), frozenset({str(n)}), "number"))
    return out


def spelled(text: str, *, one: bool = False) -> list[Value]:
    """Numbers written as words, with the unit after them; `one` adds "one" and its
    counterparts (read in contexts only: as an article it is everywhere)."""
    table = _SPELLED_WITH_ONE if one else _SPELLED
    pattern = _SPELLED_ONE_RE if one else _SPELLED_RE
    return [Value(m.group(1), frozenset({str(table[m.group(1).lower()])}), "number",
                  _unit_after(text, m.end()))
            for m in pattern.finditer(text)]


# ----------------------------------------------------------------- units

_UNITS = {  # alias -> (kind, canonical unit)
    **dict.fromkeys("km kms kilometre kilometres kilometer kilometers kilómetro kilómetros "
                    "kilomètre kilomètres kilometro kilometri".split(), ("length", "km")),
    **dict.fromkeys("mile miles milla millas".split(), ("length", "mile")),
    **dict.fromkeys("metre metres meter meters metro metros mètre mètres".split(),
                    ("length", "m")),
    **dict.fromkeys("cm centimetre centimetres centimeter centimeters".split(), ("length", "cm")),
    **dict.fromkeys("ft foot feet pie pies".split(), ("length", "ft")),
    **dict.fromkeys("inch inches in.".split(), ("length", "in")),
    **dict.fromkeys("kg kgs kilogram kilograms kilogramme kilogrammes kilo kilos".split(),
                    ("mass", "kg")),
    **dict.fromkeys("lb lbs pound pounds libra libras".split(), ("mass", "lb")),
    **dict.fromkeys("g gram grams gramme grammes gramo gramos".split(), ("mass", "g")),
    **dict.fromkeys("t ton tons tonne tonnes tonelada toneladas".split(), ("mass", "t")),
    **dict.fromkeys("second seconds sec secs segundo segundos seconde secondes sekunde "
                    "sekunden".split(), ("time", "s")),
    **dict.fromkeys("minute minutes min mins minuto minutos minuten".split(), ("time", "min")),
    **dict.fromkeys("hour hours hr hrs h hora horas heure heures stunde stunden ora ore uur"
                    .split(), ("time", "h")),
    **dict.fromkeys("day days día días dia dias jour jours tag tage tagen giorno giorni dag "
                    "dagen".split(), ("time", "day")),
    **dict.fromkeys("week weeks semana semanas semaine semaines woche wochen settimana "
                    "settimane".split(), ("time", "week")),
    **dict.fromkeys("month months mes meses mois monat monate mese mesi maand maanden".split(),
                    ("time", "month")),
    **dict.fromkeys("year years año años ano anos an ans jahr jahre jahren anno anni jaar jaren"
                    .split(), ("time", "year")),
    **dict.fromkeys("$ usd dollar dollars dólar dólares".split(), ("money", "usd")),
    **dict.fromkeys("€ eur euro euros".split(), ("money", "eur")),
    **dict.fromkeys("£ gbp pound-sterling".split(), ("money", "gbp")),
    **dict.fromkeys("¥ jpy yen".split(), ("money", "jpy")),
    **dict.fromkeys("°c celsius".split(), ("temperature", "c")),
    **dict.fromkeys("°f fahrenheit".split(), ("temperature", "f")),
}
_UNIT_AFTER = re.compile(r"\s*(°[cf]|[$€£¥]|[^\W\d_]+\.?)", re.IGNORECASE)
_CURRENCY_BEFORE = re.compile(r"([$€£¥]|usd|eur|gbp)\s*$", re.IGNORECASE)


def _unit_after(text: str, end: int) -> str | None:
    m = _UNIT_AFTER.match(text, end)
    if not m:
        return None
    word = m.group(1).lower()
    return word if word in _UNITS else word.rstrip(".") if word.rstrip(".") in _UNITS else None


def _currency_before(text: str, start: int) -> str | None:
    m = _CURRENCY_BEFORE.search(text[max(0, start - 5):start])
    return m.group(1).lower() if m else None


def _money_before(text: str, start: int) -> bool:
    return _currency_before(text, start) is not None


# ----------------------------------------------------------------- months

_MONTH_NAMES = {
    1: "january jan enero janvier januar jänner gennaio janeiro januari",
    2: "february feb febrero février fevrier februar febbraio fevereiro februari",
    3: "march mar marzo mars märz marz março maart",
    4: "april apr abril avril aprile",
    5: "may mayo mai maggio maio mei",
    6: "june jun junio juin juni giugno junho",
    7: "july jul julio juillet juli luglio julho",
    8: "august aug agosto août aout augustus",
    9: "september sep sept septiembre setiembre septembre settembre setembro",
    10: "october oct octubre octobre oktober ottobre outubro",
    11: "november nov noviembre novembre novembre novembro",
    12: "december dec diciembre décembre decembre dezember dicembre dezembro",
}
_MONTH_OF = {w: n for n, words in _MONTH_NAMES.items() for w in words.split()}
# Words that are month names in one language and common words in another: only with a day
# or year beside them ("May 2021", "5 mar 2020"), never alone.
_AMBIGUOUS_MONTHS = frozenset("may mar mai an jun jul ago sept dec".split())
_MONTH_RE = re.compile(r"(?<![\w])(" + "|".join(sorted(map(re.escape, _MONTH_OF), key=len,
                                                          reverse=True)) + r")\.?(?![\w])",
                       re.IGNORECASE)
_NUMERIC_DATE = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b"
                           r"|\b(\d{1,2})[-/.](\d{1,2})[-/.](\d{2,4})\b")
_CJK_DATE = re.compile(r"(\d{1,4})\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*日)?")


def months(text: str, *, loose: bool = False) -> list[Value]:
    """Months named in the text (as "month:N"); with `loose`, also the months a numeric date
    may mean (both day/month orders), which is how contexts are read."""
    out = []
    for m in _MONTH_RE.finditer(text):
        word = m.group(1).lower()
        if word in _AMBIGUOUS_MONTHS or (len(word) <= 3 and m.group(1)[0].islower()):
            around = text[max(0, m.start() - 6):m.end() + 7]
            if not re.search(r"\d", around):
                continue
        if word == "may" and m.group(1) == "may":
            continue  # the English modal verb
        out.append(Value(m.group(0), frozenset({f"month:{_MONTH_OF[word]}"}), "month"))
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
        if _numeral_or_month(word) or word.lower() in seen or word.isupper() and len(word) <= 2:
            continue
        seen.add(word.lower())
        out.append(Value(word, frozenset({word.lower()}), "name"))
    return out


def _numeral_or_month(word: str) -> bool:
    low = word.lower()
    return low in _SPELLED or low in _MONTH_OF or low in ("i",)


# ----------------------------------------------------------------- words

STOPWORDS = frozenset("""a an the and or but if then than of to in on at by for with from as
    is are was were be been being it its this that these those there here what which who whom
    whose when where why how do does did done has have had can could may might must shall
    should will would also only just more most less very much many one you your we our they
    their he she his her them us i me my also such so into onto over under about after before
    within between some any each every other another both either same own s t
    de del la las el los un una unos unas y o u e que con por para en al lo se su sus es son
    fue era como más pero ya
    le les des du une et ou avec dans sur au aux ce cette ces est sont qui
    il lo gli della delle dei degli nel nella che è sono
    der die das dem den des ein eine einer eines einem einen und oder für von zu im ist sind
    da do das os as em na no um uma com são
    het een en van op met voor zijn dat""".split())
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


# Words an answer frames its claims with ("The passage describes ...", "According to the
# text"): about the contexts, not facts from them, so never counted as new content.
FRAMING = frozenset(stem(w) for w in """passage passages text texts context contexts document
    documents article source sources provided given mention mentions mentioned describe
    describes described discuss discusses discussed state states stated according information
    details detail summary summarize based note noted notes however additionally furthermore
    overall includes including include also well known refer refers referred two three several
    various different unrelated distinct pieces piece topics topic entities entity individuals
    contiene menciona describe según texto pasaje documento información""".split())

def content_terms(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in STOPWORDS or w in NEGATIONS} - FRAMING


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return text.replace("’", "'").replace("‘", "'")


# ----------------------------------------------------------------- claims and contexts

def split_claims(answer: str, prompts_dir: str | None = None) -> list[str]:
    """The answer's claim-bearing sentences, in order (list items are sentences too)."""
    from builder.score.refusal import check_refusal

    pieces = []
    for line in answer.splitlines():
        line = _LIST_MARK.sub("", line).strip()
        pieces += split_sentences(line)
    claims = []
    for sentence in pieces:
        check = check_refusal(sentence, prompts_dir)
        if check.verdict == "partial":
            claims += check.claim_clauses
        elif not check.refusal_clauses and content_terms(sentence):
            claims.append(sentence)  # short ones too: "Blue." answers a question
    return claims


def context_sentences(contexts: Sequence[str]) -> list[str]:
    return [s for ctx in contexts for s in split_sentences(ctx)]


class Evidence:
    """The contexts, read once: their normalised text, their values, their sentences with a
    BM25 index, so every claim of an answer is checked against the same reading."""

    def __init__(self, contexts: Sequence[str]):
        self.text = "\n".join(contexts)
        self.norm = _norm(self.text)
        self.flat = " ".join(words(self.text))
        self.sentences = context_sentences(contexts)
        self.terms = [content_terms(s) for s in self.sentences]
        self.all_terms = set().union(*self.terms) if self.terms else set()
        self.word_set = set(words(self.text))
        found = numbers(self.text) + spelled(self.text, one=True)
        self.numbers = {f for v in found for f in v.forms}
        self.units: dict[str, set[str]] = {}
        for v in found:
            if v.unit:
                for f in v.forms:
                    self.units.setdefault(f, set()).add(_unit_kind(v.unit))
        self.months = {f for v in months(self.text, loose=True) for f in v.forms}
        tokens = [[stem(w) for w in words(s)] for s in self.sentences]
        self._bm25 = _BM25(tokens)

    def most_like(self, claim: str, n: int = EVIDENCE) -> list[str]:
        """The `n` context sentences most like the claim (BM25), in context order."""
        scores = self._bm25.scores([stem(w) for w in words(claim)])
        best = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:n]
        return [self.sentences[i] for i in sorted(best) if scores[i] > 0] or self.sentences[:n]

    def has(self, value: Value) -> bool:
        if value.kind == "number":
            if not value.forms & self.numbers:
                return False
            if value.unit:  # "5 km" against contexts that say "5 miles" only
                kind, unit = _UNITS.get(value.unit, (None, None))
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


def _unit_kind(unit: str) -> tuple[str, str]:
    return _UNITS.get(unit, ("?", unit))


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
    values = numbers(claim) + months(claim) + quotes(claim) + names(claim, language)
    values += [v for v in spelled(claim) if v.unit]
    return values


def check_claim(claim: str, evidence: Evidence, language: str = "en") -> ClaimCheck:
    """Code's verdict on one claim (see the module docstring)."""
    values = claim_values(claim, language)
    missing = [f"{v.text} {v.unit}" if v.kind == "number" and v.unit and v.unit not in v.text
               else v.text for v in values if not evidence.has(v)]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:3])
        return ClaimCheck(claim, "unsupported", f"{shown} appear(s) in no context",
                          evidence.most_like(claim), missing)
    if _verbatim(claim, evidence):
        return ClaimCheck(claim, "supported", "stated verbatim in the contexts")
    terms = content_terms(claim)
    if terms and _covered(terms, evidence):
        return ClaimCheck(claim, "supported",
                          "every word and value of the claim is in one passage of the contexts")
    return ClaimCheck(claim, None, "", evidence.most_like(claim))


def _verbatim(claim: str, evidence: Evidence) -> bool:
    flat = " ".join(words(claim))
    return len(flat) >= 12 and flat in evidence.flat


def _covered(terms: set[str], evidence: Evidence) -> bool:
    """Every content term (negations included) in one context sentence or two adjacent ones,
    and no negation in that window the claim does not have (or the reverse)."""
    claim_neg = bool(terms & NEGATIONS)
    for i, sent in enumerate(evidence.terms):
        for window in (sent, sent | (evidence.terms[i + 1] if i + 1 < len(evidence.terms)
                                     else set())):
            if terms <= window and claim_neg == bool(window & NEGATIONS):
                return True
    return False


def check_answer(answer: str, contexts: Sequence[str], prompts_dir: str | None = None
                 ) -> list[ClaimCheck]:
    """Every claim of the answer with code's verdict, in answer order."""
    claims = split_claims(answer, prompts_dir)
    if not claims:
        return []
    evidence = Evidence(contexts)
    language = detect_language(answer)
    return [check_claim(c, evidence, language) for c in claims]
