"""Apportionment, stratified group splits and difficulty balancing: pure functions over small data.

The rules, precisely (they are what the tests check):

1. `largest_remainder(total, weights)` (Hamilton's method): each part gets the floor of its exact
   quota `total * w / sum(w)`; the units left over go one each to the parts with the largest
   fractional remainders. Ties go to the part listed first (for splits: the order given on the
   command line; for difficulties: easy, medium, hard). Weights are taken as exact fractions
   (a float is read through its shortest repr, so 0.29 is 29/100), never rounded in binary.

2. `stratum_targets(sizes, proportions)`: per stratum (difficulty x type), every split gets the
   floor or the ceiling of its exact quota `n_s * p_k`, and the stratum's total is `n_s`. Which
   splits get the leftover units is decided by the largest *cumulative* remainder: strata are
   taken in order, and a leftover unit goes to the split furthest below `p_k` times the number
   of items seen so far (ties: split order). For a single stratum this is exactly
   `largest_remainder`; over many small strata it keeps the overall totals near the proportions
   instead of rounding every 1-item stratum into the largest split.

3. `assign_splits(...)`: a leakage group (a question and its evolved variants, same
   `seed_fact_id`) is never divided. Groups of two or more are placed first, largest first (ties
   by seeded hash), each into the split whose unmet target, summed over the group's members'
   strata, is largest (ties: split order; splits with proportion 0 receive nothing). Single
   items are placed afterwards in seeded-hash order, each into the split with the largest unmet
   target of its stratum. Hence:
   - with no multi-item groups, every stratum meets its target exactly;
   - with groups, a stratum meets its targets exactly whenever no split already holds more of
     it from groups than its target (the single items then fill every gap); otherwise the
     overfull split keeps its excess and the others fall short by the same total. Every such
     deviation is reported (`SplitAssignment.deviations`), never hidden.

4. `balance_targets(available, weights)`: the largest sub-sample holding the requested mix
   exactly (to `largest_remainder`), i.e. total `T = floor(min_d available_d / w_d)` over the
   difficulties with weight > 0. A difficulty "falls short" when it has fewer items than its
   share of everything available; the caller says so in a warning.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Union

Weight = Union[int, float, Fraction, str]


def as_fraction(weight: Weight) -> Fraction:
    """An exact fraction for a weight; floats through their shortest repr (0.1 -> 1/10)."""
    if isinstance(weight, float):
        return Fraction(repr(weight))
    return Fraction(weight)


def _normalised(weights: Sequence[Weight]) -> list[Fraction]:
    fr = [as_fraction(w) for w in weights]
    if not fr:
        raise ValueError("no weights")
    if any(w < 0 for w in fr):
        raise ValueError("weights must not be negative")
    total = sum(fr)
    if total == 0:
        raise ValueError("weights must not all be zero")
    return [w / total for w in fr]


def largest_remainder(total: int, weights: Sequence[Weight]) -> list[int]:
    """Split `total` whole units over `weights` by largest remainder (Hamilton's method).

    Guarantees: the parts sum to `total`; each part is the floor or the ceiling of its exact
    quota; equal remainders are resolved in favour of the earlier part. Weights need not sum to
    one (they are normalised exactly).
    """
    if total < 0:
        raise ValueError("total must not be negative")
    shares = _normalised(weights)
    quotas = [total * w for w in shares]
    parts = [q.numerator // q.denominator for q in quotas]
    left = total - sum(parts)
    order = sorted(range(len(parts)), key=lambda i: (-(quotas[i] - parts[i]), i))
    for i in order[:left]:
        parts[i] += 1
    return parts


def stratum_targets(sizes: Sequence[int], proportions: Sequence[Weight]) -> list[list[int]]:
    """Per-stratum split targets (rule 2 in the module docstring); `sizes` in stratum order."""
    shares = _normalised(proportions)
    n_splits = len(shares)
    given = [0] * n_splits
    seen = 0
    targets: list[list[int]] = []
    for n in sizes:
        seen += n
        quotas = [n * p for p in shares]
        parts = [q.numerator // q.denominator for q in quotas]
        left = n - sum(parts)
        # Only splits whose quota is fractional may take a leftover unit (floor-or-ceiling rule);
        # there are always at least `left` of them.
        eligible = [k for k in range(n_splits) if quotas[k] != parts[k]]
        eligible.sort(key=lambda k: (-(seen * shares[k] - given[k] - parts[k]), k))
        for k in eligible[:left]:
            parts[k] += 1
        for k in range(n_splits):
            given[k] += parts[k]
        targets.append(parts)
    return targets


def seeded_hash(seed: int, key: str) -> int:
    """A 64-bit hash of `key` under `seed`: the export's only source of randomness.

    Independent of row order and of Python's hash randomisation, so the same database and seed
    always give the same split, and a different seed a different one.
    """
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8,
                             key=str(seed).encode("ascii")).digest()
    return int.from_bytes(digest, "big")


@dataclass
class Deviation:
    stratum: int
    split: int
    target: int
    actual: int


@dataclass
class SplitAssignment:
    """Result of `assign_splits`: a split index per item, and the per-stratum bookkeeping."""

    split_of: array            # split index per item (array 'B'), same order as the input
    targets: list[list[int]]   # [stratum][split]
    actual: list[list[int]]    # [stratum][split]
    deviations: list[Deviation]
    groups: int = 0            # leakage groups of two or more items


def assign_splits(strata: Sequence[int], group_keys: Sequence[int], n_strata: int,
                  proportions: Sequence[Weight]) -> SplitAssignment:
    """Assign every item a split, whole leakage groups at a time (rule 3, module docstring).

    `strata[i]` is item i's stratum index (0..n_strata-1, strata ordered as they should be for
    `stratum_targets`), `group_keys[i]` its group's seeded hash: items with equal keys form one
    group, and the keys double as the seeded order. Memory: a few bytes per item.
    """
    shares = _normalised(proportions)
    n_splits = len(shares)
    if n_splits > 255:
        raise ValueError("at most 255 splits")
    open_splits = [k for k in range(n_splits) if shares[k] > 0]
    n = len(strata)
    sizes = [0] * n_strata
    for s in strata:
        sizes[s] += 1
    targets = stratum_targets(sizes, shares)
    actual = [[0] * n_splits for _ in range(n_strata)]
    split_of = array("B", bytes(n))

    order = sorted(range(n), key=group_keys.__getitem__)
    multi: list[tuple[int, int, int]] = []  # (size, key, start in `order`)
    start = 0
    while start < n:
        key = group_keys[order[start]]
        end = start + 1
        while end < n and group_keys[order[end]] == key:
            end += 1
        if end - start > 1:
            multi.append((end - start, key, start))
        start = end
    multi.sort(key=lambda g: (-g[0], g[1]))

    for size, _key, first in multi:
        members = order[first:first + size]
        best, best_need = open_splits[0], None
        for k in open_splits:
            need = sum(targets[strata[m]][k] - actual[strata[m]][k] for m in members)
            if best_need is None or need > best_need:
                best, best_need = k, need
        for m in members:
            split_of[m] = best
            actual[strata[m]][best] += 1

    in_multi = bytearray(n)
    for size, _key, first in multi:
        for m in order[first:first + size]:
            in_multi[m] = 1
    for m in order:
        if in_multi[m]:
            continue
        row_t, row_a = targets[strata[m]], actual[strata[m]]
        best, best_need = open_splits[0], None
        for k in open_splits:
            need = row_t[k] - row_a[k]
            if best_need is None or need > best_need:
                best, best_need = k, need
        split_of[m] = best
        row_a[best] += 1

    deviations = [
        Deviation(s, k, targets[s][k], actual[s][k])
        for s in range(n_strata) for k in range(n_splits) if targets[s][k] != actual[s][k]
    ]
    return SplitAssignment(split_of, targets, actual, deviations, len(multi))


@dataclass
class BalancePlan:
    """How many items of each difficulty `--balance` keeps, and which difficulties fell short."""

    kept: dict[str, int]
    available: dict[str, int]
    short: list[str]           # difficulties with fewer items than their share of all available
    needed: dict[str, int]     # each difficulty's share of all available items (floor)


def balance_targets(available: Mapping[str, int], weights: Mapping[str, Weight]) -> BalancePlan:
    """The largest sub-sample with exactly the requested difficulty mix (rule 4).

    `weights` names every difficulty considered, in order (ties in the rounding go to the
    earlier one); `available` counts the items per difficulty (missing = 0).
    """
    names = list(weights)
    shares = dict(zip(names, _normalised([weights[d] for d in names])))
    avail = {d: int(available.get(d, 0)) for d in names}
    total_available = sum(avail.values())
    limits = [Fraction(avail[d]) / shares[d] for d in names if shares[d] > 0]
    total = int(min(limits)) if limits else 0
    kept = dict(zip(names, largest_remainder(total, [shares[d] for d in names])))
    needed = {d: int(total_available * shares[d]) for d in names}
    short = [d for d in names if shares[d] > 0 and avail[d] < total_available * shares[d]]
    return BalancePlan(kept=kept, available=avail, short=short, needed=needed)
