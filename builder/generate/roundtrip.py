"""Stage 3, the retrieval round trip: a question must find its own passage, and be answered the
same way.

Alberti et al. (2019) keep a generated question only when answering it again gives the same
answer. golden makes that round trip as a user's RAG system would meet the question:

1. retrieval: the question alone, through golden's own BM25 over the WHOLE knowledge base
   (knowledge.py), must find the chunk it was written from first: no passage that lacks the
   answer may rank above it (a copy of the passage, an older version of the page, may). A
   question that leans on context it does not state ("What is the deadline?") finds other
   chunks first and fails, in any language. Top `TOP_K` would let such questions through: on
   the development KBs, 24 of 31 read items whose passage came 2nd to 5th were wrong, against
   88 of 221 found first;
2. reading: the sentences of those chunks most like the question (`MAX_SENTENCES`, each with
   its section) go to the reader (reader.py), which copies the shortest words that answer;
2b. specificity, by code (rivals.py): when a sentence that does not state the answer, but another value of
   its kind, fits the question at least as well as the answer's own sentence, the question does
   not tell them apart ("What is the deadline?" beside two deadlines): rejected without a call;
3. comparing, by code: the reply must be words of a sentence it was shown, and must state the
   reference -- the same numbers and no other (two values where one was asked is a vague
   question), or most of the reference's terms for a name -- and say no more than it: every
   content word of the reply must be the reference's or the question's (`says_more`). A reply
   of more ("gzip and deflate" for "deflate", "New York" for "York") means the question asks
   for more than the answer code chose; on the development labels 14 of the 15 verified items
   that fail this alone were wrong.

Competing sentences are in the reader's view on purpose: a question that does not pin its
subject down (another plan, another level, another threshold answers it) gets another answer.

The reader sees short sentences, not whole chunks: prompt tokens are what a round trip costs on
a small local model, and a sentence with its section is what the answer needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from builder.store import candidates as cstore

from builder.generate.candidate import stable_id
from builder.generate.context import RunContext, run_units
from builder.generate.form import contains
from builder.generate.knowledge import MAX_SENTENCES, TOP_K, KnowledgeIndex, score_sentences
from builder.generate.reader import ask, says_more, states_reference
from builder.generate.rivals import rival

STAGE_READ = "read"


@dataclass
class Reading:
    """What a round trip found. `problem` is None when the item passed."""

    problem: str | None
    answer: str = ""
    rank: int | None = None          # the source chunk's place in the retrieval, from 1
    sentences: int = 0
    status: str = "ok"               # the reader call's status


@dataclass
class Retrieval:
    """The code half of a round trip (no call): where the question finds its passage, and the
    sentences the reader would see. `problem` is None when the reader may be asked."""

    problem: str | None
    rank: int | None = None
    sentences: list[dict] = field(default_factory=list)


def retrieve(question: str, reference: str, source_chunk: str, language: str,
             kb: KnowledgeIndex) -> Retrieval:
    """Steps 1 and 2b of the module doc: retrieval over the whole KB, then specificity."""
    hits = kb.search(question, TOP_K)
    rank = next((i for i, h in enumerate(hits, 1) if h["id"] == source_chunk), None)
    if rank is None:
        return Retrieval("retrieval: the question alone does not find its passage (BM25 top "
                         f"{TOP_K})")
    if any(not contains(h["text"], reference) for h in hits[:rank - 1]):
        return Retrieval(f"retrieval: the question finds another passage first (its own comes "
                         f"{rank}{_nth(rank)})", rank)
    scored = score_sentences(question, hits, kb.titles)
    if not scored:
        return Retrieval("retrieval: no sentence shares a term with the question", rank)
    if (other := rival(question, reference, language, scored)) is not None:
        return Retrieval("specificity: another sentence fits the question as well and states "
                         f"another answer ({other['sentence'][:80]!r})", rank)
    return Retrieval(None, rank, scored[:MAX_SENTENCES])


def _nth(n: int) -> str:
    return {1: "st", 2: "nd", 3: "rd"}.get(n, "th")


async def round_trip(ctx, question: str, reference: str, source_chunk: str, language: str,
                     kb: KnowledgeIndex) -> Reading:
    """Retrieve, read, compare (see the module doc). One reader call at most; none when the
    retrieval already fails."""
    found = retrieve(question, reference, source_chunk, language, kb)
    if found.problem is not None:
        return Reading(found.problem, rank=found.rank)
    sentences, rank = found.sentences, found.rank
    reply = await ask(ctx, question, sentences, language)
    if reply is None:
        return Reading("reader call failed", rank=rank, sentences=len(sentences), status="error")
    answer, grounded = reply.answer, reply.grounded
    if not grounded:
        return Reading("the reader found no answer in the sentences" if not answer else
                       f"the reader's answer {answer!r} is not in the sentences", answer=answer,
                       rank=rank, sentences=len(sentences))
    problem = states_reference(reference, answer, language) or says_more(reference, answer,
                                                                         question, language)
    return Reading(problem, answer=answer, rank=rank, sentences=len(sentences))


async def read_pending(ctx: RunContext, kb: KnowledgeIndex, on_verified=None) -> None:
    """The retrieval round trip for every pending single-hop candidate; verdicts stored."""
    pending = [c for c in cstore.load_candidates(ctx.store, verdict="pending")
               if c["type"] == "single_hop"]

    async def one(cand: dict) -> None:
        reading = await round_trip(ctx, cand["question"], cand["answer"],
                                          cand["chunk_ids"][0], cand["language"] or "en", kb)
        if reading.status != "ok":
            return  # the call failed: stays pending, read again next run
        passed = reading.problem is None
        check = {"check": "round_trip", "passed": passed, "reason": reading.problem or "",
                 "source": "code+reader", "answer": reading.answer, "rank": reading.rank}
        cstore.record_verification(
            ctx.store, cand["id"], verification=[check], verdict="passed" if passed else "failed",
            rejection_reasons=[] if passed else [f"round_trip: {reading.problem}"],
            stage=STAGE_READ, key=stable_id(STAGE_READ, cand["id"]))
        if passed and on_verified:
            on_verified({**cand, "verdict": "passed"})

    await run_units(ctx, "round trips", pending, one)
