"""Stage 5: duplicates over the whole candidate pool (all runs), by code only.

1. Exact: questions equal after normalisation (NFKC, casefold, letters/digits/CJK only).
2. Near: MinHash over character 5-gram shingles of the normalised question (one 64-bit blake2b
   per shingle, then 64 hash functions h XOR mask_i -- min over a C-level map, ~5x faster in
   pure Python than (a*h+b) mod p with big integers), LSH with 16 bands x 4 rows (catches
   pairs above ~0.5 Jaccard with high probability); each LSH pair is then confirmed by the exact
   shingle Jaccard: question >= 0.8 AND answer (3-grams) >= 0.5. Requiring similar answers too
   keeps "price of plan A?" and "price of plan B?" apart.

In each duplicate group one candidate is kept and the others get `duplicate_of` = its id; rows
that already have `duplicate_of` keep it, unless they passed and their keeper did not
(`candidate.stale_duplicates`). The keeper is the first by `_rank`:
  1. a human already decided on it (review status other than 'pending');
  2. verdict: passed > pending > failed;
  3. it was already its group's keeper before this pass (an incumbent: kept, and rated by an
     earlier settle -- the generator rates difficulty right after every dedup pass), so a
     candidate reviewers may be looking at is never flipped to `duplicate_of` a newer one with
     the same verdict;
  4. more passing verification checks;
  5. the smaller id (ids are content hashes).
A question written twice with two different answers is the opposite case, and not a
duplicate: `other_answers` finds verified single-hop items whose normalised question another
verified item, written from another fact, answers differently ("Which file can you add to customise
your site?" -> publish.css, and again -> publish.js): the question does not pin its subject
down, and the run's settle step fails both (`runner.settle`).

Never `created_at`: within a run that is just the order in which concurrent units committed, so
it would make the kept duplicate (and the final mix) depend on timing. Deterministic: same pool,
same result, whatever the commit order; no LLM calls.
"""

from __future__ import annotations

import hashlib
import random
import unicodedata
from collections import defaultdict

from builder.generate.terms import jaccard

NUM_PERM = 64
BANDS, ROWS = 16, 4
_EMPTY = (1 << 64) - 1
_rng = random.Random(20240531)
_MASKS = [_rng.getrandbits(64) for _ in range(NUM_PERM)]
QUESTION_THRESHOLD = 0.8
ANSWER_THRESHOLD = 0.5


def normalise(text: str) -> str:
    """NFKC, casefolded, punctuation to spaces, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join("".join(ch if ch.isalnum() else " " for ch in text).split())


def shingles(text: str, n: int = 5) -> set[str]:
    t = normalise(text)
    if len(t) <= n:
        return {t} if t else set()
    return {t[i:i + n] for i in range(len(t) - n + 1)}


def minhash(items: set[str]) -> tuple[int, ...]:
    """64 minimum hash values; equal sets give equal signatures."""
    if not items:
        return tuple([_EMPTY] * NUM_PERM)
    base = [int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "big")
            for s in items]
    return tuple(min(map(mask.__xor__, base)) for mask in _MASKS)


def lsh_pairs(signatures: dict[str, tuple[int, ...]]) -> set[tuple[str, str]]:
    """Id pairs that share at least one LSH band (candidates for near-duplicate)."""
    pairs: set[tuple[str, str]] = set()
    for band in range(BANDS):
        buckets: dict[tuple, list[str]] = defaultdict(list)
        lo = band * ROWS
        for cid, sig in signatures.items():
            buckets[sig[lo:lo + ROWS]].append(cid)
        for members in buckets.values():
            if len(members) > 1:
                members.sort()
                for i, a in enumerate(members):
                    for b in members[i + 1:]:
                        pairs.add((a, b))
    return pairs


def is_incumbent(c: dict) -> bool:
    """Kept (no `duplicate_of`) and already through a settle (difficulty rated after its pass)."""
    return not c.get("duplicate_of") and bool(c.get("difficulty"))


def _rank(c: dict) -> tuple:
    human = 0 if (c.get("status") or "pending") != "pending" else 1
    verdict = {"passed": 0, "pending": 1, "failed": 2}.get(c.get("verdict"), 3)
    incumbent = 0 if is_incumbent(c) else 1
    passed = sum(1 for v in c.get("verification") or [] if v.get("passed") is True)
    return (human, verdict, incumbent, -passed, c["id"])


def find_duplicates(candidates: list[dict]) -> list[tuple[str, str]]:
    """(duplicate id, kept id) for every candidate that duplicates a better one."""
    pool = {c["id"]: c for c in candidates}
    parent = {cid: cid for cid in pool}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    exact: dict[str, str] = {}
    for cid in sorted(pool):
        key = normalise(pool[cid]["question"])
        if key in exact:
            union(exact[key], cid)
        else:
            exact[key] = cid
    q_sh = {cid: shingles(c["question"]) for cid, c in pool.items()}
    sigs = {cid: minhash(sh) for cid, sh in q_sh.items()}
    for a, b in lsh_pairs(sigs):
        if find(a) == find(b):
            continue
        if jaccard(q_sh[a], q_sh[b]) >= QUESTION_THRESHOLD and jaccard(
                shingles(pool[a]["answer"], 3), shingles(pool[b]["answer"], 3)) >= ANSWER_THRESHOLD:
            union(a, b)
    groups: dict[str, list[dict]] = defaultdict(list)
    for cid in pool:
        groups[find(cid)].append(pool[cid])
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=_rank)
        keep = next((m for m in members if not m.get("duplicate_of")), members[0])
        for m in members:
            if m is not keep and not m.get("duplicate_of"):
                out.append((m["id"], keep["id"]))
    return sorted(out)


def _source(c: dict) -> frozenset:
    """What an item was written from: its facts, or its cited chunks when it has none. Two
    list items of one chunk are two sources ("`publish.css` to add CSS", "`publish.js` to
    add JavaScript"); one fact asked twice is one."""
    return frozenset(c.get("fact_ids") or []) or frozenset(c.get("chunk_ids") or [])


def _differ(a: str, b: str) -> bool:
    """Two answers that say different things: neither one's words hold the other's ("25 days"
    and "25 calendar days" agree; `publish.css` and `publish.js` do not, although most of
    their characters are shared)."""
    wa, wb = set(normalise(a).split()), set(normalise(b).split())
    return not (wa <= wb or wb <= wa)


def other_answers(candidates: list[dict]) -> dict[str, dict]:
    """{id: another candidate} for every passed single-hop candidate whose normalised question
    a passed single-hop candidate written from another fact answers differently (`_differ`);
    duplicates included, reviewer-decided ones left out."""
    by_question: dict[str, list[dict]] = defaultdict(list)
    for c in candidates:
        if c["type"] == "single_hop" and c.get("verdict") == "passed":
            by_question[normalise(c["question"])].append(c)
    out: dict[str, dict] = {}
    for group in by_question.values():
        for a in group:
            if (a.get("status") or "pending") != "pending":
                continue
            for b in group:
                if b is not a and _source(b) != _source(a) and _differ(a["answer"], b["answer"]):
                    out[a["id"]] = b
                    break
    return out
