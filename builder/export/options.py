"""What an export is asked to do: `ExportOptions`, and parsers for the command-line spellings.

Every check that can fail on user input lives here and raises `InputError` (exit 2) before a
byte is written, so the CLI and the demo (which builds `ExportOptions` directly) get the same
messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path

from pydantic import BaseModel, ConfigDict, field_validator

from builder.errors import InputError
from builder.export.formats import FORMATS
from builder.vocabulary import DIFFICULTIES, ITEM_TYPES, STATUSES

_SPLIT_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_NUMBER = re.compile(r"^\d+(\.\d+)?$|^\.\d+$")


class ExportOptions(BaseModel):
    """One export. Proportions and weights are kept as decimal strings so rounding is exact."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    out: Path
    format: str = "native"
    statuses: tuple[str, ...] = ("accepted",)
    types: tuple[str, ...] | None = None
    split: dict[str, str] | None = None          # name -> proportion, e.g. {"train": "0.6"}
    balance: dict[str, str] | None = None        # difficulty -> weight, e.g. {"easy": "40"}
    seed: int = 0
    dataset_version: str | None = None           # default: a fingerprint of the selection

    @field_validator("format")
    @classmethod
    def _known_format(cls, v: str) -> str:
        check_format(v)
        return v

    @field_validator("split", "balance", mode="before")
    @classmethod
    def _numbers_as_text(cls, v):
        if isinstance(v, dict):
            return {str(k): repr(w) if isinstance(w, float) else str(w) for k, w in v.items()}
        return v

    @field_validator("split")
    @classmethod
    def _split_sums_to_one(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        if v is not None:
            check_split(v)
        return v

    @field_validator("balance")
    @classmethod
    def _balance_weights(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        if v is not None:
            check_balance(v)
        return v

    @field_validator("statuses")
    @classmethod
    def _known_statuses(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return parse_statuses(v)

    @field_validator("types")
    @classmethod
    def _known_types(cls, v: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return None if v is None else parse_types(v)


def split_list(values: Iterable[str] | str | None) -> list[str]:
    """Repeatable options that also take comma lists: ('a,b', 'c') -> ['a', 'b', 'c']."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for value in values:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return out


def _dedup(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def parse_statuses(values: Iterable[str] | str | None) -> tuple[str, ...]:
    items = split_list(values)
    if not items:
        raise InputError("--status needs at least one of " + ", ".join(STATUSES))
    for s in items:
        if s not in STATUSES:
            raise InputError(f"--status: unknown status {s!r}; expected one of "
                             + ", ".join(STATUSES))
    return _dedup(items)


def parse_types(values: Iterable[str] | str | None) -> tuple[str, ...]:
    items = split_list(values)
    if not items:
        raise InputError("--types needs at least one of " + ", ".join(ITEM_TYPES))
    for t in items:
        if t not in ITEM_TYPES:
            raise InputError(f"--types: unknown type {t!r}; expected some of "
                             + ", ".join(ITEM_TYPES))
    return _dedup(items)


def parse_split(text: str) -> dict[str, str]:
    """'train=0.6,dev=0.2,test=0.2' -> {'train': '0.6', ...}; proportions must sum to exactly 1."""
    spec: dict[str, str] = {}
    for part in split_list(text):
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not _SPLIT_NAME.match(name) or not _NUMBER.match(value):
            raise InputError(f"--split: cannot read {part!r}; expected NAME=PROPORTION pairs "
                             "such as train=0.6,dev=0.2,test=0.2")
        if name in spec:
            raise InputError(f"--split: split {name!r} is named twice")
        spec[name] = value
    if not spec:
        raise InputError("--split: expected NAME=PROPORTION pairs such as train=0.6,dev=0.2,test=0.2")
    check_split(spec)
    return spec


def check_split(spec: dict[str, str]) -> None:
    for name in spec:
        if not _SPLIT_NAME.match(name):
            raise InputError(f"--split: bad split name {name!r} (letters, digits, _ and - only)")
    try:
        values = [Fraction(str(v)) for v in spec.values()]
    except (ValueError, ZeroDivisionError):
        raise InputError(f"--split: proportions must be numbers, got {spec}") from None
    if any(v < 0 for v in values):
        raise InputError("--split: proportions must not be negative")
    total = sum(values)
    if total != 1:
        raise InputError(f"--split: proportions sum to {float(total):g}, not 1 "
                         f"({', '.join(f'{k}={v}' for k, v in spec.items())})")


def parse_balance(text: str) -> dict[str, str]:
    """'difficulty=40:30:30' -> {'easy': '40', 'medium': '30', 'hard': '30'} (weights, any scale)."""
    key, sep, value = text.partition("=")
    weights = value.split(":")
    if (key.strip() != "difficulty" or not sep or len(weights) != len(DIFFICULTIES)
            or not all(_NUMBER.match(w.strip()) for w in weights)):
        raise InputError(f"--balance: cannot read {text!r}; expected difficulty=EASY:MEDIUM:HARD "
                         "weights such as difficulty=40:30:30")
    spec = {d: w.strip() for d, w in zip(DIFFICULTIES, weights)}
    check_balance(spec)
    return spec


def check_balance(spec: dict[str, str]) -> None:
    if set(spec) - set(DIFFICULTIES):
        raise InputError("--balance: difficulties must be among " + ", ".join(DIFFICULTIES))
    try:
        values = [Fraction(str(v)) for v in spec.values()]
    except (ValueError, ZeroDivisionError):
        raise InputError(f"--balance: weights must be numbers, got {spec}") from None
    if any(v < 0 for v in values) or sum(values) == 0:
        raise InputError("--balance: weights must be non-negative and not all zero")


def check_format(name: str) -> None:
    if name not in FORMATS:
        raise InputError(f"unknown format {name!r}; expected one of " + ", ".join(FORMATS))


def split_file_path(out: Path, split: str) -> Path:
    """Where split `split` of an export to `out` goes: golden.jsonl -> golden.train.jsonl."""
    if out.suffix:
        return out.with_name(f"{out.stem}.{split}{out.suffix}")
    return out.with_name(f"{out.name}.{split}")


def manifest_path(out: Path) -> Path:
    """The manifest beside an export: `<out>.manifest.json`."""
    return out.with_name(out.name + ".manifest.json")
