"""Privacy before storage: personal data is replaced in every string of a log record before
anything of it is written (the database, its WAL, the import's staging tables, an LLM call, an
export: none ever sees the raw value).

What is replaced, and by what:

- e-mail addresses -> `[EMAIL]`;
- card-like numbers -> `[CARD]`: 13-19 digits (spaces or dashes between groups allowed) that
  pass the Luhn check, and any four groups of four digits, spaced or dashed, whether or not they pass it;
- phone numbers -> `[PHONE]`, 8-15 digits written as phone numbers are: after a `+`
  ("+44 20 7946 0958", "+15551234567"); after a bracketed area code ("(020) 7946 0958");
  a national number starting with 0, in groups ("0151 496 0000", "06 12 34 56 78"); or
  555-123-4567 (also with dots or spaces). Not phones: dates (2024-01-15, 15.01.2024), numbers
  in groups of three ("123 456 789"), lists of years, times, plain digit runs without a `+`
  (order numbers, ids);
- every pattern of `[logs.scrub.patterns]` in golden.toml -> `[NAME]` (the key, upper-cased).

`[logs.scrub] builtins = ["email", "phone", "card"]` (the default) chooses the built-in kinds;
patterns run after them. A `Scrubber` counts replacements per kind (`counts`), for the import
report. Ids that held personal data are
replaced by a keyed hash (`pseudonym`): the same raw id always gives the same pseudonym in one
database (re-imports stay idempotent) and the raw value cannot be read back from it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from builder.config import ConfigFile, config_section, find_key_line
from builder.errors import InputError

BUILTINS = ("email", "phone", "card")
MEMO = 20_000  # chunk texts whose scrubbed form is remembered (a few MB)

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}")
# A run of digits with the separators numbers are written with; classified in `_digits`.
_DIGIT_RUN = re.compile(r"(?<![\w+])(?:\+\s?)?(?:\(\d{1,5}\)\s?)?\d"
                        r"(?:[ .\-]?(?:\(\d{1,5}\)[ .\-]?)?\d)*(?!\w)")
_CARD_GROUPS = re.compile(r"\d{4}([ -])\d{4}\1\d{4}\1\d{4}")
_DATE = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}")
_NANP = re.compile(r"\d{3}([ .-])\d{3}\1\d{4}")
_SEPARATOR = re.compile(r"[ .-]")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}")
_DIGIT = re.compile(r"\d")


class ScrubSettings(BaseModel):
    """`[logs.scrub]` in golden.toml."""

    model_config = ConfigDict(extra="forbid")

    builtins: list[str] = Field(default_factory=lambda: list(BUILTINS))
    patterns: dict[str, str] = Field(default_factory=dict)

    @field_validator("builtins")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        unknown = [v for v in value if v not in BUILTINS]
        if unknown:
            raise ValueError(f"unknown built-in {unknown[0]!r} (known: {', '.join(BUILTINS)})")
        return value


def load_scrubber(config: ConfigFile, key: bytes) -> "Scrubber":
    """The scrubber golden.toml asks for; a bad pattern name or regular expression is an
    InputError naming the file and line."""
    settings = config_section(config, ("logs", "scrub"), ScrubSettings)
    patterns: dict[str, re.Pattern] = {}
    for name, regex in settings.patterns.items():
        line = find_key_line(config.text, ("logs", "scrub", "patterns", name))
        if not _NAME.fullmatch(name):
            raise InputError(f"logs.scrub.patterns.{name}: a pattern name is a letter then up "
                             "to 39 letters, digits or _", path=config.path, line=line)
        try:
            compiled = re.compile(regex)
        except re.error as exc:
            raise InputError(f"logs.scrub.patterns.{name}: invalid regular expression ({exc})",
                             path=config.path, line=line) from None
        if compiled.search(""):
            raise InputError(f"logs.scrub.patterns.{name}: the pattern matches the empty "
                             "string, so it would match everywhere", path=config.path, line=line)
        patterns[name] = compiled
    return Scrubber(builtins=settings.builtins, patterns=patterns, key=key)


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _digit_kind(run: str, phones: bool, cards: bool) -> str | None:
    """'card', 'phone' or None for one digit run (see the module docstring)."""
    digits = "".join(ch for ch in run if ch.isdigit())
    n = len(digits)
    if cards and 13 <= n <= 19 and not run.startswith(("+", "(")):
        if luhn_valid(digits) or _CARD_GROUPS.fullmatch(run):
            return "card"
    if not phones or n < 8 or n > 15:
        return None
    if run.startswith(("+", "(")):
        return "phone"
    if _DATE.fullmatch(run):
        return None
    if run.startswith("0") and n >= 9 and _SEPARATOR.search(run):
        return "phone"
    return "phone" if _NANP.fullmatch(run) else None


class Scrubber:
    """Replaces personal data in strings (see the module docstring); not thread-safe (counts)."""

    def __init__(self, *, builtins: tuple[str, ...] | list[str] = BUILTINS,
                 patterns: Mapping[str, re.Pattern] | None = None, key: bytes = b""):
        self.email = "email" in builtins
        self.phone = "phone" in builtins
        self.card = "card" in builtins
        self.patterns = [(name, pattern, f"[{name.upper()}]")
                         for name, pattern in (patterns or {}).items()]
        self.key = key
        self.counts: Counter[str] = Counter()
        self._memo: dict[str, tuple[str, tuple[tuple[str, int], ...]]] = {}

    def text(self, s: str) -> str:
        """`s` with every match replaced (counted)."""
        if self.email and "@" in s:
            s, n = _EMAIL.subn("[EMAIL]", s)
            self._count("email", n)
        if (self.phone or self.card) and _DIGIT.search(s):
            s = _DIGIT_RUN.sub(self._digits, s)
        for name, pattern, placeholder in self.patterns:
            s, n = pattern.subn(placeholder, s)
            self._count(name, n)
        return s

    def repeated(self, s: str) -> str:
        """`text(s)` for strings that recur across records (retrieved chunk texts): the result
        is remembered (up to MEMO entries) and its replacements counted again each time."""
        hit = self._memo.get(s)
        if hit is None:
            before = dict(self.counts)
            clean = self.text(s)
            delta = tuple((k, v - before.get(k, 0)) for k, v in self.counts.items()
                          if v != before.get(k, 0))
            if len(self._memo) >= MEMO:
                self._memo.clear()
            self._memo[s] = (clean, delta)
            return clean
        clean, delta = hit
        for kind, n in delta:
            self.counts[kind] += n
        return clean

    def _digits(self, m: re.Match) -> str:
        run = m.group()
        kind = _digit_kind(run, self.phone, self.card)
        if kind is None:
            return run
        self._count(kind, 1)
        return "[CARD]" if kind == "card" else "[PHONE]"

    def _count(self, kind: str, n: int) -> None:
        if n:
            self.counts[kind] += n

    @property
    def total(self) -> int:
        """Replacements made so far (callers compare it before and after a record)."""
        return sum(self.counts.values())

    def value(self, value: Any) -> Any:
        """Every string inside a JSON-like value (keys of objects too) scrubbed."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        return value

    def pseudonym(self, raw: str) -> str:
        """An id that held personal data: its scrubbed text plus a keyed hash of the raw id, so
        two ids that differ only in what was scrubbed stay distinct; the raw id is gone."""
        clean = self.text(raw)
        if clean == raw:
            return raw
        digest = hmac.new(self.key, raw.encode("utf-8"), hashlib.sha256).hexdigest()[:16]
        return f"{clean}~{digest}"

    def summary(self, records: int) -> str:
        """'3 e-mail addresses, 1 phone number, ... in 4 records' or 'nothing'."""
        if not self.counts:
            return "nothing"
        names = {"email": ("e-mail address", "e-mail addresses"),
                 "phone": ("phone number", "phone numbers"),
                 "card": ("card number", "card numbers")}
        parts = []
        for kind in (*BUILTINS, *(n for n, _, _ in self.patterns)):
            n = self.counts.get(kind, 0)
            if n:
                one, many = names.get(kind, (f"{kind} match", f"{kind} matches"))
                parts.append(f"{n:,} {one if n == 1 else many}")
        return f"{', '.join(parts)} in {records:,} record{'s' if records != 1 else ''}"
