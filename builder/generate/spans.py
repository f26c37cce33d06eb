"""Stage 1, code only: the answers worth asking about, chosen by code before any question exists.

Answer-first generation: code picks a short span of a statement -- a value (amount, percentage,
duration, date, quantity, count; with the words that bound it, "up to £150"), a name (a
capitalised phrase, an acronym, a code identifier, a quoted or bold term) or a table cell -- and
the model only writes the question for it (questions.py). What code chose is what the item's
answer is: the model cannot drift to another value of the sentence, copy the whole sentence, or
answer with two values where one was asked.

A span is kept only when the question can be unambiguous and worth asking:
- its statement reads as prose (enough function words of its language: a bibliography entry, a
  diagram's labels or a table of contents do not) or it is a table cell with a header;
- its statement is not a step of a numbered procedure (a step holds only inside its procedure);
- the answer occurs once in the statement, is not in the section title, and leaves at least
  `MIN_REST_TERMS` content terms for the question to name its subject with;
- a name is rare in the knowledge base (in at most `MAX_NAME_SHARE` of the chunks): the
  product's own name is an answer to everything.

`plan_spans` orders every accepted span for asking (kinds whose questions pass most often first,
then statements that hold fewer other values), and puts side by side the two halves of
what harder items are built from (compose.py), found by answers.py: *parallel* spans -- the
same statement frame about two different subjects (two table rows of one column, two rubric
levels, two plans), labelled by what tells them apart -- related values, and *bridges*: a name
answered in one chunk and mentioned next to a value in another.

Deterministic: the same chunks give the same spans, ids and order.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from functools import lru_cache

from builder.text.language import CJK_CHAR
from builder.text.lexicon import lexicon
from builder.text.markdown import cell_spans, line_blocks, plain, step_at
from builder.text.values import Value, bounded, find_values, split_bound

from builder.generate.answers import (PAIR_KINDS, VALUE_KINDS, Span, find_bridges, find_pairs,
                                      find_value_pairs)
from builder.generate.candidate import stable_id
from builder.generate.statements import extract_statements
from builder.generate.terms import key_terms, names_something

MIN_REST_TERMS = 3
MAX_NAME_SHARE = 0.08
MIN_STOPWORD_SHARE = 0.12   # share of a Latin-script statement's words that are function words
MIN_WORDS, MAX_WORDS = 5, 45
MAX_ANSWER_WORDS = 8
PRIORITY = {"amount": 0, "percent": 0, "duration": 0, "date": 0, "quantity": 0, "cell": 1,
            "year": 2, "count": 2, "name": 3}

_CODE = re.compile(r"`([^`\n]{2,60})`")
_ACRONYM = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]{1,6}s?(?![\w-])")
# inline TeX math: between two "$", holding a backslash, a "^", a "_" or a brace ("$5 and $10"
# holds none of them and stays money)
_MATH = re.compile(r"\$(?=[^$\n]*[\\^_{}])[^$\n]+\$")
_QUOTED = re.compile(r"[\"“«]\s?([^\"”»\n]{2,60}?)\s?[\"”»]")
# "**Scope**: works on well-defined tasks" -- a label and its value, as rubrics and option lists
# write them; the value is an answer, the label and the section name the question's subject
_LABELLED = re.compile(r"^\s*(?:\*\*|__)(?P<label>[^*_\n]{1,40})(?:\*\*|__)\s*[:：—–-]\s*(?P<value>.+)$")
MAX_LABELLED_WORDS = 10
MAX_COLUMN_WORDS = 4        # a longer header is a sentence, not a name a question can repeat
BUNDLES_PER_ITEM = 3   # span pairs asked early per wanted composed item


def prose_like(text: str, language: str) -> bool:
    """Whether `text` reads as a sentence of its language: a share of function words. Lists of
    names, citations and diagram labels have none; CJK text is not measured this way."""
    if CJK_CHAR.search(text):
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


def _listed(raw: str, codes: list[re.Match], i: int, stops: frozenset[str]) -> bool:
    """Whether code identifier `codes[i]` is one of an enumeration: joined to the one before or
    after it by nothing but a comma, a slash or one function word ("`RequestError` and
    `HTTPStatusError`", "`<span>` oder `<a>`"). A question for one of them has the others for
    answers as well: on the development runs 39 such spans were asked, 3 passed, all 3 wrong
    (unlisted identifiers: 154 asked, 42 passed, 31 right)."""
    def joined(a: re.Match, b: re.Match) -> bool:
        gap = raw[a.end():b.start()].strip()
        return gap in ("", ",", "/", "、") or gap.casefold() in stops
    return (i > 0 and joined(codes[i - 1], codes[i])) or \
        (i + 1 < len(codes) and joined(codes[i], codes[i + 1]))


def _names(fact: dict, raw: str) -> list[str]:
    """Names a question can ask for: code identifiers, acronyms, and capitalised phrases that
    are not the statement's first words (a label's lead word, "Evangelizes: ...", is not a name)."""
    text = fact["text"]
    codes = list(_CODE.finditer(raw))
    stops = lexicon(fact.get("language") or "en").stopwords
    listed = {m.group(1).strip().casefold() for i, m in enumerate(codes)
              if _listed(raw, codes, i, stops)}
    out = [m.group(1).strip() for m in codes]
    out += [m.group(0) for m in _ACRONYM.finditer(text) if m.start() > 0]
    for name in fact.get("entities") or []:
        at = text.find(name)
        before = text[:at].rstrip()
        # mid-sentence: after a lower-case word or a comma, not after a label or a list marker
        if at > 0 and name[:1].isupper() and before and (before[-1].islower() or before[-1] == ","):
            out.append(name)
    seen: set[str] = set(listed)  # however found: "RequestError" is a capitalised word too
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


def _cell_key(text: str) -> str:
    """A cell as both sides of `_fenced_rows`' comparison read it: the code block's raw row and
    the rendered table's parsed cell differ in markup, spacing and case, not in words."""
    return " ".join(plain(text).split()).casefold()


