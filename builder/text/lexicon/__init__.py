"""The words golden needs to know per language, in one data file per language (`<code>.toml`).

Generation prefers structure to word lists: answers are spans chosen by code, round trips are
compared by code, retrieval is BM25. What cannot be read from structure is here, and only here:

- `stopwords`: function words (prose looks like prose; content terms are the rest);
- `filler`: the function words no claim's truth turns on, a narrower list ("all", "per",
  "without" are stopwords, not filler; "both", "same" are filler): what scoring drops from a
  claim's content words;
- `homographs`: those of the `stopwords` that are content words in another language ("son",
  "die", "come"): kept when the text's language is unknown (`unambiguous_stopwords`);
- `generic_headers`: a table's first header cell that names no entity ("| Benefit | Basic |
  Gold |"): the entities are the other header cells;
- `yes` / `no`: the first word of a yes/no answer (the first listed is how golden's own answers
  say it);
- `document_refs`: phrases that point at the text instead of naming a subject ("the text");
- `percent`: words for "%";
- `demonstratives`: determiners that point at what the reader was shown ("this benefit");
- `examples`: phrases that mark a worked example or a supposed case ("for example", "suppose");
- `numbers`: small numbers in words, every Latin-script language the same range: 0-20, the
  tens to 90, 100, a half ("five" -> 5, "soixante-dix" -> 70; read by `builder.text.values`
  and `builder.score.signals`);
- `months`: month names and abbreviations -> 1..12;
- `weekdays`: day names (English also their abbreviations and "weekend"): with `months`, the
  calendar words a capitalised phrase is not a name for (`builder.generate.statements`);
- `nouns_capitalised`: whether the language capitalises every noun (German): a capital letter
  then marks no name, so a single word needs another mark to be one
  (`builder.generate.statements`);
- `openers`: words that open a sentence or a clause and are never a name there ("Please
  review", "Use your code"; empty for scripts without capital letters);
- `units`: duration words -> second | minute | hour | day | workday | week | month | year;
- `negations`: words that negate what follows ("not", "sans", "不");
- `citations`: nouns an answer cites a context by, before its position ("passage 2", "来源 3");
- `contrast`: words that turn a sentence ("but", "however", "sin embargo");
- `framing`: words an answer frames its claims with ("the passage describes"), never content;
- `scales`: words after a number that multiply it by a power of ten ("million" -> 6);
- `dozen`: words for a dozen ("two dozen" = 24);
- `measures`: units of measure other than durations -> "kind:unit" ("miles" -> length:mile);
- `bounds_before` / `bounds_after`: words that bound a value, before or after it ("up to 5
  days", "25 jours maximum", "5日以内"): an answer span keeps them (`builder.text.values`);
- `ceilings` / `floors`: those of the bounds that set a most ("up to", "within") or a least ("at
  least", "or more"); an approximate one ("about") is neither.

Scoring reads `negations` to `measures` (`builder.score.signals`, `builder.score.refusal`): their
Chinese, Japanese and Korean entries are found inside words (those scripts put no space around
one), their Latin-script entries as whole words, as are the `bounds`.

Every supported language (`SUPPORTED`, the languages `builder.text.language` detects) supplies
every key: a test checks it, so "supported" means the same everywhere, and adding a language is
adding a file. Only `OPTIONAL` keys may be empty, where the file says why (Chinese, Japanese and
Korean have no `filler`: scoring reads them in character bigrams, not words). Loaded once per
language and cached; an unknown code falls back to English.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

SUPPORTED = ("en", "es", "fr", "de", "pt", "it", "nl", "zh", "ja", "ko")
FALLBACK = "en"
KEYS = ("stopwords", "filler", "homographs", "generic_headers", "yes", "no", "document_refs",
        "percent", "examples", "demonstratives", "numbers", "months", "weekdays",
        "nouns_capitalised", "openers", "units", "negations", "citations", "contrast", "framing",
        "scales", "dozen", "measures", "bounds_before", "bounds_after", "ceilings", "floors")
OPTIONAL = ("filler", "homographs", "openers")
DURATION_UNITS = ("second", "minute", "hour", "day", "workday", "week", "month", "year")
MEASURE_KINDS = ("length", "mass", "money", "temperature")


@dataclass(frozen=True)
class Lexicon:
    code: str
    name: str
    stopwords: frozenset[str]
    filler: frozenset[str]
    homographs: frozenset[str]
    generic_headers: frozenset[str]
    yes: frozenset[str]
    no: frozenset[str]
    document_refs: tuple[str, ...]
    percent: tuple[str, ...]
    examples: tuple[str, ...]
    demonstratives: frozenset[str]
    numbers: dict[str, float]
    months: dict[str, int]
    weekdays: frozenset[str]
    nouns_capitalised: bool
    openers: frozenset[str]
    units: dict[str, str]
    negations: frozenset[str]
    citations: frozenset[str]
    contrast: tuple[str, ...]
    framing: frozenset[str]
    scales: dict[str, int]
    dozen: frozenset[str]
    measures: dict[str, tuple[str, str]]  # word -> (kind, unit)
    bounds_before: tuple[str, ...]
    bounds_after: tuple[str, ...]
    ceilings: frozenset[str]
    floors: frozenset[str]
    answer_no: str  # the first of `no`: how a composed answer says no
    answer_yes: str  # the first of `yes`: how it says yes


def _base(code: str | None) -> str:
    code = (code or FALLBACK).split("-")[0].lower()
    return code if code in SUPPORTED else FALLBACK


@lru_cache(maxsize=None)
def lexicon(code: str | None) -> Lexicon:
    """The lexicon of `code` (an ISO 639-1 code, "pt-BR" reads as "pt"); English when golden
    does not support the language."""
    code = _base(code)
    raw = tomllib.loads(resources.files(__package__).joinpath(f"{code}.toml")
                        .read_text(encoding="utf-8"))
    return Lexicon(
        code=code, name=raw["name"],
        stopwords=frozenset(raw["stopwords"].casefold().split()),
        filler=frozenset(raw["filler"].casefold().split()),
        homographs=frozenset(raw["homographs"].casefold().split()),
        generic_headers=frozenset(p.casefold() for p in raw["generic_headers"]),
        yes=frozenset(raw["yes"].casefold().split()),
        no=frozenset(raw["no"].casefold().split()),
        document_refs=tuple(p.casefold() for p in raw["document_refs"]),
        percent=tuple(p.casefold() for p in raw["percent"]),
        examples=tuple(p.casefold() for p in raw["examples"]),
        demonstratives=frozenset(p.casefold() for p in raw["demonstratives"]),
        numbers={k.casefold(): float(v) for k, v in raw["numbers"].items()},
        months={k.casefold(): int(v) for k, v in raw["months"].items()},
        weekdays=frozenset(raw["weekdays"].casefold().split()),
        nouns_capitalised=bool(raw["nouns_capitalised"]),
        openers=frozenset(raw["openers"].casefold().split()),
        units={k.casefold(): v for k, v in raw["units"].items()},
        negations=frozenset(raw["negations"].casefold().split()),
        citations=frozenset(raw["citations"].casefold().split()),
        contrast=tuple(p.casefold() for p in raw["contrast"]),
        framing=frozenset(raw["framing"].casefold().split()),
        scales={k.casefold(): int(v) for k, v in raw["scales"].items()},
        dozen=frozenset(raw["dozen"].casefold().split()),
        measures={k.casefold(): tuple(v.split(":", 1)) for k, v in raw["measures"].items()},
        # longest first, so "up to a maximum of" wins over "up to"
        bounds_before=tuple(sorted((p.casefold() for p in raw["bounds_before"]), key=len, reverse=True)),
        bounds_after=tuple(sorted((p.casefold() for p in raw["bounds_after"]), key=len, reverse=True)),
        ceilings=frozenset(p.casefold() for p in raw["ceilings"]),
        floors=frozenset(p.casefold() for p in raw["floors"]),
        answer_no=raw["no"].split()[0],
        answer_yes=raw["yes"].split()[0],
    )


@lru_cache(maxsize=1)
def all_stopwords() -> frozenset[str]:
    """Function words of every supported language, for text whose language is unknown or mixed
    where keeping a content word matters less than dropping every function word (retrieval
    terms, where a counted noun ends); key terms use `unambiguous_stopwords`."""
    return every_language("stopwords")


@lru_cache(maxsize=1)
def unambiguous_stopwords() -> frozenset[str]:
    """Function words to drop from text whose language is not known (a question and its
    passage, whatever they are written in): every language's `stopwords` but the `homographs`.
    A word that is a function word in one language and a content word in another ("son", "die",
    "come", "dos") is kept, since dropping it would lose an English text's subject; English
    function words are dropped everywhere. (`all_stopwords` counts the homographs in.)"""
    return all_stopwords() - every_language("homographs")


@lru_cache(maxsize=1)
def all_filler() -> frozenset[str]:
    """Every language's `filler`: the words scoring drops from a claim's content words in text of
    any language (a claim and its contexts may be written in two)."""
    return every_language("filler")


@lru_cache(maxsize=None)
def every_language(key: str) -> frozenset[str]:
    """The words of one set-valued key (`stopwords`, `generic_headers`, ...) of every supported
    language: for text whose language is not known."""
    return frozenset().union(*(getattr(lexicon(code), key) for code in SUPPORTED))


def raw_keys(code: str) -> set[str]:
    """The keys the data file of `code` defines (for the completeness test)."""
    return set(tomllib.loads(resources.files(__package__).joinpath(f"{code}.toml")
                             .read_text(encoding="utf-8")))
