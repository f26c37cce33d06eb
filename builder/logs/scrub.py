"""Privacy before storage: secrets and personal data are replaced in every string of a log
record before anything of it is written (the database, its WAL, the import's staging tables,
an LLM call, an export: none ever sees the raw value).

What is replaced, and by what (the rules: `secrets.py` and `personal_data.py` beside this):

- secrets, always: provider API keys and tokens -> `[API_KEY]`, AWS secret keys ->
  `[AWS_SECRET]`, JWTs -> `[JWT]`, bearer tokens -> `Bearer [TOKEN]`, private key blocks ->
  `[PRIVATE_KEY]`, `user:password@` in URLs -> `[CREDENTIALS]@`, values of secret-looking
  assignments (`password=...`, `"api_key": "..."`) -> `[SECRET]`;
- personal data, the kinds `[logs.scrub] builtins` lists (default: all four): e-mail
  addresses -> `[EMAIL]`, IBANs (mod-97 checksum) -> `[IBAN]`, card numbers (Luhn) ->
  `[CARD]`, phone numbers -> `[PHONE]`;
- every pattern of `[logs.scrub.patterns]` in golden.toml -> `[NAME]` (the key, upper-cased),
  after the built-in kinds.

A `Scrubber` counts replacements per kind (`counts`), for the import report. Ids that held
personal data are replaced by a keyed hash (`pseudonym`): the same raw id always gives the
same pseudonym in one database (re-imports stay idempotent) and the raw value cannot be read
back from it. Scrubbing is idempotent: a placeholder is never replaced again.
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
from builder.logs import personal_data
from builder.logs.personal_data import digit_kind, iban_span
from builder.logs.secrets import KINDS as SECRET_KINDS
from builder.logs.secrets import scrub_secrets

BUILTINS = personal_data.KINDS
MEMO = 20_000  # chunk texts whose scrubbed form is remembered (a few MB)

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}")
_DIGIT = re.compile(r"\d")
_NAMES = {
    "email": ("e-mail address", "e-mail addresses"), "phone": ("phone number", "phone numbers"),
    "card": ("card number", "card numbers"), "iban": ("IBAN", "IBANs"),
    "api_key": ("API key or token", "API keys or tokens"),
    "aws_secret": ("AWS secret key", "AWS secret keys"), "jwt": ("JWT", "JWTs"),
    "bearer": ("bearer token", "bearer tokens"), "private_key": ("private key", "private keys"),
    "url_credentials": ("password in a URL", "passwords in URLs"),
    "password": ("password or secret value", "password or secret values"),
}


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


class Scrubber:
    """Replaces personal data in strings (see the module docstring); not thread-safe (counts)."""

    def __init__(self, *, builtins: tuple[str, ...] | list[str] = BUILTINS,
                 patterns: Mapping[str, re.Pattern] | None = None, key: bytes = b""):
        self.email = "email" in builtins
        self.phone = "phone" in builtins
        self.card = "card" in builtins
        self.iban = "iban" in builtins
        self.patterns = [(name, pattern, f"[{name.upper()}]")
                         for name, pattern in (patterns or {}).items()]
        self.key = key
        self.counts: Counter[str] = Counter()
        self._memo: dict[str, tuple[str, tuple[tuple[str, int], ...]]] = {}

    def text(self, s: str) -> str:
        """`s` with every match replaced (counted)."""
        s = scrub_secrets(s, self._count)
        if self.email and "@" in s:
            s, n = personal_data.EMAIL.subn(personal_data.PLACEHOLDERS["email"], s)
            self._count("email", n)
        if _DIGIT.search(s):
            if self.iban:
                s = personal_data.IBAN_CANDIDATE.sub(self._iban, s)
            if self.phone or self.card:
                s = personal_data.DIGIT_RUN.sub(self._digits, s)
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

    def _iban(self, m: re.Match) -> str:
        found = m.group()
        end = iban_span(found)
        if end is None:
            return found
        self._count("iban", 1)
        return personal_data.PLACEHOLDERS["iban"] + found[end:]

    def _digits(self, m: re.Match) -> str:
        run = m.group()
        kind = digit_kind(run, m.string[max(0, m.start() - 40):m.start()], self.phone, self.card)
        if kind is None:
            return run
        self._count(kind, 1)
        return personal_data.PLACEHOLDERS[kind]

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
        parts = []
        for kind in (*BUILTINS, *SECRET_KINDS, *(n for n, _, _ in self.patterns)):
            n = self.counts.get(kind, 0)
            if n:
                one, many = _NAMES.get(kind, (f"{kind} match", f"{kind} matches"))
                parts.append(f"{n:,} {one if n == 1 else many}")
        return f"{', '.join(parts)} in {records:,} record{'s' if records != 1 else ''}"