def _fenced_rows(text: str) -> list[set[str]]:
    """The rows of the code blocks of `text`, each as the set of its cells (`_cell_key`). A
    table whose row a code block also writes is that code rendered: the example of a syntax
    ("| Max | Planck |" after the Markdown that makes it), whose values answer nothing
    (development set: an unclear item in two of three runs of one KB)."""
    lines = text.split("\n")
    rows = []
    for block in line_blocks(lines):
        if block.kind == "code":
            for line in lines[block.start:block.end]:
                cells = {_cell_key(line[a:b]) for a, b in cell_spans(line)} - {""}
                if len(cells) >= 2:
                    rows.append(cells)
    return rows


def spans_of_chunk(chunk: dict, title: str) -> list[Span]:
    """Every answer span code accepts in one chunk, best first within the chunk."""
    language = chunk.get("language") or "en"
    out: list[Span] = []
    fenced = _fenced_rows(chunk["text"]) if "|" in chunk["text"] else []
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
        if cell and cell["entity"] and not names_something(cell["entity"]):
            continue  # a row named "1." or "E": no question can say which row it asks about
        if cell and any({_cell_key(cell["entity"]), _cell_key(cell["value"])} <= row
                        for row in fenced):
            continue  # a rendered example of the code block above it
        if cell:
            value = cell["value"].strip()
            if 0 < len(value.split()) <= MAX_ANSWER_WORDS and value.casefold() not in (
                    "yes", "no", "✓", "✔", "x", "-", "—"):
                vals = find_values(value, language)
                whole = len(vals) == 1 and vals[0].text.strip() == value  # "10 GB", not "D1 - Dev 1"
                candidates.append((value, "cell", vals[0] if whole else None))
        elif prose_like(text, language):
            # a value inside TeX math ("$e^{2i\\pi} = 1$") is a formula's, and its closing "$"
            # reads as a currency: none is an answer
            formulas = [m.span() for m in _MATH.finditer(text)]
            values = [v for v in find_values(text, language)
                      if not any(a < v.end and v.start < b for a, b in formulas)]
            ranges = _ranges(text, values)
            in_range = {id(v) for first, second in ranges for v in (first, second)}
            for first, second in ranges:  # the answer is the whole range, not one end of it
                candidates.append((text[first.start:second.end], second.kind, None))
            for v in values:
                if v.kind in VALUE_KINDS and id(v) not in in_range:
                    start, end = bounded(text, v.start, v.end, language)  # "up to £150"
                    candidates.append((text[start:end], v.kind, v))
            for name in _names(fact, raw):
                candidates.append((name, "name", None))
        # a list item's statement opens with its list's lead-in ("... entitlement of 2 weeks
        # following: the death of a child"), but its evidence is the item alone
        item_at = 0 if cell else len(text) - len(plain(raw))
        for answer, kind, value in candidates:
            key = answer.casefold()
            if not answer.strip() or key in title_cf or text.casefold().count(key) > 1:
                continue
            if text.casefold().find(key) < item_at:
                continue  # the lead-in says it, not this item: every item would ask it again
                # with evidence that does not hold it (development runs: 24 such spans asked,
                # 6 passed, none right)
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
                mention=cell_mention(cell) if cell else [],
                priority=PRIORITY[kind]))
    out.sort(key=lambda s: (s.priority, s.fact["seq"]))
    return out


