"""Harder items composed from verified single-hop items: code decides, the model phrases
only what code cannot (an ambiguous rewrite, a bridge's description, a sibling's name).

Every part of a composed item is an item that already passed its own round trip (its question,
answer and span checked), and the composed item keeps the parts' ids (`parent_id`, `fact_ids`,
its verification names them). What the small model could get wrong -- the answer -- is computed
or copied by code:

- comparative: two verified items whose answers are values of one kind and unit (two amounts,
  two durations, two dates...): the two parts' own questions, then a sentence per language
  asking which value is higher (later); the answer, the larger value, is code's. No call;
- reasoning: the same pairs; the two questions, then a sentence asking for the difference; the
  answer is code's subtraction. No call.
  Where pairs run out, a threshold: one verified item whose answer is a ceiling or a floor ("up
  to 18 weeks", "at least 26 weeks": the lexicon's bounds); code picks an amount past it (twice
  a ceiling, half a floor) and asks, after the part's own question, whether that amount is
  within the limit (a sentence file per direction, every language); the answer is code's "no"
  with the limit. No model call: asked to write that question, the 1.5B model turned who pays
  around, asked whether the amount was "excessive", or wrote it as a limit ("within 28 days"),
  and its reader said "yes" to most of them (development set);
- ambiguous: two verified *parallel* items (answers.find_pairs: one frame, two labels); code
  takes the label out of the first question when it stands there (the model drops it
  otherwise); the question must name neither label, keep what the part asks, and find both
  parts' passages (BM25 top k); the answer lists every reading, by code (every row of a table
  column, not just the two parts). Where no parallel spans were planned, two verified items
  whose questions are the same words but for one short phrase each (alike_pairs: "... cannot
  *connect* within the time limit?", "... cannot *send data* within ...") are such a pair, the
  phrases their labels; the model rewrites the question without them (a phrase is often a
  verb, which code cannot take out and leave a question) and every alike question's answer is
  a reading;
- multi_hop: item A answers a name that item B's question holds, in another chunk; the model
  replaces the name in B's question by A's description of it; the answer is B's; the name must
  be gone, neither chunk alone may hold both hops, and a reader over both sentences must answer
  B's answer;
- unanswerable: a verified question whose name the model swaps for a sibling of the same kind
  that appears nowhere in the knowledge base; the retrieval round trip must then find nothing.
  The model offers three siblings in one call and code keeps the first that passes its checks
  (most are words the knowledge base already uses).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property

from pydantic import BaseModel, Field, model_validator

from builder.store import candidates as cstore
from builder.text.language import language_name
from builder.text.lexicon import lexicon
from builder.text.values import (Value, bound_direction, find_values,
                                  magnitudes, rate_of, split_bound)

from builder.generate import reader
from builder.generate.answers import Span, find_pairs, find_value_pairs
from builder.generate.candidate import clean_question, kept_passed, stable_id
from builder.generate.context import RunContext, run_units
from builder.generate.form import contains, document_ref_problem, language_problem, shape_problem
from builder.generate.knowledge import TOP_K, KbWords, KnowledgeIndex, pick_sentences
from builder.generate.models import one_as_list
from builder.generate.terms import key_terms

COMPOSED = ("comparative", "reasoning", "ambiguous", "multi_hop", "unanswerable")
# the prompt of each kind a model phrases; code writes comparatives and reasoning items
PROMPTS = {"ambiguous": "compose_ambiguous", "multi_hop": "compose_multi_hop",
           "unanswerable": "compose_unanswerable"}
MAX_USES = 2           # a verified item is a part of at most this many composed items
MAX_TOPIC_SHARE = 0.2  # a word in more chunks than this is what the whole KB is about
STAGE = "compose"


class Rewritten(BaseModel):
    question: str


class Siblings(BaseModel):
    """The sibling finder's reply: a few names of the kind of the one to replace."""

    names: list[str] = Field(min_length=1, max_length=5)

    @model_validator(mode="before")
    @classmethod
    def _one(cls, data):
        return one_as_list(data, "names", "name")


@dataclass
class Part:
    """A verified single-hop item with what composing needs."""

    cand: dict
    span: Span | None
    value: Value | None

    @property
    def question(self) -> str:
        return self.cand["question"]

    @property
    def answer(self) -> str:
        return self.cand["answer"]

    @property
    def language(self) -> str:
        return self.cand.get("language") or "en"

    @cached_property
    def period(self) -> str:
        """The period its answer's value is counted over ("month"), or "" (values.rate_of):
        a monthly amount and a total are no two sizes of one thing."""
        return rate_of(self.answer, self.language)


def parts_of(ctx: RunContext, spans: list[Span]) -> list[Part]:
    # an item states its span's answer, or a count's bare number (Span.answer_for)
    by_key = {(s.fact["id"], a): s for s in spans for a in {s.answer_for(s.answer), s.answer}}
    out = []
    for c in kept_passed(cstore.load_candidates(ctx.store)):
        if c["type"] != "single_hop":
            continue
        span = by_key.get((c.get("seed_fact_id"), c["answer"]))
        values = find_values(c["answer"], c.get("language") or "en")
        value = span.value if span and span.value else (values[0] if len(values) == 1 else None)
        out.append(Part(c, span, value))
    return sorted(out, key=lambda p: p.cand["id"])  # not commit order: runs must agree


# ------------------------------------------------------------------ answers computed by code

