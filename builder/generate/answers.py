"""Answer spans as data, and how two of them relate: what questions and harder items are made of.

A `Span` is an answer code chose in a statement (spans.py chooses them); a `Pair` is two spans
with the same frame about different subjects, or two comparable values about related things;
a `Bridge` is a name answered in one chunk and mentioned next to a value in another. The spans
stage orders its spans with these pairs side by side, and compose.py builds comparative,
reasoning, ambiguous and multi-hop items from them: both read them from here.

Deterministic: the same spans give the same pairs and bridges, in the same order.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

from builder.text.lexicon import all_stopwords, lexicon
from builder.text.markdown import plain
from builder.text.values import Value, comparable, rate_of

from builder.generate.candidate import stable_id
from builder.generate.terms import key_terms, names_something, tokens

VALUE_KINDS = ("amount", "percent", "duration", "date", "quantity", "year", "count")
PAIR_KINDS = ("comparative", "reasoning", "ambiguous")  # harder kinds built from a Pair


@lru_cache(maxsize=None)
def _passed_over(language: str) -> frozenset[str]:
    """Words `Span.nearby` passes over: function words of any language, and the words of the
    language's bounds ("up" of "up to")."""
    lex = lexicon(language)
    return all_stopwords() | {w for b in lex.bounds_before + lex.bounds_after for w in tokens(b)}


@dataclass
class Span:
    """An answer code chose, with what the question writer and the checks need."""

    id: str
    fact: dict                      # the statement (statements.py row)
    chunk_id: str
    document_id: str
    language: str
    title: str                      # "Document > Section": what names the subject
    answer: str
    kind: str                       # a value kind, "cell" or "name"
    value: Value | None = None
    label: str | None = None        # what tells this span from its parallel ones
    mention: list[str] = field(default_factory=list)  # words the question must contain
    priority: int = 3
    bundled: bool = False           # half of a pair or bridge a harder item is built from
    partners: list[str] = field(default_factory=list)  # ids of the spans it is paired with

    @property
    def statement(self) -> str:
        return self.fact["text"]

    @property
    def nearby(self) -> list[str]:
        """The content word right before the answer in its statement and the one right after
        it: what says what the answer is ("3 month *check* in", "8 weeks *notice*", "private
        health *screenings* - up to £150", "*reached* 12 months *service*"). A question that
        uses neither asks what such a value usually is, and a small writer's guess is often
        another thing the passage does not say (a check-in asked as an enrolment period, a
        notice as how long a change may be made). On the development KBs 68% of the verified
        items whose question used one were right, 34% of the others. A table cell's or a
        labelled value's neighbours are other cells: its row and column (`mention`) say it."""
        if self.mention:
            return []
        at = self.statement.find(self.answer)
        if at < 0:
            return []
        before = tokens(plain(self.statement[:at]))
        after = tokens(plain(self.statement[at + len(self.answer):]))
        own = key_terms(self.answer)
        skip = _passed_over(self.language)
        out: list[str] = []
        for side in (reversed(before), after):
            word = next((t for t in side if not t.isdigit() and t not in skip
                         and key_terms(t) and not key_terms(t) <= own), None)
            if word and word not in out:
                out.append(word)
        return out

    def answer_for(self, question: str) -> str:
        """The answer as the item states it. A count keeps the words of what it counts when the
        question does not name it ("200 Mo" for "What is the size limit of a file?") and is
        the bare number when it does ("8" for "How many face to face sessions ...?"): the
        words would repeat the question, and cut at a function word they read half a phrase."""
        if self.kind != "count" or self.value is None:
            return self.answer
        m = re.match(r"(.*?\d)\s+([^\W\d_]+)", self.answer)
        if not m:
            return self.answer
        asked = set(re.findall(r"[^\W\d_]+", question.casefold()))
        return m.group(1) if m.group(2).casefold() in asked else self.answer


