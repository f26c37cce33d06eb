"""The retrieval round trip: a question must find its own passage, and be answered the same way.

Alberti et al. (2019) keep a generated question only when answering it again gives the same
answer. golden makes that round trip as a user's RAG system would meet the question:

1. retrieval: the question alone, through golden's own BM25 over the WHOLE knowledge base; the
   chunk it was written from must be in the top `TOP_K`. A question that leans on context it
   does not state ("What is the deadline?") finds other chunks and fails, in any language;
2. reading: the sentences of those chunks most like the question (`MAX_SENTENCES`, each with
   its section) go to the reader (`reader.prompt`), which copies the shortest words that answer;
2b. specificity, by code: when a sentence that does not state the answer, but another value of
   its kind, fits the question at least as well as the answer's own sentence, the question does
   not tell them apart ("What is the deadline?" beside two deadlines): rejected without a call;
3. comparing, by code: the reply must be words of a sentence it was shown, and must state the
   reference -- the same numbers and no other (two values where one was asked is a vague
   question), or most of the reference's terms for a name.

Competing sentences are in the reader's view on purpose: a question that does not pin its
subject down (another plan, another level, another threshold answers it) gets another answer.

The reader sees short sentences, not whole chunks: prompt tokens are what a round trip costs on
a small local model, and a sentence with its section is what the answer needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
import re
from functools import cached_property, lru_cache

from builder.text.bm25 import BM25
from builder.text.lexicon import all_stopwords
from builder.text.locate import locate_span
from builder.text.markdown import plain, section_heading
from builder.text.values import find_values, magnitudes

from builder.generate.models import ReaderReply  # noqa: F401 (re-exported for estimate)
from builder.generate.statements import extract_statements
from builder.generate.terms import key_terms, stem, tokens

PROMPT = "reader"
TOP_K = 4
MAX_SENTENCES = 6
MIN_RECALL = 0.75


@dataclass
class Reading:
    """What a round trip found. `problem` is None when the item passed."""

    problem: str | None
    answer: str = ""
    rank: int | None = None          # the source chunk's place in the retrieval, from 1
    sentences: int = 0
    status: str = "ok"               # the reader call's status


def search_terms(text: str) -> list[str]:
    """What retrieval matches on: word tokens (CJK bigrams), function words of every supported
    language left out, lightly stemmed."""
    stops = all_stopwords()
    return [stem(t) for t in tokens(text) if t not in stops]


MIN_SLOT_FILLERS = 3   # other words written in a topic word's place: it has siblings


class KnowledgeIndex:
    """The whole knowledge base as the round trip searches it: chunks, their titles, BM25."""

    def __init__(self, chunks: list[dict], titles: dict[str, str]):
        self.chunks = chunks
        self.titles = titles
        self._bm25 = BM25([f"{titles.get(c['id'], '')}\n{c['text']}" for c in chunks],
                          search_terms)

    def search(self, question: str, k: int = TOP_K) -> list[dict]:
        return [self.chunks[i] for i, _ in self._bm25.top(question, k)]

    @cached_property
    def text(self) -> str:
        """Every chunk's text, casefolded: what "the knowledge base mentions X" searches."""
        return "\n".join(c["text"] for c in self.chunks).casefold()

    @cached_property
    def text_of(self) -> dict[str, str]:
        return {c["id"]: c["text"] for c in self.chunks}

    @cached_property
    def words(self) -> KbWords:
        return KbWords.of(self.chunks)


@dataclass
class KbWords:
    """What the knowledge base says about its words: in how many chunks each occurs, and for
    each word the words written right before and right after it (the slots it fills)."""

    df: dict[str, int]
    n_chunks: int
    before: dict[str, set[str]]
    after: dict[str, set[str]]

    @classmethod
    def of(cls, chunks: list[dict]) -> "KbWords":
        df: dict[str, int] = {}
        before: dict[str, set[str]] = {}
        after: dict[str, set[str]] = {}
        for c in chunks:
            words = re.findall(r"[^\W\d_]+", c["text"].casefold())
            for w in set(words):
                df[w] = df.get(w, 0) + 1
            for x, y in zip(words, words[1:]):
                before.setdefault(y, set()).add(x)
                after.setdefault(x, set()).add(y)
        return cls(df, len(chunks), before, after)

    def fills_a_slot(self, word: str, question: str) -> bool:
        """`word` is one of several different words the knowledge base writes in the same place
        next to the question's neighbouring word ("jury" of "jury service leave" beside
        "maternity leave", "sabbatical leave"...): a kind of thing with siblings, whose
        sibling makes a question of the same shape. "home" of "home office" is not."""
        words = re.findall(r"[^\W\d_]+", question.casefold())
        low = word.casefold()
        for i, w in enumerate(words):
            if w != low:
                continue
            for neighbour, fillers in ((words[i + 1] if i + 1 < len(words) else None, self.before),
                                       (words[i - 1] if i > 0 else None, self.after)):
                if neighbour and key_terms(neighbour):
                    others = {f for f in fillers.get(neighbour, set()) - {low} if key_terms(f)}
                    if len(others) >= MIN_SLOT_FILLERS:
                        return True
        return False