def _format_number(x: float, template: str, language: str) -> str:
    decimal_comma = lexicon(language).code not in ("en", "zh", "ja", "ko")
    if abs(x - round(x)) < 1e-9:
        s = f"{int(round(x)):,}"
        sep = "," if re.search(r"\d,\d{3}", template) else "." if re.search(r"\d\.\d{3}(?!\d)", template) \
            else " " if re.search(r"\d[ \u00a0]\d{3}", template) else ""
        return s.replace(",", sep)
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return s.replace(".", ",") if decimal_comma else s


def with_number(template: str, x: float, language: str) -> str:
    """`template` (a value as written, "£1,200 per year") with its number replaced by `x`."""
    m = re.search(r"\d[\d.,\u00a0\u202f ]*\d|\d", template)
    if not m:
        return template
    return template[:m.start()] + _format_number(x, m.group(0), language) + template[m.end():]


def _bare(p: Part) -> str:
    """The part's answer without its bound: a difference of two ceilings ("up to £150", "up to
    £110") is "£40", not "up to £40"."""
    return split_bound(p.answer, p.language)[1]


def _unit_words(p: Part) -> str:
    return re.sub(r"[\d.,\s\u00a0]+", " ", _bare(p)).strip().casefold()


def difference_answer(a: Part, b: Part) -> str | None:
    """The difference of two comparable values written in the same unit ("12 weeks" - "6
    weeks" = "6 weeks", "$49" - "$19" = "$30"); None for dates, years and values written in
    different units (a difference of "52 weeks" and "10 days" in days reads like a trick) or
    under different bounds: which of "25 days" and "up to 5 days" is larger holds, their
    difference is no fact (nor that of a ceiling and a minimum)."""
    va, vb = a.value, b.value
    if va is None or vb is None or va.kind in ("date", "year") or _unit_words(a) != _unit_words(b):
        return None
    if split_bound(a.answer, a.language)[0].casefold() != split_bound(b.answer, b.language)[0].casefold():
        return None
    big, small = (a, b) if va.magnitude >= vb.magnitude else (b, a)
    diff = big.value.magnitude - small.value.magnitude
    if diff <= 0:
        return None
    # the template: the answer whose number means the least per unit
    template = min((big, small), key=lambda p: p.value.magnitude / max(_leading(p), 1e-9))
    per_unit = template.value.magnitude / max(_leading(template), 1e-9)
    return with_number(_bare(template), diff / per_unit, template.language)


def _leading(p: Part) -> float:
    nums = re.findall(r"\d[\d.,]*", _bare(p))
    from builder.text.values import parse_number
    n = parse_number(nums[0], p.language) if nums else None
    return n or 1.0


# ------------------------------------------------------------------ pairing

def value_pairs(parts: list[Part], spans: list[Span]) -> list[tuple[Part, Part]]:
    """Pairs of items with comparable, different values from different statements, planned
    from the spans: parallel spans, and related values (answers.find_value_pairs: one document,
    one kind and unit, a word in common next to each value); then verified items asked alike.
    Any two verified items whose questions shared a content word were paired too until
    2026-12-05: on the development runs none of the 12 the model phrased from such pairs passed
    (it named two things that were no two of a kind, a holiday allowance and a carry-over cap);
    questions the same but for one short phrase (`alike_frame`) ask one thing's size for two of
    a kind, and code now phrases the item."""
    by_span = {p.span.id: p for p in parts if p.span}
    parallel = find_pairs(spans)
    taken = {s.id for pr in parallel for s in (pr.a, pr.b)}
    out = []
    # a planned pair is comparable as planned (answers.Pair.comparable): two values of one
    # kind and unit, or two numbers of one table column ("370" and "450" of a rates column),
    # which the bundles asked side by side for this
    for pr in [pr for pr in parallel if pr.comparable] + find_value_pairs(spans, taken):
        a, b = by_span.get(pr.a.id), by_span.get(pr.b.id)
        if a and b and _comparable(a, b):
            out.append((a, b))
    # and two verified items asked alike ("the daily rate of a junior developer", "... of a
    # junior designer"; alike_frame) with values of one kind and unit: one thing's size for
    # two of a kind, which plans that did not pair their spans still verified
    paired = {frozenset((a.cand["id"], b.cand["id"])) for a, b in out}
    for a, b, *_ in alike_pairs([p for p in parts if p.value]):
        if frozenset((a.cand["id"], b.cand["id"])) not in paired and _comparable(a, b) \
                and a.value.kind == b.value.kind \
                and (a.value.kind in ("date", "year") or _unit_words(a) == _unit_words(b)):
            out.append((a, b))
    return out


def _comparable(a: Part, b: Part) -> bool:
    """Two values one can say is the larger: different, and counted over the same period."""
    return bool(a.value and b.value and a.value.magnitude != b.value.magnitude
                and a.period == b.period)


def parallel_pairs(parts: list[Part], spans: list[Span]) -> list[tuple[Part, Part]]:
    by_span = {p.span.id: p for p in parts if p.span}
    out = []
    for pair in find_pairs([s for s in spans]):
        a, b = by_span.get(pair.a.id), by_span.get(pair.b.id)
        if a and b and pair.a.label and pair.b.label:
            out.append((a, b))
    return out