@dataclass
class Pair:
    """Two spans with the same frame about different subjects (`a.label` vs `b.label`)."""

    a: Span
    b: Span

    @property
    def key(self) -> str:
        return stable_id("pair", self.a.id, self.b.id)

    @property
    def comparable(self) -> bool:
        """Both values are of one kind and unit, or two numbers of one table column."""
        a, b = self.a.value, self.b.value
        if a is None or b is None or a.magnitude == b.magnitude:
            return False
        same_column = self.a.kind == self.b.kind == "cell" and a.kind == b.kind
        return comparable(a, b) or same_column


@dataclass
class Bridge:
    """`first` answers a name; `second`'s statement mentions it next to its own answer."""

    first: Span
    second: Span
    name: str

    @property
    def key(self) -> str:
        return stable_id("bridge", self.first.id, self.second.id)


def _frame(span: Span) -> list[str]:
    return tokens(span.statement.replace(span.answer, " \x00 "))


def _label_from_diff(a: list[str], b: list[str]) -> tuple[str, str] | None:
    """The one segment two token lists differ by (1-4 tokens each side), or None."""
    ops = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
           if op[0] != "equal"]
    if len(ops) != 1:
        return None
    _, i1, i2, j1, j2 = ops[0]
    if not (1 <= i2 - i1 <= 4 and 1 <= j2 - j1 <= 4):
        return None
    return " ".join(a[i1:i2]), " ".join(b[j1:j2])


def _surface(statement: str, label_tokens: str) -> str | None:
    """The label as written in the statement (case and accents kept), from its tokens."""
    words = label_tokens.split()
    if not words:
        return None
    pattern = r"\W+".join(re.escape(w) for w in words)
    m = re.search(pattern, statement, re.I)
    return m.group(0) if m else None


def _heading_labels(a: Span, b: Span) -> tuple[str, str] | None:
    pa, pb = a.title.split(" > "), b.title.split(" > ")
    if len(pa) != len(pb) or pa == pb:
        return None
    diff = [(x, y) for x, y in zip(pa, pb) if x != y]
    return diff[-1] if len(diff) == 1 else None


def find_pairs(spans: list[Span], limit: int = 400) -> list[Pair]:
    """Parallel spans: table cells of one column in different rows, and statements whose
    frames (the statement with its answer as a slot) differ by one short segment -- the label --
    or not at all, the label then being the one heading they differ by. Each span is in at most
    one pair, best (most similar) first."""
    pairs: list[Pair] = []
    used: set[str] = set()
    # table columns
    by_column: dict[tuple, list[Span]] = defaultdict(list)
    for s in spans:
        cell = s.fact.get("cell")
        if s.kind != "name" and cell and cell.get("attribute"):
            by_column[(s.chunk_id, cell["attribute"].casefold())].append(s)
    for group in by_column.values():
        group = [s for s in group if s.label]
        for a, b in zip(group[::2], group[1::2]):
            if a.label.casefold() != b.label.casefold() and a.answer.casefold() != b.answer.casefold():
                pairs.append(Pair(a, b))
                used.update((a.id, b.id))
    # statement frames
    frames = {s.id: _frame(s) for s in spans if s.kind != "name" and not s.fact.get("cell")}
    by_id = {s.id: s for s in spans}
    postings: dict[str, list[str]] = defaultdict(list)
    for sid, frame in frames.items():
        for t in set(frame):
            if t != "\x00":
                postings[t].append(sid)
    for sid, frame in frames.items():
        if sid in used or len(pairs) >= limit:
            continue
        a = by_id[sid]
        shared: Counter = Counter()
        for t in set(frame):
            if len(postings.get(t, ())) <= 50:
                shared.update(postings.get(t, ()))
        best = None
        for other, n in shared.most_common(10):
            if other == sid or other in used:
                continue
            b = by_id[other]
            if b.kind != a.kind or b.fact["id"] == a.fact["id"] \
                    or b.answer.casefold() == a.answer.casefold():
                continue
            if n < 0.6 * max(len(set(frame)), len(set(frames[other]))):
                continue
            diff = _label_from_diff(frame, frames[other])
            labels = None
            if diff:
                la, lb = _surface(a.statement, diff[0]), _surface(b.statement, diff[1])
                labels = (la, lb) if la and lb and names_something(la) \
                    and names_something(lb) else None
            elif frame == frames[other]:
                labels = _heading_labels(a, b)
            if labels and labels[0].casefold() != labels[1].casefold():
                best = (b, labels)
                break
        if best:
            b, (la, lb) = best
            a.label, b.label = la, lb
            a.mention, b.mention = [la], [lb]
            pairs.append(Pair(a, b))
            used.update((a.id, b.id))
    return pairs


