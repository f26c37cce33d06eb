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
   `seed_fact_id`, joined with every harder item built from one of them and that item's other
   parts: `joined_groups`) is never divided, and every split's total is its overall target
   `largest_remainder(n, proportions)` whenever the groups allow it (the rounding rule holds for
   the splits as a whole, not only per stratum). Groups of two or more are placed first,
   largest first (ties by seeded hash), each into the split where it adds the fewest items
   beyond the split's overall target, then the fewest beyond its strata's targets, then the
   split with the most room left (ties: split order; splits with proportion 0 receive
   nothing). Single items are then apportioned by a maximum flow: as many as possible go where
   their stratum's target still has room, with every split filled exactly to its overall
   target; the rest (the items a group displaced) go to the splits with room left, so the
   deviation from the per-stratum targets is as small as the placed groups allow. Within a
   stratum, items take their splits in seeded-hash order. Hence:
   - with no multi-item groups, every stratum meets its target exactly;
   - with groups, every split meets its overall target unless a group is larger than the room
     any split has; per-stratum deviations are reported (`SplitAssignment.deviations`), and
     so are the achieved split totals (`SplitAssignment.totals`, against `overall`).

4. `balance_targets(available, weights)`: the largest sub-sample holding the requested mix
   exactly (to `largest_remainder`), i.e. total `T = floor(min_d available_d / w_d)` over the
   difficulties with weight > 0. A difficulty "falls short" when it has fewer items than its
   share of everything available; the caller says so in a warning.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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