def column_name(attribute: str | None) -> str | None:
    """A cell's column header (or a labelled value's label) as a question can name it: without
    its parenthesised gloss and brackets ("Junior (expérience < 2 ans)" -> "Junior",
    "[[Version history]]" -> "Version history"); none when it names nothing or reads as a
    sentence."""
    if not attribute:
        return None
    name = re.sub(r"\([^)]*\)", " ", plain(attribute))
    name = " ".join(re.sub(r"[\[\]*_`|]", " ", name).split()).strip(" :;,.-\u2013\u2014")
    return name if names_something(name) and len(name.split()) <= MAX_COLUMN_WORDS else None


def cell_mention(cell: dict) -> list[str]:
    """What a cell's question must name: its row, which tells it from the other rows, and its
    column, which says what the value is. A question that names the row only is free to call
    the value something else, and a small writer does ("the salary" for a column of daily
    rates, "the number of people" for a column of prices): the reader, shown the cell, agrees
    with any question that points at it."""
    out = [cell["entity"]] if cell.get("entity") else []
    column = column_name(cell.get("attribute"))
    if column and not any(column.casefold() in m.casefold() for m in out):
        out.append(column)
    return out


_RANGE_GAP = re.compile(r"\s*(?:[-\u2013\u2014]|[^\W\d_]{1,6}(?:\s+[^\W\d_]{1,6})?)\s*")


def _ranges(text: str, values: list[Value]) -> list[tuple[Value, Value]]:
    """A bare number that takes its unit from the value right after it, one or two short words
    (or a dash) between them: "4 à 10 mois", "between 5 and 10 days", "3 und 5 Tagen". The
    answer is the range: a question asked for one end gets the other end too from any reader,
    and an item that keeps one end misstates the text."""
    out = []
    for first, second in zip(values, values[1:]):
        if first.kind == "number" and second.kind in VALUE_KINDS \
                and _RANGE_GAP.fullmatch(text[first.end:second.start]):
            out.append((first, second))
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


def plan_spans(chunks: list[dict], titles: dict[str, str], seed: int,
               plan: dict[str, int] | None = None) -> list[Span]:
    """Every accepted span, ordered for asking: best kind first within each document (then the
    statements holding fewer other values), documents taken in turn (seeded order), so the
    first waves cover the knowledge base. When the plan wants harder items, the two halves of
    what they are built from -- parallel spans, related values, bridges -- are asked side by
    side early (a bundle, then a single span, in turn): a composed item needs both halves
    verified, which a run that asks them far apart rarely gets."""
    spans: list[Span] = []
    for c in chunks:
        spans.extend(spans_of_chunk(c, titles[c["id"]]))
    common = common_names(spans, len(chunks), {c["id"]: c["text"] for c in chunks})
    spans = [s for s in spans if not (s.kind == "name" and s.answer.casefold() in common)]
    parallel = find_pairs(spans)  # labels parallel spans, so their questions name what tells them apart
    by_doc: dict[str, list[Span]] = defaultdict(list)
    for s in spans:
        by_doc[s.document_id].append(s)
    rng = random.Random(seed)
    docs = sorted(by_doc)
    rng.shuffle(docs)
    for d in docs:
        group = by_doc[d]
        rng.shuffle(group)
        group.sort(key=lambda s: (s.priority, _unbounded(s), _crowding(s)))
        # one span per statement first: several values of one sentence make similar questions
        seen: set[str] = set()
        first = [s for s in group if not (s.fact["id"] in seen or seen.add(s.fact["id"]))]
        rest = [s for s in group if s not in first]
        by_doc[d] = first + rest
    singles: list[Span] = []
    while any(by_doc[d] for d in docs):
        for d in docs:
            if by_doc[d]:
                singles.append(by_doc[d].pop(0))
    bundles = _bundles(spans, parallel, plan or {})
    if not bundles:
        return singles
    ordered: list[Span] = []
    placed: set[str] = set()
    rest = iter(singles)
    for bundle, kind in bundles:
        for s, other in (bundle, bundle[::-1]):
            s.bundled = True
            if kind == "pair" and other.id not in s.partners:
                s.partners.append(other.id)  # a stranded half is asked again in its partner's words
        for s in bundle:
            if s.id not in placed:
                ordered.append(s)
                placed.add(s.id)
        for s in rest:
            if s.id not in placed:
                ordered.append(s)
                placed.add(s.id)
                break
    ordered.extend(s for s in singles if s.id not in placed)
    return ordered