MIN_PAIR_RELATED = 0.15   # Jaccard of two statements' content terms (values left out)
NEAR = 4                  # words each side of a value that say what it measures


def _near_terms(span: Span) -> set[str]:
    at = span.statement.find(span.answer)
    if at < 0:
        return set()
    before = tokens(span.statement[:at])[-NEAR:]
    after = tokens(span.statement[at + len(span.answer):])[:NEAR]
    return key_terms(" ".join(before + after))


def find_value_pairs(spans: list[Span], taken: set[str] = frozenset(), limit: int = 200) -> list[Pair]:
    """Comparable values about related things: two value spans of one document, one kind and
    one unit, in different statements that share content terms or a section ("26 weeks" of
    maternity leave, "2 weeks" of paternity leave). What a comparative or a difference item is
    built from, found before any question is asked so that both halves are asked together.
    Each span in at most one pair (none of `taken`), most related first."""
    groups: dict[tuple, list[Span]] = defaultdict(list)
    for s in spans:
        if s.value is not None and s.kind in VALUE_KINDS and s.id not in taken:
            # a monthly amount and a total are no two sizes of one thing: the period is part of
            # the unit
            groups[(s.document_id, s.value.kind, s.value.unit, rate_of(s.answer, s.language))].append(s)
    scored: list[tuple[float, str, str, Span, Span]] = []
    for group in groups.values():
        terms = {s.id: key_terms(s.statement.replace(s.answer, " ")) for s in group}
        near = {s.id: _near_terms(s) for s in group}
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if a.fact["id"] == b.fact["id"] or a.value.magnitude == b.value.magnitude:
                    continue
                if not near[a.id] & near[b.id]:  # what each value measures: one word in common
                    continue
                ta, tb = terms[a.id], terms[b.id]
                related = len(ta & tb) / max(1, len(ta | tb)) + (0.2 if a.title == b.title else 0)
                if related >= MIN_PAIR_RELATED:
                    scored.append((-related, a.id, b.id, a, b))
    scored.sort(key=lambda x: x[:3])
    used: set[str] = set()
    out: list[Pair] = []
    for _, _, _, a, b in scored:
        if a.id in used or b.id in used:
            continue
        out.append(Pair(a, b))
        used.update((a.id, b.id))
        if len(out) >= limit:
            break
    return out


def find_bridges(spans: list[Span], limit: int = 100) -> list[Bridge]:
    """A name span of one chunk whose name another chunk's statement mentions beside a value
    span of its own (another document first)."""
    values_by_doc_text: list[Span] = [s for s in spans if s.kind in VALUE_KINDS or s.kind == "cell"]
    out: list[Bridge] = []
    seen: set[str] = set()
    for first in spans:
        if first.kind != "name" or len(out) >= limit:
            continue
        name = first.answer.casefold()
        if len(name) < 3:
            continue
        best = None
        for second in values_by_doc_text:
            if second.chunk_id == first.chunk_id or second.id in seen:
                continue
            if name not in second.statement.casefold() or name in second.answer.casefold():
                continue
            rank = (second.document_id == first.document_id, second.priority)
            if best is None or rank < best[0]:
                best = (rank, second)
        if best:
            second = best[1]
            seen.add(second.id)
            out.append(Bridge(first, second, first.answer))
    return out