MAX_PHRASE = 4    # words in which two alike questions may differ
MIN_FRAME = 0.6   # share of the longer question's words the two must have in common
MIN_FRAME_TERMS = 2  # content words the words they have in common must hold


def _words(question: str) -> list[tuple[int, int, str]]:
    """The question's words: (start, end, casefolded word)."""
    return [(m.start(), m.end(), m.group(0).casefold()) for m in re.finditer(r"\w+", question)]


def _shared_ends(lists: list[list[tuple[int, int, str]]]) -> tuple[int, int]:
    """How many words every one of `lists` (of `_words`) has in common at its start, and then,
    not overlapping those, at its end."""
    shortest = min(len(w) for w in lists)
    before = 0
    while before < shortest and len({w[before][2] for w in lists}) == 1:
        before += 1
    after = 0
    while after < shortest - before and len({w[-1 - after][2] for w in lists}) == 1:
        after += 1
    return before, after


def alike_frame(qa: str, qb: str) -> tuple[str, str, str, str] | None:
    """(the phrase of `qa`, the phrase of `qb`, the words before, the words after) when the two
    questions are the same words but for one short phrase each ("... when the client cannot
    *connect* within the time frame?", "... cannot *send data* within ..."): at most
    MAX_PHRASE words each, both holding a content word, the words around them at least
    MIN_FRAME of the longer question and MIN_FRAME_TERMS content words. Words are compared,
    not characters: any language written with spaces; None for scripts written without
    them."""
    ta, tb = _words(qa), _words(qb)
    p, s = _shared_ends([ta, tb])
    ma, mb = ta[p:len(ta) - s], tb[p:len(tb) - s]
    if not ma or not mb or len(ma) > MAX_PHRASE or len(mb) > MAX_PHRASE \
            or p + s < max(3, MIN_FRAME * max(len(ta), len(tb))):
        return None
    la, lb = qa[ma[0][0]:ma[-1][1]], qb[mb[0][0]:mb[-1][1]]
    before, after = " ".join(w for *_, w in ta[:p]), " ".join(w for *_, w in ta[len(ta) - s:])
    # a frame of one content word ("what is the duration of the ...?") makes any two
    # questions of a kind alike: it must say what both ask about
    if not key_terms(la) or not key_terms(lb) \
            or len(key_terms(f"{before} {after}")) < MIN_FRAME_TERMS:
        return None
    return la, lb, before, after


def alike_pairs(parts: list[Part]) -> list[tuple[Part, Part, str, str]]:
    """Two verified items of different statements whose questions become the same question
    once the phrase that tells them apart is removed (`alike_frame`), with different answers:
    the material of an ambiguous item where no parallel spans were planned (a reference page's
    "the exception raised when it cannot connect / send data", a rubric's two requirements
    asked alike). Each with its two phrases. A part is in one pair at most: a third question
    alike to both is a reading of their item (alike_readings), not another item ("cannot
    *send* data" and "cannot *read* data" would make a second one)."""
    out = []
    paired: set[str] = set()
    for i, a in enumerate(parts):
        for b in parts[i + 1:]:
            if a.cand["id"] in paired or b.cand["id"] in paired \
                    or a.cand.get("seed_fact_id") == b.cand.get("seed_fact_id") \
                    or contains(a.answer, b.answer) or contains(b.answer, a.answer):
                continue
            frame = alike_frame(a.question, b.question)
            if frame and not (contains(frame[0], b.answer) or contains(frame[1], a.answer)):
                paired.update((a.cand["id"], b.cand["id"]))
                out.append((a, b, frame[0], frame[1]))
    return out


def alike_readings(a: Part, b: Part, parts: list[Part]) -> list[tuple[str, str]]:
    """Every reading of the ambiguous question built from alike `a` and `b`: each verified item
    whose question is alike to either of theirs (`alike_frame`) is one (a page's four timeout
    errors, asked "cannot *connect*", "cannot *receive data*", "cannot *send data*", "cannot
    *acquire a connection*", are all readings of a question built from two of them, whichever
    two), each labelled by the words its question does not share with the others, in the
    knowledge base's order."""
    group = [a, b]
    for x in parts:
        if all(x is not p and not contains(p.answer, x.answer) for p in group) \
                and (alike_frame(a.question, x.question) or alike_frame(b.question, x.question)):
            group.append(x)
    words = [_words(p.question) for p in group]
    before, after = _shared_ends(words)

    def place(p: Part) -> tuple:
        evidence = (p.cand.get("evidence") or [{}])[0]
        return evidence.get("chunk_id", ""), evidence.get("start", 0)
    out = []
    for p, w in sorted(zip(group, words), key=lambda pw: place(pw[0])):
        middle = w[before:len(w) - after]
        out.append((p.question[middle[0][0]:middle[-1][1]] if middle else "", p.answer))
    return out


def bridges(parts: list[Part]) -> list[tuple[Part, Part]]:
    out = []
    for a in parts:
        if a.span is None or a.span.kind != "name":
            continue
        for b in parts:
            if b is a or b.cand["chunk_ids"][:1] == a.cand["chunk_ids"][:1]:
                continue
            if contains(b.question, a.answer) and not contains(b.answer, a.answer):
                out.append((a, b))
    return out


