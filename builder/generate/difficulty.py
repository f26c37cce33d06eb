"""Stage 5: difficulty from measured signals, never from a model's self-rating.

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

Rule. A level says how many independent things make the item hard for a RAG system; each
signal adds points, summed:

  signal                       0 points                 +1                     +2
  hops (chunks needed)         1                        -                      >= 2
  reasoning step               no                       -                      yes
  gold rank (baseline FTS5)    1-5                      6-20                   not in top 20
  lexical overlap              >= 0.5                   0.25 - 0.5             < 0.25

  easy <= 1 point, medium 2-3, hard >= 4.

Why these cut points: rank 5 is the usual top-k a RAG pipeline hands its generator, so a gold
chunk in the baseline's top 5 is "found by keyword search"; rank 6-20 is found only by a more
generous or better retriever; outside the top 20 the baseline misses it. An overlap of >= 0.5
means at least half of the question's content words occur verbatim in the evidence (the item
can be matched word for word); below 0.25 it is a paraphrase. A second hop or a reasoning step
are each a full level on their own (+2): the retriever must surface two passages, or the
reader must compute / compare / choose, which lexical matching alone never does.

So: easy = a one-passage lookup the baseline finds with matching words, allowing ONE mild
weakness (rank 6-20 OR partial overlap); medium = one real complication (a second hop, a
reasoning step, a baseline miss, a paraphrase) or two mild ones; hard = two or more
complications -- comparative, temporal and ambiguous items (two passages + a choice) are
always hard, multi-hop / reasoning items are hard when retrieval or wording also works
against them, a single-hop item only when it is both paraphrased and missed by the baseline.

Unanswerable: +2 base (the system must recognise absence; never a mere lookup), plus +2 when
the top-1 chunk holds >= 60% of the question's terms (a near miss tempts an answer), +1 at
>= 30%. So medium, or hard for near misses.

On samples/ with the scripted model this puts ~75% of single-hop items at easy, multi-hop and
reasoning mostly at medium, and the two-passage-plus-choice kinds at hard: the harder kinds
are where medium and hard items come from.
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
    points = (2 if hops >= 2 else 0) + 2 * step
    points += 2 if overlap < 0.25 else 1 if overlap < 0.5 else 0
    points += 0 if rank is not None and rank <= 5 else 1 if rank is not None else 2
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
