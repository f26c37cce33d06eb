"""Stage 1 (once per run, before any round): mix control -- how many candidates of each type to
aim for, which chunks get facts, and how much one document may contribute.

- Type targets: `--mix` shares (default `DEFAULT_MIX`), restricted to `--types`, rounded with
  the largest-remainder rule so they sum to exactly `--n`. With the default mix, defensive
  kinds (unanswerable + ambiguous + temporal) get at least `min_defensive` (15%) of n whenever
  they are allowed; a user `--mix` below that is kept but noted in the summary.
- Difficulty steering (`steer_for_difficulty`): under the difficulty rule only single-hop items
  can measure easy, and each kind has a typical level profile (`PROFILE`, measured on samples/
  with the scripted model). With the default mix, single-hop slots are added -- taken from the
  non-defensive evolved kinds (reasoning, multi-hop, comparative) in proportion to their
  planned counts (at least one of each stays; the defensive kinds are never touched) until the
  expected easy count reaches the target. The evolved kinds left then supply medium and hard
  (on the default 40/30/30 target the expected split comes out near 18/18 of n=60). A
  user `--mix` is kept as given. The plan stays a pure function of the options, so reruns and
  resumes plan the same thing; the summary reports the mix actually measured.
- Chunks for facts: round-robin over documents (seeded order), so every document is covered
  before any gets a second chunk, plus for each picked chunk its best FTS5 neighbour in another
  document (material for multi-hop, temporal and ambiguous pairs). The budget grows with n
  (about 0.6 chunk per wanted item, at least 6) and with each extra round.
- Per-document cap: no document supplies more than max(20% of n, 1.5 x its fair share), so a
  few large files cannot dominate.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict

from builder.errors import InputError
from builder.store.search import search_chunks

from builder.vocabulary import DEFENSIVE, DIFFICULTIES, TYPES

from builder.generate.models import DEFAULT_MIX

# Expected (easy, medium, hard) share per kind under difficulty.py's rule. Single-hop: 15 of 21
# measured easy on samples/ (scripted model, n=60); comparative / temporal / ambiguous are hard
# by construction; multi-hop and unanswerable mostly medium; reasoning split.
PROFILE = {
    "single_hop": (0.75, 0.2, 0.05), "reasoning": (0.0, 0.5, 0.5), "multi_hop": (0.0, 0.8, 0.2),
    "comparative": (0.0, 0.0, 1.0), "temporal": (0.0, 0.0, 1.0), "ambiguous": (0.0, 0.0, 1.0),
    "unanswerable": (0.0, 0.8, 0.2),
}
DONORS = ("reasoning", "multi_hop", "comparative")


def parse_mix(text: str | None) -> dict[str, float] | None:
    """`single_hop=0.5,multi_hop=0.3,...` (shares or percentages; normalised later)."""
    if not text:
        return None
    out: dict[str, float] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or name not in TYPES:
            raise InputError(f"--mix: expected TYPE=SHARE with TYPE in {', '.join(TYPES)}, got {part.strip()!r}")
        try:
            share = float(value.strip().rstrip("%"))
        except ValueError:
            raise InputError(f"--mix: {value.strip()!r} is not a number") from None
        if share < 0:
            raise InputError(f"--mix: share for {name} is negative")
        out[name] = share
    if not out or sum(out.values()) <= 0:
        raise InputError("--mix: give at least one positive share")
    return out


def parse_types(text: str | None) -> list[str] | None:
    if not text:
        return None
    types = [t.strip() for t in text.split(",") if t.strip()]
    if not types:
        raise InputError(f"--types: no type named in {text!r}; known: {', '.join(TYPES)}")
    bad = [t for t in types if t not in TYPES]
    if bad:
        raise InputError(f"--types: unknown type {bad[0]!r}; known: {', '.join(TYPES)}")
    return types


def largest_remainder(n: int, shares: dict[str, float]) -> dict[str, int]:
    total = sum(shares.values())
    raw = {k: n * v / total for k, v in shares.items()}
    out = {k: math.floor(v) for k, v in raw.items()}
    left = n - sum(out.values())
    for k in sorted(raw, key=lambda k: (-(raw[k] - out[k]), TYPES.index(k)))[:left]:
        out[k] += 1
    return out


def type_targets(n: int, mix: dict[str, float] | None, types: list[str] | None,
                 min_defensive: float = 0.15) -> tuple[dict[str, int], list[str]]:
    """(planned count per type summing to n, notes)."""
    notes: list[str] = []
    shares = dict(mix or DEFAULT_MIX)
    if types:
        shares = {t: shares.get(t, DEFAULT_MIX[t]) for t in types}
    shares = {t: s for t, s in shares.items() if s > 0}
    if not shares:
        raise InputError("--types/--mix leave no type to generate")
    total = sum(shares.values())
    defensive = sum(v for t, v in shares.items() if t in DEFENSIVE) / total
    if defensive < min_defensive and mix:
        notes.append(f"--mix gives {defensive:.0%} defensive items (unanswerable, ambiguous, "
                     f"temporal); {min_defensive:.0%} is the recommended floor")
    elif defensive < min_defensive:
        allowed = [t for t in DEFENSIVE if t in shares]
        if allowed:
            rest = total - sum(shares[t] for t in allowed)
            want = min_defensive * rest / (1 - min_defensive)
            have = sum(shares[t] for t in allowed)
            for t in allowed:
                shares[t] = shares[t] * want / have
    plan = largest_remainder(n, shares)
    return {t: plan.get(t, 0) for t in TYPES if t in plan}, notes


def expected_difficulty(plan: dict[str, int]) -> dict[str, float]:
    """Expected count per level for a type plan (PROFILE)."""
    return {d: sum(k * PROFILE[t][i] for t, k in plan.items()) for i, d in enumerate(DIFFICULTIES)}


def steer_for_difficulty(plan: dict[str, int], target: dict[str, float] | None,
                         user_mix: bool) -> tuple[dict[str, int], list[str]]:
    """Move slots from the non-defensive evolved kinds to single_hop until the expected easy
    count reaches the target (see the module doc). Returns (plan, notes)."""
    if user_mix or not target or "single_hop" not in plan:
        return plan, []
    n = sum(plan.values())
    total = sum(target.get(d, 0.0) for d in DIFFICULTIES) or 1.0
    want = {d: n * target.get(d, 0.0) / total for d in DIFFICULTIES}
    base, plan = dict(plan), dict(plan)
    moved: dict[str, int] = defaultdict(int)
    while expected_difficulty(plan)["easy"] < want["easy"] - 1e-9:
        donors = [t for t in DONORS if plan.get(t, 0) > 1]
        if not donors:
            break

        # proportionally: the kind that has kept the largest part of its planned count gives next
        donor = max(donors, key=lambda t: (plan[t] / base[t], -DONORS.index(t)))
        plan[donor] -= 1
        plan["single_hop"] += 1
        moved[donor] += 1
    notes = []
    if moved:
        notes.append("difficulty target: planned " + ", ".join(
            f"{k} more single_hop instead of {t}" for t, k in moved.items())
            + f" (only single-hop items can measure easy; target easy {want['easy']:.0f})")
    return plan, notes


def document_cap(n: int, n_docs: int) -> int:
    return max(1, math.ceil(n * max(0.2, 1.5 / max(n_docs, 1))))


def chunk_budget(n: int, n_chunks: int, round_no: int = 1) -> int:
    return min(n_chunks, max(6, math.ceil(0.6 * n) + 2) * round_no)


def select_chunks(store, chunks: list[dict], budget: int, seed: int) -> list[dict]:
    """Up to `budget` chunks: round-robin over documents in a seeded order, each followed by its
    best FTS5 neighbour from another document. Deterministic for a given seed and KB."""
    if budget >= len(chunks):
        return list(chunks)
    rng = random.Random(seed)
    by_doc: dict[str, list[dict]] = defaultdict(list)
    for c in chunks:
        by_doc[c["document_id"]].append(c)
    docs = sorted(by_doc)
    rng.shuffle(docs)
    for d in docs:
        rng.shuffle(by_doc[d])
    by_id = {c["id"]: c for c in chunks}
    picked: dict[str, dict] = {}
    while len(picked) < budget and any(by_doc[d] for d in docs):
        for d in docs:
            if len(picked) >= budget:
                break
            while by_doc[d] and by_doc[d][0]["id"] in picked:
                by_doc[d].pop(0)
            if not by_doc[d]:
                continue
            seed_chunk = by_doc[d].pop(0)
            picked[seed_chunk["id"]] = seed_chunk
            if len(picked) >= budget:
                break
            for hit in search_chunks(store, seed_chunk["text"], k=5, exclude_ids=list(picked)):
                if hit["id"] in by_id and hit["document_id"] != d:
                    picked[hit["id"]] = by_id[hit["id"]]
                    break
    return [c for c in chunks if c["id"] in picked]