def names_in(p: Part) -> list[str]:
    """Names of the question a sibling can replace: its span's label or required words, then
    capitalised phrases, acronyms and identifiers of the question that its statement holds."""
    out = list(p.span.mention) if p.span else []
    statement = p.span.statement if p.span else ""
    q = p.question
    for m in re.finditer(r"`[^`]+`|(?<![\w-])[A-Z][A-Z0-9]{1,6}s?(?![\w-])|"
                         r"(?<=\w )[A-Z][\w-]+(?: [A-Z][\w-]+){0,3}", q):
        name = m.group(0).strip("`")
        if len(name) >= 2 and contains(statement, name) and not contains(p.answer, name):
            out.append(name)
    seen: set[str] = set()
    return [n for n in out if not (n.casefold() in seen or seen.add(n.casefold()))]


def topic_words(p: Part, chunk_text: str, words: KbWords, limit: int = 2) -> list[str]:
    """Words of the question that its statement holds, that its own chunk is about (frequent in
    that chunk, rare across the knowledge base) and that fill a slot other words fill too
    (`KbWords.fills_a_slot`), best first: what a sibling replaces when the question has no
    name ("jury" service leave -> "military" service leave, a leave the knowledge base never
    states)."""
    statement = p.span.statement if p.span else ""
    content = key_terms(p.question)
    own = chunk_text.casefold()
    scored = []
    for w in dict.fromkeys(re.findall(r"[^\W\d_]{4,}", p.question)):
        low = w.casefold()
        if not key_terms(w) or not key_terms(w) <= content or contains(p.answer, w) \
                or not re.search(rf"(?<!\w){re.escape(w)}(?!\w)", statement, re.I):
            continue
        tf = len(re.findall(rf"(?<!\w){re.escape(low)}(?!\w)", own))
        if tf < 2 or words.df.get(low, 0) / max(1, words.n_chunks) > MAX_TOPIC_SHARE \
                or not words.fills_a_slot(w, p.question):
            continue
        scored.append((-tf * math.log(words.n_chunks / max(1, words.df.get(low, 1))), w))
    return [w for _, w in sorted(scored)][:limit]


def near_spelling(a: str, b: str) -> bool:
    """`a` is `b` with one letter added, dropped or two neighbours swapped ("adooption",
    "adoption"): a typo of the word, not another thing ("paternity" for "maternity" is)."""
    a, b = a.casefold(), b.casefold()
    if a == b or min(len(a), len(b)) < 4:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] \
            and a[diff[1]] == b[diff[0]]
    long, short = (a, b) if len(a) > len(b) else (b, a)
    return len(long) == len(short) + 1 and any(long[:i] + long[i + 1:] == short
                                               for i in range(len(long)))


# ------------------------------------------------------------------ composing

def _sentences(*parts: Part) -> list[dict]:
    out = []
    for p in parts:
        title = " > ".join((p.span.title if p.span else "").split(" > ")[-2:])
        sent = p.span.statement if p.span else p.cand["evidence"][0]["quote"]
        out.append({"text": f"{title}: {sent}" if title else sent, "sentence": sent})
    return out


def _row(ctype: str, question: str, answer: str, parts: list[Part], ctx: RunContext,
         prompt: str, model: str | None, key: str, versions: dict | None = None) -> dict:
    """A composed candidate row; `versions` ({prompt or file: version}) defaults to the
    composing prompt's and the reader's."""
    facts_ids, chunk_ids, hops, evidence = [], [], [], []
    for p in parts:
        facts_ids += p.cand["fact_ids"]
        for cid in p.cand["chunk_ids"]:
            if cid not in chunk_ids:
                chunk_ids.append(cid)
                hops.append([cid])
        evidence += p.cand["evidence"]
    if ctype == "unanswerable":
        chunk_ids, hops, evidence = [], [], []
    return {
        "id": stable_id(ctype, [p.cand["id"] for p in parts], prompt, key),
        "type": ctype, "question": question, "answer": answer,
        "language": parts[0].language, "chunk_ids": chunk_ids, "hops": hops,
        "evidence": evidence, "fact_ids": facts_ids,
        "seed_fact_id": parts[0].cand.get("seed_fact_id"),
        "parent_id": parts[0].cand["id"], "part_ids": [p.cand["id"] for p in parts],
        "document_id": parts[0].cand.get("document_id"),
        "generator_model": model or ctx.model(),
        "prompts": versions or {prompt: ctx.prompts[prompt].version,
                                "reader": ctx.prompts["reader"].version},
        "verdict": "pending", "rejection_reasons": [],
    }


def _decide(row: dict, checks: list[tuple[str, str | None]]) -> dict:
    """Set the verdict from (check, problem) pairs: passed only when every problem is None."""
    row["verification"] = [{"check": c, "passed": p is None, "reason": p or "", "source": "code"}
                           for c, p in checks]
    failed = [f"{c}: {p}" for c, p in checks if p]
    row["verdict"] = "failed" if failed else "passed"
    row["rejection_reasons"] = failed
    return row


def _asked_alike(a: Part, b: Part) -> str | None:
    """A problem when either part's question has no content word the other's lacks: asked in
    the same words, the two values cannot be told apart."""
    ta, tb = key_terms(a.question), key_terms(b.question)
    return "the two questions ask the same thing" if not (ta - tb and tb - ta) else None


def _form(question: str, language: str) -> list[tuple[str, str | None]]:
    return [("form", shape_problem(question)), ("form", language_problem(question, language)),
            ("form", document_ref_problem(question, language))]


