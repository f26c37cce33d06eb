"""Bad cases of production records, each with its likely cause and the evidence for it.

Signals (from the judge's outcome and the user's feedback):

| signal | when |
|---|---|
| `refusal` | the answer refused (code first, see `builder.score.refusal`) |
| `handed_off` | the conversation went to a human |
| `irrelevant_contexts` | fewer than half of the retrieved chunks were judged useful |
| `unfaithful` | faithfulness <= 2: most claims not supported by the logged contexts |
| `off_topic` | answer relevancy <= 2 |
| `thumbs_down`, `reasked` | the user said so, or asked again |

Cause, first rule that applies:

1. a refusal or a hand-off: **generation** when a retrieved chunk was judged useful (the
   answer was there and the system did not give it), else **knowledge base** (coverage: no
   retrieved chunk answers it; every logged question counts as in scope);
2. irrelevant contexts: **retrieval**;
3. unfaithful or off topic: **generation**;
4. only the user's feedback: **unknown** (the judge found nothing; the user's reason is the
   evidence).

Every signal that applies is listed, with its evidence: the unsupported claims, the chunks
judged not useful (id and the judge's reason), the refusal phrase, the user's reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

UNFAITHFUL = 2        # faithfulness at or below this
OFF_TOPIC = 2         # answer relevancy at or below this
USEFUL_SHARE = 0.5    # context relevance below this: irrelevant contexts
CAUSES = ("generation", "retrieval", "knowledge base", "unknown")
RULE = ("A record is a bad case when the answer refused, was handed to a human, drew on "
        "mostly irrelevant chunks (context relevance < 0.5), was unfaithful (faithfulness <= 2)"
        " or off topic (relevancy <= 2), or when the user gave a thumbs down or asked again. "
        "Cause: a refusal or hand-off with a useful chunk retrieved → generation, without one →"
        " knowledge base (coverage); irrelevant chunks → retrieval; unfaithful or off topic → "
        "generation; feedback alone → unknown.")


def _clip(text: Any, limit: int = 160) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def useful_chunk_ids(record: Mapping[str, Any], details: Mapping[str, Any]) -> list[str]:
    """The retrieved ids whose chunk the judge found useful for the question, in rank order
    (`context N` when the record logged contexts without ids)."""
    useful = (details.get("context_relevance") or {}).get("useful") or []
    ids = record.get("retrieved_ids") or []
    return [ids[n] if n < len(ids) else f"context {n + 1}" for n, ok in enumerate(useful) if ok]


def bad_case(record: Mapping[str, Any], metrics: Mapping[str, float],
             details: Mapping[str, Any]) -> dict[str, Any] | None:
    """The bad case of one record (None when nothing is wrong): cause, signals, evidence.
    `record` is a log_records row (decoded); `metrics`/`details` its judge outcome ({} when
    it was not judged)."""
    signals: list[str] = []
    evidence: list[str] = []
    relevance = details.get("context_relevance") or {}
    useful = relevance.get("useful") or []
    ids = record.get("retrieved_ids") or []
    useful_ids = useful_chunk_ids(record, details)

    refused = metrics.get("wrong_refusal_rate") == 1.0
    if refused:
        signals.append("refusal")
        evidence.append("refused: " + _clip((details.get("refusal") or {}).get("reason")))
    if record.get("handed_off"):
        signals.append("handed_off")
        evidence.append("handed to a human")
    share = metrics.get("context_relevance")
    if share is not None and share < USEFUL_SHARE:
        signals.append("irrelevant_contexts")
        reasons = relevance.get("reasons") or []
        missed = [f"{ids[n] if n < len(ids) else f'context {n + 1}'}: {_clip(reasons[n], 80)}"
                  if n < len(reasons) else (ids[n] if n < len(ids) else f"context {n + 1}")
                  for n, ok in enumerate(useful) if not ok]
        evidence.append(f"{len(useful) - len(useful_ids)} of {len(useful)} retrieved chunks "
                        "not useful: " + "; ".join(missed[:3]))
    faith = metrics.get("faithfulness")
    if faith is not None and faith <= UNFAITHFUL:
        signals.append("unfaithful")
        claims = [c["claim"] for c in (details.get("faithfulness") or {}).get("claims") or []
                  if isinstance(c, Mapping) and not c.get("supported")]
        evidence.append(f"faithfulness {faith:g}/5; unsupported: "
                        + "; ".join(_clip(c, 100) for c in claims[:3]))
    relevancy = metrics.get("answer_relevancy")
    if relevancy is not None and relevancy <= OFF_TOPIC:
        signals.append("off_topic")
        evidence.append(f"answer relevancy {relevancy:g}/5: "
                        + _clip((details.get("answer_relevancy") or {}).get("reason")))
    if record.get("thumbs") == "down":
        signals.append("thumbs_down")
        reason = record.get("feedback_reason")
        evidence.append("thumbs down" + (f": {_clip(reason)}" if reason else ""))
    if record.get("reasked"):
        signals.append("reasked")
        evidence.append("the user asked again")
    if not signals:
        return None

    if refused or record.get("handed_off"):
        cause = "generation" if useful_ids else "knowledge base"
        if useful_ids:
            evidence.append("useful chunk retrieved: " + ", ".join(useful_ids[:3]))
        elif useful:
            evidence.append("no retrieved chunk was useful")
        else:
            evidence.append("no retrieved chunk was judged" if ids else "nothing retrieved")
    elif "irrelevant_contexts" in signals:
        cause = "retrieval"
    elif "unfaithful" in signals or "off_topic" in signals:
        cause = "generation"
    else:
        cause = "unknown"
    return {
        "query_id": record["id"], "question": record.get("query"), "at": record.get("at"),
        "type": "production", "correctness": None, "faithfulness": faith,
        "attribution": cause, "signals": signals, "evidence": evidence,
        "reason": "; ".join(evidence),
    }


def sort_cases(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Most signals first, then the newest, then by id: the same records, the same order."""
    cases = sorted(cases, key=lambda c: c["query_id"])
    cases.sort(key=lambda c: c.get("at") or "", reverse=True)
    cases.sort(key=lambda c: -len(c["signals"]))
    return cases
