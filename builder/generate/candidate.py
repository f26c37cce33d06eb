"""Building candidate rows the same way for every stage, and the deterministic ids they get.

A candidate's id is a hash of what made it (type, the facts in hop order, the prompt version,
the model), so regenerating the same unit yields the same id and `INSERT OR IGNORE` keeps one
row. The fields filled here are the contract with review and export: `chunk_ids` in hop order,
`hops` as one list of chunk ids per hop, `evidence` as {chunk_id, quote, start, end} per fact.
"""

from __future__ import annotations

import hashlib
import json

from builder.text.markdown import MD_LINK, WIKI_LINK


def stable_id(*parts: object, size: int = 12) -> str:
    """Hex digest of the JSON of `parts`: equal inputs give equal ids across runs and machines."""
    raw = json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str).encode("utf-8")
    return hashlib.blake2b(raw, digest_size=size).hexdigest()


def clean_question(text: str) -> str:
    """The question up to its first question mark: small models often append the answer or the
    fact after it ("How long ...? You can return ... within 45 days."). Link markup copied from
    the source becomes its text: a user types "las Propiedades", not "las [[Propiedades]]"."""
    text = WIKI_LINK.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)
    text = MD_LINK.sub(lambda m: m.group(1), text)
    text = " ".join(text.split())
    for mark in ("?", "？"):
        cut = text.find(mark)
        if 0 < cut < len(text) - 1:
            text = text[:cut + 1]
    return text


def hops_for(facts: list[dict], hop_chunks: list[str] | None = None) -> tuple[list[str], list[list[str]]]:
    """(chunk_ids, hops) in hop order; a chunk cited by several facts appears once."""
    order = hop_chunks or [f["chunk_id"] for f in facts]
    chunk_ids: list[str] = []
    for cid in order:
        if cid not in chunk_ids:
            chunk_ids.append(cid)
    return chunk_ids, [[cid] for cid in chunk_ids]


def make_candidate(
    *, ctype: str, question: str, answer: str, facts: list[dict], language: str,
    prompts: dict[str, str], model: str | None, seed_fact_id: str | None,
    parent_id: str | None = None, document_id: str | None = None, key: object = None,
) -> dict:
    """One candidates row (verdict pending). `facts` are in hop order and all cited; an
    unanswerable candidate has none (its chunk and evidence lists stay empty)."""
    chunk_ids, hops = hops_for(facts)
    evidence = [
        {"chunk_id": f["chunk_id"], "quote": f["evidence"], "start": f["evidence_start"],
         "end": f["evidence_end"]}
        for f in facts
    ]
    return {
        "id": stable_id(ctype, [f["id"] for f in facts], prompts, model, key),
        "type": ctype,
        "question": question.strip(),
        "answer": answer.strip(),
        "language": language,
        "chunk_ids": chunk_ids,
        "hops": hops,
        "evidence": evidence,
        "fact_ids": [f["id"] for f in facts],
        "seed_fact_id": seed_fact_id,
        "parent_id": parent_id,
        "document_id": document_id or (facts[0]["document_id"] if facts else None),
        "generator_model": model,
        "prompts": prompts,
        "verdict": "pending",
        "rejection_reasons": [],
    }


def stale_duplicates(candidates: list[dict]) -> list[str]:
    """Passed candidates marked `duplicate_of` one that has not passed: marked while both were
    unjudged (the smaller id is kept), the keeper then failed its round trip, and the mark now
    hides the only verified item of its group. Released before each dedup pass, so the passed
    one is kept whatever order a run (or a resumed run) judged the two in."""
    verdicts = {c["id"]: c.get("verdict") for c in candidates}
    return sorted(c["id"] for c in candidates
                  if c.get("verdict") == "passed" and c.get("duplicate_of") in verdicts
                  and verdicts[c["duplicate_of"]] != "passed")


def kept_passed(candidates: list[dict]) -> list[dict]:
    """The passed candidates no other one stands for: no `duplicate_of`, or a stale one (its
    keeper has not passed; released at the run's next settle)."""
    stale = set(stale_duplicates(candidates))
    return [c for c in candidates if c.get("verdict") == "passed"
            and (not c.get("duplicate_of") or c["id"] in stale)]