def _joined(*texts: str) -> str:
    """Sentences written one after the other: with a space, or none after a sentence of a script
    written without spaces (it ends with a wide mark, "？", or a character)."""
    out = texts[0]
    for t in texts[1:]:
        wide = out[-1:] and unicodedata.east_asian_width(out[-1]) in "WF"
        out = f"{out}{'' if wide else ' '}{t}"
    return out


def _asks_both(ctx: RunContext, source: str, a: Part, b: Part, ctype: str,
               answer: str) -> dict:
    """A comparative or a difference, with no LLM call: the two parts' own questions (each
    already shown by its round trip to ask for its value, alone, in the knowledge base's
    language) and then the sentence of `source` for their language ("Which of the two values is
    higher?"); the answer is code's. Asked to name the two things in one question, the 1.5B
    model called daily rates salaries, compared a total with a yearly cap as two groups, or named
    a document title as a party (development labels: 7 of 30 comparatives right)."""
    sentences = ctx.sentences[source]
    q = _joined(a.question, b.question, sentences.get(a.language) or sentences["en"])
    versions = {**(a.cand.get("prompts") or {}), source: stable_id(sentences.get(a.language)
                                                                   or sentences["en"])[:8]}
    row = _row(ctype, q, answer, [a, b], ctx, source, "code", "", versions)
    # two questions asking the same words leave no way to tell which value is which (names);
    # one stating the other's value gives it away (leak; over the parts' questions only: the
    # sentence's "two" states no value)
    stated = magnitudes(f"{a.question} {b.question}", a.language) & (
        magnitudes(a.answer, a.language) | magnitudes(b.answer, b.language))
    return _decide(row, [("form", shape_problem(q)), ("names", _asked_alike(a, b)),
                         ("leak", "the question states a value" if stated else None)])


def comparative(ctx: RunContext, a: Part, b: Part) -> dict:
    """Which of two comparable values is the larger (the later, for dates): code's answer is
    the larger value, then the other ("25 days > up to 5 days")."""
    later = a.value.kind in ("date", "year")
    win, lose = (a, b) if a.value.magnitude > b.value.magnitude else (b, a)
    return _asks_both(ctx, "compare_later.md" if later else "compare_greater.md", a, b,
                      "comparative", f"{win.answer} > {lose.answer}")


def difference(ctx: RunContext, a: Part, b: Part) -> dict | None:
    """The difference of two values of one unit and bound (`difference_answer`), or None."""
    answer = difference_answer(a, b)
    if answer is None:
        return None
    return _asks_both(ctx, "compare_difference.md", a, b, "reasoning", answer)


def threshold_amount(p: Part, within: bool = False) -> str | None:
    """An amount past the part's limit, written like its answer: twice a ceiling ("up to 18
    weeks" -> "36 weeks"), half a floor ("at least 26 weeks" -> "13 weeks"), halfway to 100% for
    a percentage ceiling; far enough that a strict bound ("less than") and a loose one ("up to")
    give the same answer. With `within`, an amount inside it the same way: half a ceiling
    ("9 weeks"), twice a floor ("52 weeks"), halfway to 100% for a percentage floor. None for a
    bare, approximate or date value, a number written in words (code rewrites digits only: "up
    to two weeks" would be asked about "two weeks" again), a halved amount under 4 (half of 2
    is 1: "1 days"), a doubled 1 ("2 week": the unit is written for one) or a share so near
    100% that the amount past it rounds to 100%."""
    direction = bound_direction(p.answer, p.language)
    if direction is None or p.value is None or p.value.kind in ("date", "year") \
            or not re.search(r"\d", _bare(p)):
        return None
    n = _leading(p)
    halve = (direction == "floor") != within  # past a floor, or within a ceiling
    if p.value.kind == "percent" and not halve:
        amount = round((n + 100) / 2)
        if amount >= 100:  # 99.9% would ask about "100%": no share is more than that
            return None
    elif halve:
        if n < 3 or (within and n < 4):
            return None
        amount = math.floor(n / 2) if n >= 4 else n / 2
    else:
        if n <= 1:  # "1 week" doubled reads "2 week": the unit stays singular
            return None
        amount = n * 2
    return with_number(_bare(p), amount, p.language)


def threshold_units(p: Part) -> tuple | None:
    """The threshold a verified limit gives: past it (answer no) or within it (answer yes),
    one or the other by a hash of the part's id, so about half of a run's thresholds answer
    yes (a set whose every answer is no is passed by a model that always says no); past it
    when no amount within it can be written."""
    within = int(stable_id("threshold", p.cand["id"]), 16) % 2 == 0
    if within and (amount := threshold_amount(p, within=True)):
        return (p, amount, "within")
    amount = threshold_amount(p)
    return (p, amount) if amount else None


async def threshold(ctx: RunContext, p: Part, amount: str, within: str = "") -> dict:
    """A reasoning item from one verified limit, with no LLM call: the part's own question (its
    round trip already showed it asks for the limit, alone, in the KB's language) followed by
    the sentence of `threshold_ceiling.md` or `threshold_floor.md` for its language, asking
    whether `amount` (`threshold_amount`: past the limit, or with `within` inside it) is within
    it; the answer is no (yes) with the limit. Past a ceiling or short of a floor the no holds
    for an entitlement ("up to 18 weeks"), a deadline ("within 30 days") and a condition ("more
    than 50 staff") alike; inside them, the yes."""
    source = f"threshold_{bound_direction(p.answer, p.language)}.md"
    sentences = ctx.sentences[source]
    template = sentences.get(p.language) or sentences["en"]
    ask = template.replace("{amount}", amount)
    q = _joined(p.question, ask)
    words = lexicon(p.language)
    answer = f"{(words.answer_yes if within else words.answer_no).capitalize()}: {p.answer}"
    # the part's prompts wrote the question; the sentence's own text is the file's version
    versions = {**(p.cand.get("prompts") or {}), source: stable_id(template)[:8]}
    row = _row("reasoning", q, answer, [p], ctx, source, "code", amount, versions)
    return _decide(row, [("form", shape_problem(q))])


