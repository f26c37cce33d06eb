"""Stage 1, code only: the answers worth asking about, chosen by code before any question exists.

Answer-first generation: code picks a short span of a statement -- a value (amount, percentage,
duration, date, quantity, count), a name (a capitalised phrase, an acronym, a code identifier,
a quoted or bold term) or a table cell -- and the model only writes the question for it
(questions.py). What code chose is what the item's answer is: the model cannot drift to another
value of the sentence, copy the whole sentence, or answer with two values where one was asked.

A span is kept only when the question can be unambiguous and worth asking:
- its statement reads as prose (enough function words of its language: a bibliography entry, a
  diagram's labels or a table of contents do not) or it is a table cell with a header;
- its statement is not a step of a numbered procedure (a step holds only inside its procedure);
- the answer occurs once in the statement, is not in the section title, and leaves at least
  `MIN_REST_TERMS` content terms for the question to name its subject with;
- a name is rare in the knowledge base (in at most `MAX_NAME_SHARE` of the chunks): the
  product's own name is an answer to everything.

`plan_spans` also finds what harder items are built from (compose.py): *parallel* spans -- the
same statement frame about two different subjects (two table rows of one column, two rubric
levels, two plans), labelled by what tells them apart -- and *bridges*: a name answered in one
chunk and mentioned next to a value in another.

Deterministic: the same chunks give the same spans, ids and order.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

from builder.text.lexicon import lexicon
from builder.text.markdown import plain, step_at
from builder.text.values import Value, comparable, find_values

from builder.generate.candidate import stable_id
from builder.generate.statements import extract_statements
from builder.generate.terms import key_terms, tokens

MIN_REST_TERMS = 3
MAX_NAME_SHARE = 0.08
MIN_STOPWORD_SHARE = 0.12   # share of a Latin-script statement's words that are function words
MIN_WORDS, MAX_WORDS = 5, 45
MAX_ANSWER_WORDS = 8
VALUE_KINDS = ("amount", "percent", "duration", "date", "quantity", "year", "count")
PRIORITY = {"amount": 0, "percent": 0, "duration": 0, "date": 0, "quantity": 0, "cell": 1,
            "year": 2, "count": 2, "name": 3}

_CODE = re.compile(r"`([^`\n]{2,60})`")
_ACRONYM = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]{1,6}s?(?![\w-])")
_QUOTED = re.compile(r"[\"“«]\s?([^\"”»\n]{2,60}?)\s?[\"”»]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
# "**Scope**: works on well-defined tasks" -- a label and its value, as rubrics and option lists
# write them; the value is an answer, the label and the section name the question's subject
_LABELLED = re.compile(r"^\s*(?:\*\*|__)(?P<label>[^*_\n]{1,40})(?:\*\*|__)\s*[:：—–-]\s*(?P<value>.+)$")
MAX_LABELLED_WORDS = 10


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

    @property
    def statement(self) -> str:
        return self.fact["text"]

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


def prose_like(text: str, language: str) -> bool:
    """Whether `text` reads as a sentence of its language: a share of function words. Lists of
    names, citations and diagram labels have none; CJK text is not measured this way."""
    if _CJK.search(text):
        return True
    words = [w.casefold() for w in re.findall(r"[^\W\d_]+", text)]
    if not (MIN_WORDS <= len(words) <= MAX_WORDS):
        return False
    stops = lexicon(language).stopwords
    return sum(w in stops for w in words) >= MIN_STOPWORD_SHARE * len(words)


@lru_cache(maxsize=None)
def _example_cues(language: str) -> re.Pattern:
    cues = set(lexicon(language).examples) | set(lexicon("en").examples)
    parts = [(r"(?<!\w)" if c[0].isalnum() else "") + re.escape(c) + (r"(?!\w)" if c[-1].isalnum() else "")
             for c in sorted(cues, key=len, reverse=True)]
    return re.compile("|".join(parts), re.I)


def illustrates(text: str, language: str) -> bool:
    """Whether a statement is a worked example or a supposed case ("For example, an employee
    earning $50,000 ..."): its values illustrate a rule, they are not the rule, and a question
    asked without the example's assumptions has no single answer."""
    return _example_cues(language).search(text) is not None


def _names(fact: dict, raw: str) -> list[str]:
    """Names a question can ask for: code identifiers, acronyms, and capitalised phrases that
    are not the statement's first words (a label's lead word, "Evangelizes: ...", is not a name)."""
    text = fact["text"]
    out = [m.group(1).strip() for m in _CODE.finditer(raw)]
    out += [m.group(0) for m in _ACRONYM.finditer(text) if m.start() > 0]
    for name in fact.get("entities") or []:
        at = text.find(name)
        before = text[:at].rstrip()
        # mid-sentence: after a lower-case word or a comma, not after a label or a list marker
        if at > 0 and name[:1].isupper() and before and (before[-1].islower() or before[-1] == ","):
            out.append(name)
    seen: set[str] = set()
    names = []
    for n in out:
        key = n.casefold()
        if key not in seen and n and len(n.split()) <= MAX_ANSWER_WORDS:
            seen.add(key)
            names.append(n)
    return names


def _plain_value(text: str) -> str:
    return plain(text).rstrip(" .;")


def _rest_terms(statement: str, answer: str) -> set[str]:
    return key_terms(statement.replace(answer, " ")) - key_terms(answer)


def spans_of_chunk(chunk: dict, title: str) -> list[Span]:
    """Every answer span code accepts in one chunk, best first within the chunk."""
    language = chunk.get("language") or "en"
    out: list[Span] = []
    for fact in extract_statements(chunk):
        text = fact["text"]
        raw = fact["evidence"]
        title_cf = title.casefold()
        if step_at(chunk["text"], fact.get("evidence_start")) or illustrates(text, language):
            continue
        cell = fact.get("cell")
        labelled = _LABELLED.match(raw)
        if not cell and labelled and 2 <= len(labelled.group("value").split()) <= MAX_LABELLED_WORDS:
            section = title.split(" > ")[-1] if title else ""
            cell = {"entity": section, "attribute": labelled.group("label").strip(),
                    "value": _plain_value(labelled.group("value"))}
        candidates: list[tuple[str, str, Value | None]] = []
        if cell:
            value = cell["value"].strip()
            if 0 < len(value.split()) <= MAX_ANSWER_WORDS and value.casefold() not in (
                    "yes", "no", "✓", "✔", "x", "-", "—"):
                vals = find_values(value, language)
                whole = len(vals) == 1 and vals[0].text.strip() == value  # "10 GB", not "D1 - Dev 1"
                candidates.append((value, "cell", vals[0] if whole else None))
        elif prose_like(text, language):
            for v in find_values(text, language):
                if v.kind in VALUE_KINDS:
                    candidates.append((v.text, v.kind, v))
            for name in _names(fact, raw):
                candidates.append((name, "name", None))
        for answer, kind, value in candidates:
            key = answer.casefold()
            if not answer.strip() or key in title_cf or text.casefold().count(key) > 1:
                continue
            if not cell and len(_rest_terms(text, answer)) < MIN_REST_TERMS:
                continue
            if kind == "name" and (answer.casefold() == text.casefold()
                                   or len(answer) < 2 or answer.isdigit()):
                continue
            out.append(Span(
                id=stable_id("span", fact["id"], answer), fact=fact, chunk_id=chunk["id"],
                document_id=chunk["document_id"], language=language, title=title,
                answer=answer, kind=kind, value=value,
                label=cell["entity"] if cell else None,
                # a cell's row (or a rubric entry's level) is what tells it from its siblings
                mention=[cell["entity"]] if cell and cell["entity"] else [],
                priority=PRIORITY[kind]))
    out.sort(key=lambda s: (s.priority, s.fact["seq"]))
    return out


def common_names(spans: list[Span], n_chunks: int, chunk_texts: dict[str, str]) -> set[str]:
    """Names that are no answer: found in more than MAX_NAME_SHARE of the chunks (at least 3),
    or one capitalised word the knowledge base also writes in lower case ("Direction", "Total":
    a common word capitalised by a list or a title, not a name)."""
    names = {s.answer.casefold() for s in spans if s.kind == "name"}
    words = {s.answer for s in spans if s.kind == "name" and re.fullmatch(r"[^\W\d_][^\W\d_A-Z]+", s.answer)
             and s.answer[0].isupper()}
    lower = {w.casefold() for w in words}
    written_lower: set[str] = set()
    for text in chunk_texts.values():
        written_lower.update(t for t in re.findall(r"\w+", text) if t in lower)
    counts: Counter = Counter()
    for text in chunk_texts.values():
        low = text.casefold()
        for name in names:
            if name in low:
                counts[name] += 1
    limit = max(3, MAX_NAME_SHARE * n_chunks)
    return {n for n, c in counts.items() if c > limit} | written_lower


# ------------------------------------------------------------------ parallel spans and bridges

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
                labels = (la, lb) if la and lb else None
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
            groups[(s.document_id, s.value.kind, s.value.unit)].append(s)
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
