"""Stage 6: difficulty from measured signals, never from a model's self-rating.

Signals stored in `difficulty_signals`:
- `hops`: distinct chunks the answer needs;
- `reasoning_step`: 1 for reasoning, comparative, temporal and ambiguous items (they need a
  condition, calculation, comparison or choice between readings), else 0;
- `lexical_overlap`: share of the question's content terms found in the cited evidence (high
  overlap = the question can be matched word for word);
- `gold_rank`: rank (1-based) of the best gold chunk under the baseline retriever
  (`search_chunks(question, k=20)`), null when not in the top 20. For unanswerable items,
  `top_overlap` = share of the question's terms found in the top-1 chunk (a near miss is harder
  to refuse).

Rule (points, summed): hops >= 2: +2; reasoning step: +1; overlap < 0.3: +2, < 0.6: +1;
gold rank 1: +0, 2-5: +1, beyond 5 or missing: +2. Unanswerable: +2 base, top overlap >= 0.6:
+2, >= 0.3: +1. Then easy <= 1 point, medium 2-3, hard >= 4.
"""

from __future__ import annotations

from builder.store import candidates as cstore
from builder.store.search import search_chunks

from builder.generate.terms import key_terms

REASONING_TYPES = {"reasoning", "comparative", "temporal", "ambiguous"}


def measure(store, cand: dict) -> tuple[str, dict]:
    q_terms = key_terms(cand["question"])
    hits = search_chunks(store, cand["question"], k=20)
    if cand["type"] == "unanswerable":
        top = hits[0] if hits else None
        overlap = (len(q_terms & key_terms(top["text"])) / len(q_terms)) if top and q_terms else 0.0
        points = 2 + (2 if overlap >= 0.6 else 1 if overlap >= 0.3 else 0)
        signals = {"hops": 0, "reasoning_step": 0, "top_overlap": round(overlap, 3),
                   "top_chunk": top["id"] if top else None, "points": points}
        return level(points), signals
    gold = cand.get("chunk_ids") or []
    evidence = " ".join(e["quote"] for e in cand.get("evidence") or [])
    overlap = len(q_terms & key_terms(evidence)) / len(q_terms) if q_terms else 0.0
    ranks = [i for i, h in enumerate(hits, 1) if h["id"] in gold]
    rank = ranks[0] if ranks else None
    hops = len(set(gold))
    step = 1 if cand["type"] in REASONING_TYPES else 0
    points = (2 if hops >= 2 else 0) + step
    points += 2 if overlap < 0.3 else 1 if overlap < 0.6 else 0
    points += 0 if rank == 1 else 1 if rank is not None and rank <= 5 else 2
    signals = {"hops": hops, "reasoning_step": step, "lexical_overlap": round(overlap, 3),
               "gold_rank": rank, "points": points}
    return level(points), signals


def level(points: int) -> str:
    return "easy" if points <= 1 else "medium" if points <= 3 else "hard"


def rate_difficulty(store, candidates: list[dict]) -> int:
    """Measure every verified-or-failed candidate without a difficulty yet; returns how many."""
    rows = []
    for cand in candidates:
        if cand.get("difficulty") or cand["verdict"] == "pending":
            continue
        lvl, signals = measure(store, cand)
        cand["difficulty"], cand["difficulty_signals"] = lvl, signals
        rows.append((cand["id"], lvl, signals))
    cstore.record_difficulty(store, rows)
    return len(rows)