def without_label(question: str, label: str, language: str) -> str | None:
    """`question` with `label` taken out by code, when it stands there as whole words
    ("How many days of annual leave do part-time staff get?" without "part-time" -> "How many
    days of annual leave do staff get?"); a label that ends the question takes the function
    words before it along ("What is the scope of a D1?" -> "What is the scope?"); every time it
    stands there. None when the label is not there (a word of a compound is no label). On the
    development runs the small model, asked to drop a label, gave the question back unchanged
    4 times in 4."""
    pieces = re.split(rf"(?<![\w-]){re.escape(label)}(?![\w-])", question, flags=re.IGNORECASE)
    if len(pieces) == 1:
        return None
    head = " ".join(pieces[:-1]).split()
    tail = pieces[-1].strip()
    if not re.sub(r"[\s?？!.。]", "", tail):  # the label ended the question
        stops = lexicon(language).stopwords
        while head and head[-1].casefold() in stops:
            head.pop()
    out = " ".join([*head, *tail.split()])
    out = re.sub(r"\s+([?？!.,;:])", r"\1", out)
    return out if out != question and key_terms(out) else None


def readings(a: Part, b: Part, spans: list[Span]) -> list[tuple[str, str]]:
    """(label, answer) of every reading an ambiguous question built from `a` and `b` has: for
    two cells of one table column, every labelled row of that column, in table order (a
    question without the row is as ambiguous among five profiles as among two: listing two
    would misstate it); otherwise the two parts."""
    cell = a.span.fact.get("cell")  # parallel parts always have their spans
    if cell and cell.get("attribute"):
        column = [s for s in spans if s.chunk_id == a.span.chunk_id and s.label
                  and (s.fact.get("cell") or {}).get("attribute") == cell["attribute"]]
        column.sort(key=lambda s: s.fact["seq"])
        rows = list(dict.fromkeys((s.label, s.answer) for s in column))
        if (a.span.label, a.span.answer) in rows and (b.span.label, b.span.answer) in rows:
            return rows
    return [(a.span.label, a.answer), (b.span.label, b.answer)]


async def ambiguous(ctx: RunContext, a: Part, b: Part, kb: KnowledgeIndex,
                    spans: list[Span] | None = None, labels: tuple[str, str] | None = None,
                    parts: list[Part] | None = None) -> dict | None:
    """From two parallel parts (their spans' labels), or from two alike questions (`labels`:
    the phrases that tell them apart, alike_pairs). A label is a noun's modifier ("part-time
    staff"), which code can take out and leave a question; an alike question's phrase is as
    often a verb ("cannot *connect* within"), which leaves none: the model rewrites those."""
    la, lb = labels or (a.span.label, b.span.label)
    q = None if labels else without_label(a.question, la, a.language)
    model = "code"
    if q is None:  # the label is not in the question's words: the model rewrites it
        res = await ctx.call("compose_ambiguous", {"language": language_name(a.language),
                                                   "question": a.question,
                                                   "question2": b.question, "first": la,
                                                   "second": lb}, Rewritten)
        if not res.ok:
            return None
        q, model = clean_question(res.value.question), res.model
    every = alike_readings(a, b, parts or [a, b]) if labels else readings(a, b, spans or [])
    answer = "; ".join(f"{label}: {value}" for label, value in every)
    row = _row("ambiguous", q, answer, [a, b], ctx, "compose_ambiguous", model, "")
    frame = key_terms(a.question) - key_terms(la)
    kept = len(frame & key_terms(q)) / max(1, len(frame))
    found = {c["id"] for c in kb.search(q, TOP_K)}
    checks = _form(q, a.language) + [
        ("labels", None if not (contains(q, la) or contains(q, lb)) else "still names one reading"),
        ("frame", None if kept >= 0.5 else "no longer asks what the parts ask"),
        ("leak", None if not (contains(q, a.answer) or contains(q, b.answer)) else
         "the question contains an answer"),
        ("retrieval", None if {*a.cand["chunk_ids"], *b.cand["chunk_ids"]} <= found else
         f"the question does not find both passages (BM25 top {TOP_K})")]
    return _decide(row, checks)