def _unbounded(span: Span) -> int:
    """0 for a value stated with its bound ("up to 18 weeks", "at least 26 weeks", "25 jours
    maximum": the lexicon's bounds), else 1. A bounded value states a rule, and the sentence
    says what it bounds, so the question asks for that limit: on the development KBs (an
    English handbook and a French guide, seven runs each) 0.37 of the bounded values asked
    became right items, 0.10 of the others (each KB alike: 0.39 against 0.18, 0.34 against
    0.06), and the verified ones were right 62% of the time against 35%."""
    return 0 if split_bound(span.answer, span.language)[0] else 1


def _crowding(span: Span) -> int:
    """How many other values share the span's statement (at most 2): a statement holding one
    value asks one thing, while beside others the question must say which and the reader picks
    among them. On the development KBs a span whose statement held one value was verified about
    one time in two, with two values one in three, with three or more one in four."""
    return min(2, max(0, len(find_values(span.statement, span.language)) - 1))


def _bundles(spans: list[Span], parallel: list,
             plan: dict[str, int]) -> list[tuple[tuple[Span, Span], str]]:
    """The span pairs harder items of the plan are built from, a few per wanted item (both
    halves must pass their own round trips), kinds taken in turn; each with its kind, "pair"
    (two values or parallel spans: their questions can be worded alike) or "bridge"."""
    from_pairs = sum(plan.get(k, 0) for k in PAIR_KINDS)
    lists: list[list[tuple[tuple[Span, Span], str]]] = []
    if from_pairs:
        taken = {s.id for p in parallel for s in (p.a, p.b)}
        # parallel spans that are comparable values first (they serve every pair kind)
        pairs = [(p.a, p.b) for p in parallel if p.comparable] + [
            (p.a, p.b) for p in find_value_pairs(spans, taken)]
        lists.append([(pr, "pair") for pr in _spread(pairs)[: BUNDLES_PER_ITEM * from_pairs]])
    if plan.get("multi_hop", 0):
        lists.append([(pr, "bridge") for pr in _spread([(b.first, b.second)
                                                        for b in find_bridges(spans)])
                      [: BUNDLES_PER_ITEM * plan["multi_hop"]]])
    out: list[tuple[tuple[Span, Span], str]] = []
    for i in range(max((len(x) for x in lists), default=0)):
        out.extend(x[i] for x in lists if i < len(x))
    return out


def _spread(pairs: list[tuple[Span, Span]]) -> list[tuple[Span, Span]]:
    """`pairs` with their documents taken in turn, each document's own order kept: one table
    of twenty parallel rows must not fill every harder item of a run."""
    by_doc: dict[str, list[tuple[Span, Span]]] = defaultdict(list)
    for pair in pairs:
        by_doc[pair[0].document_id].append(pair)
    out: list[tuple[Span, Span]] = []
    queues = list(by_doc.values())
    for i in range(max((len(q) for q in queues), default=0)):
        out.extend(q[i] for q in queues if i < len(q))
    return out