def joined_groups(links: list[tuple[str, str]]) -> dict[str, str]:
    """Group name -> the name of the leakage group it joins once harder items are kept with
    their parts (connected components of `links`, each named by its smallest member, so the
    result does not depend on the order of the links). Groups with no link are left out."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in links:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {x: find(x) for x in parent}


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
    overall: list[int] = field(default_factory=list)   # [split] target: largest remainder
    totals: list[int] = field(default_factory=list)    # [split] items assigned


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
    for st in strata:
        sizes[st] += 1
    targets = stratum_targets(sizes, shares)
    overall = largest_remainder(n, shares)
    actual = [[0] * n_splits for _ in range(n_strata)]
    load = [0] * n_splits
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

    in_multi = bytearray(n)
    for size, _key, first in multi:
        members = order[first:first + size]
        per_stratum: dict[int, int] = {}
        for m in members:
            per_stratum[strata[m]] = per_stratum.get(strata[m], 0) + 1
            in_multi[m] = 1

        def cost(k: int, size: int = size, per_stratum: dict = per_stratum) -> tuple:
            overflow = max(0, load[k] + size - overall[k]) - max(0, load[k] - overall[k])
            over = sum(max(0, actual[st][k] + c - targets[st][k])
                       - max(0, actual[st][k] - targets[st][k]) for st, c in per_stratum.items())
            return overflow, over, -(overall[k] - load[k]), k

        best = min(open_splits, key=cost)
        for m in members:
            split_of[m] = best
        for st, c in per_stratum.items():
            actual[st][best] += c
        load[best] += size

    singles: list[list[int]] = [[] for _ in range(n_strata)]
    for m in order:
        if not in_multi[m]:
            singles[strata[m]].append(m)
    room = [max(0, overall[k] - load[k]) if k in open_splits else 0 for k in range(n_splits)]
    # A group larger than a split's room pushed that split over its target: the other splits
    # then share the shortfall in proportion (largest remainder), not first come first served.
    surplus = sum(room) - (n - sum(load))
    while surplus > 0:
        cut = largest_remainder(surplus, [shares[k] if room[k] else 0 for k in range(n_splits)])
        for k in range(n_splits):
            take = min(cut[k], room[k])
            room[k] -= take
            surplus -= take
    flow = _apportion_singles([len(x) for x in singles], targets, actual, room, open_splits)
    for st, items in enumerate(singles):
        pos = 0
        for k in range(n_splits):
            for m in items[pos:pos + flow[st][k]]:
                split_of[m] = k
            pos += flow[st][k]
            actual[st][k] += flow[st][k]
            load[k] += flow[st][k]

    deviations = [
        Deviation(st, k, targets[st][k], actual[st][k])
        for st in range(n_strata) for k in range(n_splits) if targets[st][k] != actual[st][k]
    ]
    return SplitAssignment(split_of, targets, actual, deviations, len(multi), overall, load)


def _apportion_singles(counts: Sequence[int], targets: Sequence[Sequence[int]],
                       placed: Sequence[Sequence[int]], room: Sequence[int],
                       open_splits: Sequence[int]) -> list[list[int]]:
    """How many single items of each stratum go to each split: a maximum flow from strata to
    splits where an edge's capacity is the stratum's unmet target there and a split's capacity
    its room under the overall target; what cannot flow at zero deviation is then given to the
    splits with room left (and, only when every split is full, to the first open split)."""
    n_strata, n_splits = len(counts), len(room)
    flow = [[0] * n_splits for _ in range(n_strata)]
    need = [[max(0, targets[st][k] - placed[st][k]) if k in open_splits else 0
             for k in range(n_splits)] for st in range(n_strata)]
    left = list(counts)
    free = list(room)
    # Augmenting paths in the residual graph source -> stratum -> split -> sink; a path may
    # take back units of an earlier stratum from a split (stratum -> split -> stratum' ->
    # split'). The graph is tiny (strata x splits), so breadth-first search is plenty.
    while True:
        path = _augmenting_path(left, need, flow, free)
        if path is None:
            break
        amount = min(left[path[0][0]], free[path[-1][1]],
                     *(need[st][k] - flow[st][k] if fwd else flow[st][k]
                       for st, k, fwd in _edges(path)))
        left[path[0][0]] -= amount
        free[path[-1][1]] -= amount
        for st, k, fwd in _edges(path):
            flow[st][k] += amount if fwd else -amount
    for st in range(n_strata):
        for k in sorted(open_splits, key=lambda k: (-free[k], k)):
            if not left[st]:
                break
            take = min(left[st], free[k])
            flow[st][k] += take
            free[k] -= take
            left[st] -= take
        if left[st]:  # every split is full: a group overfilled them
            flow[st][open_splits[0]] += left[st]
            left[st] = 0
    return flow


def _augmenting_path(left, need, flow, free):
    """A shortest path [(stratum, split), (stratum, split), ...] alternating forward edges
    (stratum -> split with unmet need) and backward edges (split -> another stratum that already
    sends units there), from a stratum with items left to a split with room; None if none."""
    from collections import deque

    n_strata, n_splits = len(left), len(free)
    came: dict[tuple[str, int], tuple[str, int] | None] = {}
    queue: deque = deque()
    for st in range(n_strata):
        if left[st] > 0:
            came[("s", st)] = None
            queue.append(("s", st))
    while queue:
        kind, i = queue.popleft()
        if kind == "s":
            for k in range(n_splits):
                if need[i][k] - flow[i][k] > 0 and ("k", k) not in came:
                    came[("k", k)] = (kind, i)
                    if free[k] > 0:
                        nodes = [("k", k)]
                        while came[nodes[-1]] is not None:
                            nodes.append(came[nodes[-1]])
                        nodes.reverse()  # s, k, s, k, ..., k
                        return [(nodes[j][1], nodes[j + 1][1]) for j in range(0, len(nodes), 2)]
                    queue.append(("k", k))
        else:
            for st in range(n_strata):
                if flow[st][i] > 0 and ("s", st) not in came:
                    came[("s", st)] = (kind, i)
                    queue.append(("s", st))
    return None


def _edges(path):
    """The path's edges as (stratum, split, forward?): each (s, k) pair is a forward edge, and
    between pairs the step split k -> stratum s' is the backward edge (s', k)."""
    for j, (st, k) in enumerate(path):
        yield st, k, True
        if j + 1 < len(path):
            yield path[j + 1][0], k, False


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