async def multi_hop(ctx: RunContext, a: Part, b: Part, kb: KnowledgeIndex) -> dict | None:
    res = await ctx.call("compose_multi_hop", {
        "language": language_name(b.language), "question1": a.question, "name": a.answer,
        "question2": b.question, "answer2": b.answer}, Rewritten)
    if not res.ok:
        return None
    q = clean_question(res.value.question)
    row = _row("multi_hop", q, b.answer, [a, b], ctx, "compose_multi_hop", res.model, "")
    description = key_terms(a.question) - key_terms(b.question)
    chunk_b = next((c["text"] for c in kb.chunks if c["id"] == b.cand["chunk_ids"][0]), "")
    chunk_a = next((c["text"] for c in kb.chunks if c["id"] == a.cand["chunk_ids"][0]), "")
    checks = _form(q, b.language) + [
        ("bridge", None if not contains(q, a.answer) else "names the bridge"),
        ("hop1", None if description & key_terms(q) else "does not describe the bridge"),
        ("necessity", None if (description - key_terms(chunk_b)) and not contains(chunk_a, b.answer)
         else "one chunk answers it alone"),
        ("leak", None if not contains(q, b.answer) else "the question contains its answer")]
    if all(p is None for _, p in checks):
        got = await reader.ask(ctx, q, _sentences(a, b), b.language)
        problem = "reader call failed" if got is None else (
            reader.states_reference(b.answer, got.answer, b.language) if got.grounded else
            "the reader found no answer")
        checks.append(("reader", problem))
    return _decide(row, checks)


Checks = list[tuple[str, str | None]]


def _best(options: list[tuple[dict, Checks]]) -> tuple[dict, Checks]:
    """Of the siblings offered (each a row and its code checks), the first whose checks all
    pass; else the one with fewest problems, so a failed row says why the best one failed."""
    return min(options, key=lambda o: sum(p is not None for _, p in o[1]))


async def unanswerable(ctx: RunContext, p: Part, name: str,
                       kb: KnowledgeIndex) -> dict | None:
    others = [n for n in names_in(p) if n != name] or ["-"]
    sentence = p.span.statement if p.span else p.cand["evidence"][0]["quote"]
    res = await ctx.call("compose_unanswerable", {"sentence": sentence, "question": p.question,
                                                  "name": name, "others": ", ".join(others)},
                         Siblings)
    if not res.ok:
        return None
    # the name with its abbreviation, if the question writes one after it: "Statutory Shared
    # Parental Pay (ShPP)" swapped for "Childcare Allowance" must not keep "(ShPP)"
    pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)(?:\s*\([^()\s]{{1,12}}\))?", re.I)
    refusal = _refusal(ctx, p.language)
    words = re.findall(r"\w+", p.question)

    def option(offered: str) -> tuple[dict, Checks]:
        sibling = " ".join(offered.split()).strip(" .,:;\"'`")
        q = pattern.sub(lambda _: sibling, p.question, count=1)
        row = _row("unanswerable", q, refusal, [p], ctx, "compose_unanswerable", res.model,
                   sibling)
        typo = any(near_spelling(x, y) for x in sibling.split() for y in words)
        # a common word (not a capitalised name, an acronym or a code) must be spelt like the
        # knowledge base's language: names read the same in any language, words do not
        foreign = [w for w in re.findall(r"[^\W\d_]{3,}", sibling)
                   if w.islower() and not kb.words.spelt_like_the_kb(w)]
        return row, [
            # "Designer Senior" for "Designer" is that thing again, named more narrowly
            ("sibling", None if sibling and not contains(sibling, name)
             and len(sibling.split()) <= 5 and not any(ch in sibling for ch in "?{}[]")
             and not typo and not contains(p.question, sibling)
             else "no usable sibling name"),
            ("language", None if not foreign else
             f"{foreign[0]!r} is not spelt like the knowledge base's words"),
            # a sibling the knowledge base names is one it may well answer about
            ("absent", None if sibling and sibling.casefold() not in kb.text
             else f"the knowledge base mentions {sibling!r}")]

    row, checks = _best([option(n) for n in res.value.names])
    if all(pr is None for _, pr in checks):
        q = row["question"]
        hits = kb.search(q, TOP_K)
        sentences = pick_sentences(q, hits, kb.titles)
        got = await reader.ask(ctx, q, sentences, p.language) if sentences else reader.Reply("")
        # an answer read from a sentence about the replaced name answers that name, not the
        # sibling (a small reader overlooks the swap); one from any other sentence may be a
        # rule for everyone ("every plan includes ..."): then the knowledge base answers it
        checks.append(("refusal", "reader call failed" if got is None else
                       None if not got.grounded or contains(got.sentence, name)
                       else f"the reader answered {got.answer!r}"))
    row["offered"] = list(dict.fromkeys(res.value.names))
    return _decide(row, checks)


def _refusal(ctx: RunContext, language: str) -> str:
    sentences = ctx.sentences["refusals.md"]
    return sentences.get(language) or sentences.get("en") or ""


# ------------------------------------------------------------------ the stage

def _key(kind: str, *args) -> str:
    """The ledger key of a unit: its kind, its parts' ids and its other arguments (a
    sibling's name, a threshold's amount)."""
    return stable_id(STAGE, kind, [x.cand["id"] for x in args if isinstance(x, Part)],
                     [x for x in args if isinstance(x, str)])