@lru_cache(maxsize=4096)
def _sentences(chunk_id: str, text: str, title: str) -> tuple[tuple[str, str], ...]:
    """(sentence, its section) for each statement of a chunk. The section is the heading right
    above the statement when the chunk holds several ("D3 - Developer 3" over its "Scope: ..."),
    else the chunk's own: what tells one section's sentence from another's."""
    rows = extract_statements({"id": chunk_id, "text": text, "document_id": ""})
    parts = title.split(" > ") if title else []
    out = []
    for r in rows:
        heading = section_heading(text, r["evidence_start"] or 0)
        heading = plain(heading).strip() if heading else ""
        own = parts[-1:] + [heading] if heading and heading not in parts else parts[-2:]
        out.append((r["text"], " > ".join(p for p in own if p)))
    return tuple(out)


def score_sentences(question: str, chunks: list[dict], titles: dict[str, str]) -> list[dict]:
    """Every sentence of `chunks` sharing a term with the question, best first: score is the
    idf-weighted (within these chunks) sum of the terms the sentence and its section share with
    the question; ties keep retrieval order. Each {"text" (with its section), "sentence",
    "chunk_id", "score", "own" (the sentence's own terms only)}."""
    want = key_terms(question)
    rows = []
    df: dict[str, int] = {}   # terms shared with the question, counted over sentences with sections
    for c in chunks:
        for sent, short in _sentences(c["id"], c["text"], titles.get(c["id"], "")):
            for t in key_terms(f"{short} {sent}") & want:
                df[t] = df.get(t, 0) + 1
    n = sum(len(_sentences(c["id"], c["text"], titles.get(c["id"], ""))) for c in chunks) or 1
    for rank, c in enumerate(chunks):
        for i, (sent, short) in enumerate(_sentences(c["id"], c["text"], titles.get(c["id"], ""))):
            shared = key_terms(f"{short} {sent}") & want
            score = sum(math.log(1 + n / df[t]) for t in shared)
            own = sum(math.log(1 + n / df[t]) for t in key_terms(sent) & want)
            if score > 0:
                rows.append((-score, rank, i, sent, short, c["id"], own))
    rows.sort()
    return [{"text": f"{short}: {sent}" if short else sent, "sentence": sent, "chunk_id": cid,
             "score": -neg, "own": own} for neg, _, _, sent, short, cid, own in rows]


def pick_sentences(question: str, chunks: list[dict], titles: dict[str, str],
                   limit: int = MAX_SENTENCES) -> list[dict]:
    """The `limit` sentences of `chunks` most like the question (`score_sentences`)."""
    return score_sentences(question, chunks, titles)[:limit]


def _holds(sentence: str, reference: str, language: str) -> bool:
    ref_nums = magnitudes(reference, language)
    if ref_nums:
        return ref_nums <= magnitudes(sentence, language)
    return reference.casefold() in sentence.casefold()


def rival(question: str, reference: str, language: str, scored: list[dict]) -> dict | None:
    """A sentence that fits the question at least as well as the best one stating the answer
    -- with its section and by its own words -- and states another answer of the same shape
    (another value of the answer's kind; for a name, any other sentence): the question does
    not tell them apart. Decided by code, before any reader call. None when the answer's
    sentence is not among them (nothing to compare)."""
    source = next((r for r in scored if _holds(r["sentence"], reference, language)), None)
    if source is None:
        return None
    kinds = {v.kind for v in find_values(reference, language)}
    for r in scored:
        if r["score"] < source["score"]:
            return None
        if r is source or _holds(r["sentence"], reference, language):
            continue
        if r["own"] < source["own"]:
            continue
        if not kinds or any(v.kind in kinds for v in find_values(r["sentence"], language)):
            return r
    return None


def states_reference(reference: str, got: str, language: str) -> str | None:
    """None when `got` states the reference answer; else why not."""
    if not got.strip():
        return "the reader found no answer"
    if len(got.split()) > max(8, 3 * len(reference.split())):
        return f"the reader answered with a whole sentence ({got!r}): the question asks for more"
    ref_nums = magnitudes(reference, language)
    got_nums = magnitudes(got, language)
    if ref_nums:
        if not ref_nums <= got_nums:
            return f"the reader answered {got!r}"
        if got_nums - ref_nums:
            return f"the reader answered {got!r}: another value too"
        return None
    ref_terms, got_terms = key_terms(reference), key_terms(got)
    if not ref_terms:
        return None if reference.strip().casefold() in got.casefold() else f"the reader answered {got!r}"
    recall = len(ref_terms & got_terms) / len(ref_terms)
    if recall >= MIN_RECALL and len(got_terms) <= 3 * len(ref_terms) + 2:
        return None
    return f"the reader answered {got!r}"