async def compose_from_verified(ctx: RunContext, kb: KnowledgeIndex, spans: list[Span],
                                plan: dict[str, int], on_verified=None, fill: int = 0) -> None:
    """Compose what the targets still miss from the verified items there are now; each unit
    (kind + parts) is done once, committed with its ledger row.

    `fill` (how many items the run may still add; pipeline._fill passes it once n items are
    verified and at the run's end): every harder place still open, whatever its kind, up to
    `fill`, goes to a threshold, which code builds with no call from any verified limit not used
    up: a knowledge base of rules has many limits and few parallel values, bridges or names to
    swap. Places no limit is left for go to comparatives of pairs not compared yet (no call),
    then, where the plan has the kind (not with a local model), to ambiguous items of alike
    questions (one call each): a reference of names has few limits and many questions asked
    alike. Only at those points, so that the passes before plan what an interrupted and resumed
    run plans (a threshold counted early takes a difference's place)."""
    parts = parts_of(ctx, spans)
    if len(parts) < 1:
        return
    pool = cstore.load_candidates(ctx.store)
    have = {k: sum(1 for c in pool if c["type"] == k and c["verdict"] == "passed"
                   and not c.get("duplicate_of")) for k in COMPOSED}
    tried = {k: sum(1 for c in pool if c["type"] == k) for k in COMPOSED}
    if fill:  # every open place, whatever its kind, is a threshold's
        want = {"reasoning": min(fill, sum(plan.get(k, 0) for k in COMPOSED) - sum(have.values()))}
    else:
        want = {k: plan[k] - have[k] for k in COMPOSED if plan.get(k, 0) > have[k]}
    done = cstore.done_keys(ctx.store, STAGE)
    # how often each part (by its statement) is already used: every part of a composed item
    # counts, so a resumed run plans the units an uninterrupted one planned
    uses: dict[str, int] = {}
    for c in pool:
        if c["type"] != "single_hop":
            for fid in c.get("fact_ids") or []:
                uses[fid] = uses.get(fid, 0) + 1
    units: list[tuple[str, tuple]] = []

    def room(*ps: Part) -> bool:
        return all(uses.get(p.cand["seed_fact_id"], 0) < MAX_USES for p in ps)

    def take(kind: str, candidates, limit_tries: int) -> None:
        if want.get(kind, 0) <= 0 or tried[kind] >= limit_tries:
            return
        for args in candidates:
            if want[kind] <= 0:
                break
            ps = [x for x in args if isinstance(x, Part)]
            key = _key(kind, *args)
            if key in done or not room(*ps):
                continue
            for p in ps:
                uses[p.cand["seed_fact_id"]] = uses.get(p.cand["seed_fact_id"], 0) + 1
            units.append((kind, (key, *args)))
            want[kind] -= 1

    cap = 4 * max(want.values(), default=0) + 4
    thresholds = [unit for p in parts if (unit := threshold_units(p))]
    pairs = value_pairs(parts, spans)
    if fill:
        take("reasoning", thresholds, cap + len(thresholds))
        # places no threshold was left for: a comparative of a pair not compared yet (no
        # call either), then, where the plan has ambiguous items, one from two alike questions
        # (one call), the one other kind a knowledge base of names and few values gives
        want["comparative"], want["reasoning"] = want["reasoning"], 0
        take("comparative", pairs, cap + len(pairs))
        if plan.get("ambiguous"):  # not where the plan left the kind out (a local model)
            want["ambiguous"], want["comparative"] = want["comparative"], 0
            alike = alike_pairs(parts)
            take("ambiguous", alike, cap + len(alike))
    else:
        # ambiguous first: a part serves MAX_USES items, and planned after the comparative and
        # the difference of the same pair it never found one with room (none on the development
        # runs)
        take("ambiguous", parallel_pairs(parts, spans) + alike_pairs(parts), cap)
        take("comparative", pairs, cap)
        # a pair compared is not asked its difference too: the same two questions again
        compared = done | {key for kind, (key, *_) in units if kind == "comparative"}
        take("reasoning", [pr for pr in pairs if difference_answer(*pr) and
                           _key("comparative", *pr) not in compared], cap)
        take("reasoning", thresholds, cap)
        take("multi_hop", bridges(parts), cap)
        # a name the whole KB is about (the company, the product) is no sibling's to replace
        n_chunks = len(kb.chunks)

        def rare(name: str) -> bool:
            return kb.text.count(name.casefold()) <= max(2, 0.05 * n_chunks)

        take("unanswerable", [(p, name) for p in parts for name in (
            [x for x in names_in(p) if rare(x)]
            + topic_words(p, kb.text_of.get(p.cand["chunk_ids"][0], ""), kb.words))[:1]], cap)
    if not units:
        return

    async def one(unit: tuple[str, tuple]) -> None:
        kind, (key, *args) = unit
        if kind == "comparative":
            row = comparative(ctx, *args)
        elif kind == "reasoning" and isinstance(args[1], str):
            row = await threshold(ctx, *args)
        elif kind == "reasoning":
            row = difference(ctx, *args)
        elif kind == "ambiguous":
            a, b, *labels = args
            row = await ambiguous(ctx, a, b, kb, spans, labels=tuple(labels) or None, parts=parts)
        elif kind == "multi_hop":
            row = await multi_hop(ctx, *args, kb)
        else:
            row = await unanswerable(ctx, *args, kb)
        if row is None:
            return
        row.pop("verification_answer", None)
        offered = row.pop("offered", [])  # the ledger keeps every sibling the model offered
        cstore.record_candidates(ctx.store, [row], stage=STAGE, key=key,
                                 info={"kind": kind, "candidate_id": row["id"],
                                       "offered": offered})
        if row["verdict"] == "passed" and on_verified:
            on_verified(row)

    # one prompt at a time, so the server reuses each prompt's computed prefix
    for kind in COMPOSED:
        await run_units(ctx, f"compose {kind}", [u for u in units if u[0] == kind], one)