async def round_trip(ctx, question: str, reference: str, source_chunk: str, language: str,
                     kb: KnowledgeIndex) -> Reading:
    """Retrieve, read, compare (see the module doc). One reader call at most; none when the
    retrieval already fails."""
    titles = kb.titles
    hits = kb.search(question, TOP_K)
    rank = next((i for i, h in enumerate(hits, 1) if h["id"] == source_chunk), None)
    if rank is None:
        return Reading("retrieval: the question alone does not find its passage (BM25 top "
                       f"{TOP_K})")
    scored = score_sentences(question, hits, titles)
    if not scored:
        return Reading("retrieval: no sentence shares a term with the question", rank=rank)
    if (other := rival(question, reference, language, scored)) is not None:
        return Reading("specificity: another sentence fits the question as well and states "
                       f"another answer ({other['sentence'][:80]!r})", rank=rank)
    sentences = scored[:MAX_SENTENCES]
    reply = await ask(ctx, question, sentences)
    if reply is None:
        return Reading("reader call failed", rank=rank, sentences=len(sentences), status="error")
    answer, grounded = reply.answer, reply.grounded
    if not grounded:
        return Reading("the reader found no answer in the sentences" if not answer else
                       f"the reader's answer {answer!r} is not in the sentences", answer=answer,
                       rank=rank, sentences=len(sentences))
    return Reading(states_reference(reference, answer, language), answer=answer, rank=rank,
                   sentences=len(sentences))


RIVAL_SHARE = 0.5   # a sentence this close to the statement (of its score) can take its question
MAX_TELLING = 1


def telling_words(statement: str, answer: str, language: str, kb: KnowledgeIndex) -> list[str]:
    """Words of the statement that no close rival sentence (or its section) has: what a
    question must say so that `rival` finds none. The rivals are the sentences most like the
    statement itself that state another answer of its kind ("50 weeks of SPL" beside "37 weeks
    of ShPP" -> "SPL"); the rarest telling word in the knowledge base first. Empty when the
    statement has no rival, or nothing but function words tells them apart."""
    query = statement.replace(answer, " ")
    scored = score_sentences(query, kb.search(query, TOP_K), kb.titles)
    source = next((r for r in scored if r["sentence"] == statement), None)
    if source is None:
        return []
    kinds = {v.kind for v in find_values(answer, language)}
    rivals = [r for r in scored if r["score"] >= RIVAL_SHARE * source["score"]
              and not _holds(r["sentence"], answer, language)
              and (not kinds or any(v.kind in kinds for v in find_values(r["sentence"], language)))]
    if not rivals:
        return []
    theirs = set().union(*(key_terms(r["text"]) for r in rivals[:2]))
    telling = key_terms(source["text"]) - key_terms(answer) - theirs
    df = kb.words.df
    out: list[str] = []
    # the statement's own words (a section's words may be a link slug); one hyphen at most
    for word in sorted(set(re.findall(r"(?<![\w-])[^\W\d_]\w+(?:-\w+)?(?![\w-])", statement)),
                       key=lambda w: (df.get(w.casefold(), 0), w)):
        if key_terms(word) and key_terms(word) <= telling and word.casefold() not in {
                o.casefold() for o in out}:
            out.append(word)
        if len(out) >= MAX_TELLING:
            break
    return out


@dataclass
class Reply:
    """A reader's reply as code reads it: the answer, and the sentence it is words of (""
    when it is words of none: the model's own knowledge, or nothing)."""

    answer: str
    sentence: str = ""

    @property
    def grounded(self) -> bool:
        return bool(self.sentence)


async def ask(ctx, question: str, sentences: list[dict]) -> Reply | None:
    """One reader call; None when the call failed. The sentence the reader named is looked in
    first, then the others."""
    res = await ctx.call(PROMPT, {"sentences": [{"text": s["text"]} for s in sentences],
                                  "question": question}, ReaderReply, role="verifier")
    if not res.ok:
        return None
    answer = " ".join(res.value.answer.split()).strip(" .")
    if not answer or not any(ch.isalnum() for ch in answer):
        return Reply("")
    named = res.value.sentence
    order = sentences[named - 1:named] + sentences if 1 <= named <= len(sentences) else sentences
    for s in order:
        if locate_span(s["sentence"], answer, min_chars=1) is not None:
            return Reply(answer, s["sentence"])
    return Reply(answer)
