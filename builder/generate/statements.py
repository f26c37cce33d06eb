"""A chunk's atomic statements, cut out of its text by code: the material the stages read.

"Code builds the structure, the LLM writes the words": sentences, list items and table cells
are already atomic statements, and cutting them out by code gives exact spans, no invented
values and no model call. Not a stage: the spans stage chooses answers in these rows, and the
knowledge index (knowledge.py) shows the reader these sentences; both consume them unchanged.

Guarantees, for every row of `extract_statements(chunk)`:
- `chunk["text"][evidence_start:evidence_end] == evidence` (verbatim, Markdown included);
- `text` is the statement with Markdown emphasis/code/link markup removed and whitespace
  collapsed (table facts: "{entity} — {attribute}: {value}", with the same three as the
  record `cell`; every other row has `cell` None);
- every entity has key terms, all of them among the chunk's key terms;
- `dates == values.stated_dates(evidence, language)` (dates and years, any language);
- deterministic: the same chunk gives the same rows and ids, in document order.

What becomes a statement:
- prose: sentences (`builder.text.sentences`: it knows abbreviations, decimals, versions,
  domains; Chinese splits after 。！？；), each further split at "; " when the parts are long
  enough on their own;
- list items (marker excluded from the evidence), sentence-split the same way; when the
  paragraph before the list ends with ":", its last sentence (the lead-in) opens each item's
  text -- "Your line manager will normally approve requests of: more than 2 days ..." -- while
  the evidence stays the item (an item alone often says nothing: "15 days prior to the week
  your pay is due to start");
- Markdown pipe tables: one fact per non-empty body cell outside the first column, its
  evidence the cell itself (the row holds other columns' values);
- not: headings, fenced code, horizontal rules, link-only lines, questions, lead-ins ending
  in ":", and pieces with fewer than 2 content terms, fewer than 4 words (6 CJK characters)
  or more than ~60 words. Those rejected pieces (not the structural skips) are the "dropped"
  count.

Entities: capitalised phrases and short bold phrases (no digits), without leading function or
calendar words ("The Denver store" -> "Denver", "On Monday" -> none), nor, where a sentence or a
clause opens (after a colon, a bracket, a number), a leading word of the lexicon's `openers`
("Note: Use your code" -> none); a lone capitalised word that starts the statement is kept only
when the chunk also writes it capitalised mid-sentence ("Refunds go back ..." gives none).
Mid-sentence, a capitalised word is written as a name ("offices in New York").
Words whose key terms are stopwords ("US", "S") cannot be entities.
"""

from __future__ import annotations

import re
from functools import lru_cache

from builder.text.language import HAN_CHAR, detect_language
from builder.text.lexicon import every_language, lexicon
from builder.text.markdown import (
    DELIMITER_ROW, cell_spans, plain, span_blocks,
)
from builder.text.sentences import sentence_spans
from builder.text.values import stated_dates

from builder.generate.candidate import stable_id
from builder.generate.terms import STOPWORDS, key_terms

EXTRACTOR = "statements"
VERSION = "5"  # 2: a table fact's evidence is its cell, not the row. 3: the cell as a record;
               # blocks read by builder.text.markdown (GFM tables without leading pipes).
               # 4: a list item's text starts with the lead-in of its list.
               # 5: a name's leading words from the lexicon, per language

MIN_TERMS = 2
MIN_WORDS = 4
MIN_CJK = 6
MAX_WORDS = 60
MAX_ENTITIES = 4

_CJK_CHAR = HAN_CHAR

_LINK_ONLY = re.compile(
    r"\s*(?:!?\[[^\]]*\]\([^)]*\)|<[a-z]+:[^>\s]+>|[a-z]+://\S+)\s*[.,;:]?\s*$", re.I)

_SEMICOLON = re.compile(r";(?=\s)")

# inside a word: a capital or a digit after a letter or digit, or a sign ("GitHub", "H2", "Strg+E")
_INNER_MARK = re.compile(r"(?<=[^\W_])[A-Z0-9]|[+&@#/.]")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")

# -- entities --------------------------------------------------------------------------------
# Capitalised phrases, Latin letters only, so a name never swallows the CJK text it touches.
_WORD = r"[A-Z][A-Za-z0-9\u00c0-\u024f-]*"
_NAME = re.compile(rf"(?<![\w-]){_WORD}(?:[ \t]+(?:{_WORD}|\d+\b))*")
# Never the first word of a name where a sentence or a clause opens ("Note: Use your code").
_OPENERS = every_language("openers")
# What opens a clause: a colon, a bracket or quote, a dash or arrow, the end of a sentence, or
# only a number before it ("4.4.2 Use inline assembly", "(New paperback edition)").
_CLAUSE_END = ":;([{\"'“‘-–—>.!?"
_NUMBERING = re.compile(r"[\d.\s]+")
# A capitalised word right after a lower-case word or a comma: written as a name.
_MID_CAPITAL = re.compile(
    r"(?:(?<![\w-])[a-z][\w'’-]*|[,;:)])(?:[ \t]+|[ \t]*\n[ \t>]*)[*_`(\"“]*([A-Z][A-Za-z0-9-]*)")
# A table whose first header cell is one of these (the lexicon's `generic_headers`, of every
# language) lists attributes down its first column and entities across its header
# ("| Benefit | Basic | Gold |").
_GENERIC_HEADERS = every_language("generic_headers")
_EMPTY_CELLS = frozenset({"", "—", "–", "-", "n/a", "na", "none given"})


def extract_statements(chunk: dict) -> list[dict]:
    """Fact rows for the statements of one chunk, in document order (guarantees: module doc)."""
    return extract_statements_counted(chunk)[0]


def extract_statements_counted(chunk: dict) -> tuple[list[dict], int]:
    """(fact rows, how many candidate pieces were rejected: too short, too long, a question or
    a link). Headings, code, rules and empty table cells are structure, not counted."""
    text = chunk["text"]
    language = chunk.get("language") or detect_language(text)
    chunk_terms = key_terms(text)
    blocks = span_blocks(text)
    names = _midsentence_capitals("\n".join(text[s:e] for _, spans in blocks for s, e in spans))
    rows: list[dict] = []
    seen: set[str] = set()
    dropped = 0

    def add(claim: str, start: int, end: int, entities: list[str], cell: dict | None = None
            ) -> None:
        if claim.casefold() in seen:
            return
        seen.add(claim.casefold())
        evidence = text[start:end]
        seq = len(rows)
        rows.append({
            "id": stable_id(chunk["id"], EXTRACTOR, VERSION, seq, claim),
            "chunk_id": chunk["id"], "seq": seq, "text": claim, "evidence": evidence,
            "evidence_start": start, "evidence_end": end,
            "entities": [e for e in entities if _grounded(e, chunk_terms)][:MAX_ENTITIES],
            "dates": stated_dates(evidence, language), "language": language, "prompt_name": EXTRACTOR,
            "prompt_version": VERSION, "llm_call_id": None, "cell": cell,
        })

    lead = None  # the sentence that introduces the list being read ("... approve requests of:")
    for kind, spans in blocks:
        if kind == "table":
            lead = None
            for claim, start, end, entity, cell in _table_facts(text, spans):
                add(claim, start, end, [entity], cell)
            continue
        start, end = spans[0]
        if kind == "prose":
            whole = plain(text[start:end])
            lead = _lead_in(whole)
        for s, e in _pieces(text, start, end):
            claim = plain(text[s:e])
            if not _keep(text[s:e], claim):
                dropped += 1
                continue
            if kind == "item" and lead:  # the item means something only with its lead-in
                claim = f"{lead} {claim}"
            add(claim, s, e, _entities(text[s:e], claim, names, language))
    return rows, dropped


def _lead_in(paragraph: str) -> str | None:
    """The last sentence of a paragraph that ends with ":" -- the lead-in of the list after it
    ("Your line manager will normally approve requests of:") -- or None."""
    if not paragraph.endswith((":", "：")):
        return None
    last = paragraph[sentence_spans(paragraph)[-1][0]:].strip()
    return last if 2 <= len(last.split()) <= 40 or _CJK_CHAR.search(last) else None


# -- sentences -------------------------------------------------------------------------------

def _pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Statement spans of text[start:end]: sentences, then their "; " parts that can stand
    alone, trimmed (no surrounding whitespace, no trailing ";")."""
    out = []
    for s, e in sentence_spans(text, start, end):
        out.extend(_semicolon_parts(text, s, e))
    return [span for span in (_trim(text, s, e) for s, e in out) if span[1] > span[0]]


def _semicolon_parts(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split at "; " and merge every part too short to stand alone into its neighbour."""
    cuts = [m.end() for m in _SEMICOLON.finditer(text, start, end)]
    if not cuts:
        return [(start, end)]
    parts = []
    prev = start
    for cut in cuts:
        parts.append([prev, cut])
        prev = cut
    parts.append([prev, end])
    merged: list[list[int]] = []
    for part in parts:
        if merged and not _standalone(text, *merged[-1]):
            merged[-1][1] = part[1]
        else:
            merged.append(part)
    if len(merged) > 1 and not _standalone(text, *merged[-1]):
        last = merged.pop()
        merged[-1][1] = last[1]
    return [(s, e) for s, e in merged]


def _standalone(text: str, start: int, end: int) -> bool:
    s, e = _trim(text, start, end)
    return _long_enough(plain(text[s:e]))


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Without surrounding whitespace, a trailing ";" or a leading blockquote marker."""
    while start < end and (text[start].isspace() or text[start] == ">" and (
            start == 0 or not text[:start].rstrip(" \t") or text[:start].rstrip(" \t")[-1] == "\n")):
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in ";；"):
        end -= 1
    return start, end


# -- keeping ---------------------------------------------------------------------------------

def _size(claim: str) -> tuple[int, int]:
    """(Latin words, CJK characters)."""
    cjk = len(_CJK_CHAR.findall(claim))
    words = len([w for w in _CJK_CHAR.sub(" ", claim).split() if any(c.isalnum() for c in w)])
    return words, cjk


def _long_enough(claim: str) -> bool:
    words, cjk = _size(claim)
    return len(key_terms(claim)) >= MIN_TERMS and (words >= MIN_WORDS or cjk >= MIN_CJK)


_HTML_TAG = re.compile(r"\s*</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")


def _keep(raw: str, claim: str) -> bool:
    if _LINK_ONLY.match(raw) or claim.endswith(("?", "？", ":", "：")):  # questions, lead-ins
        return False
    if _HTML_TAG.match(raw):  # raw HTML in Markdown (<picture><source srcset=...>): markup
        return False
    words, cjk = _size(claim)
    return _long_enough(claim) and words + cjk / 2 <= MAX_WORDS


# -- entities --------------------------------------------------------------------------------

def _midsentence_capitals(text: str) -> set[str]:
    """Capitalised words the chunk writes after a lower-case word or a comma ("the Denver
    store", "and **Gold**"): names. A word capitalised only where a sentence, cell or heading
    starts ("Service counters ...", "| Phone |") is a common word."""
    return set(_MID_CAPITAL.findall(text))


@lru_cache(maxsize=None)
def _common_words(language: str) -> frozenset[str]:
    """Never the first word of a name: function words of every language, and the calendar
    words (dates are not entities; "On Monday") of the statement's language and English, not
    of every language ("Mayo Clinic" is no Spanish month)."""
    lex, en = lexicon(language), lexicon("en")
    return STOPWORDS | lex.months.keys() | lex.weekdays | en.months.keys() | en.weekdays


def _grounded(name: str, chunk_terms: set[str]) -> bool:
    terms = key_terms(name)
    return bool(terms) and terms <= chunk_terms


def _entities(raw: str, claim: str, names_in_chunk: set[str], language: str) -> list[str]:
    """Capitalised phrases and bold phrases of a statement, in order, at most MAX_ENTITIES.

    A phrase loses its leading function and calendar words wherever it stands ("The Denver
    store", "On Monday"), and, where a sentence or a clause opens, a word of the lexicon's
    `openers` ("Note: Use your code", "4.4.2 Use inline assembly"). Mid-sentence a capitalised
    word is written as a name: "offices in New York" keeps "New", which an English list of
    sentence-start words dropped everywhere until 2026-12-06.

    Where the language capitalises every noun (German), a capital marks no name: one word is a
    name only with another mark, a capital or a digit inside it or a sign ("GitHub",
    "Kunden-ID", "H2", "Strg+E"), or bold; several capitalised words in a row stay a name
    ("Deutsche Bahn"). Asked for "Einschränkungen", "Desktop" or "Bearbeitungsoptionen", the
    question writer put the noun in its question or asked what any passage on the subject
    answers (development set, 2026-12-07), and such nouns took the places of the statement's
    real names (at most four a statement).
    No language's name ends in a hyphen: "Desktop-" is half of "Desktop- und Mobilgeräte"."""
    common = _common_words(language)
    nouns_capitalised = lexicon(language).nouns_capitalised
    found: list[tuple[int, int, str]] = []  # (start, end, name) in `claim` coordinates
    bold_spans: list[tuple[int, int]] = []
    for m in _BOLD.finditer(raw):
        name = plain(m.group(2)).strip(" :;,.")
        if not name or any(c.isdigit() for c in name) or len(name.split()) > 5:
            continue
        pos = claim.find(name)
        if pos >= 0:
            found.append((pos, pos + len(name), name))
            bold_spans.append((pos, pos + len(name)))
    for m in _NAME.finditer(claim):
        if claim[m.end():m.end() + 1] == "$":
            continue  # "CA$75"
        words = m.group(0).split()
        start = m.start()
        before = claim[:start].rstrip(" *_`")
        clause = not before or before[-1] in _CLAUSE_END or bool(_NUMBERING.fullmatch(before))
        while words and not words[0].isupper() and (  # not "US"
                words[0].lower() in common or (clause and words[0].lower() in _OPENERS)):
            start = claim.index(words[1], start + len(words[0])) if len(words) > 1 else m.end()
            words.pop(0)
        if not words or not words[0][0].isupper():
            continue
        name = " ".join(words)
        if len(words) == 1 and (name.endswith("-") or (nouns_capitalised
                                                       and not _INNER_MARK.search(name))):
            continue  # "Desktop-" of "Desktop- und Mobilgeräte"; German "Zielsetzung"
        at_start = not claim[:start].strip(" \"'“‘(*_`[")
        if len(words) == 1 and at_start and name not in names_in_chunk:
            continue  # "Refunds go back ...": a common word, capitalised by position
        if any(bs <= start < be for bs, be in bold_spans):
            continue
        found.append((start, m.end(), name))
    names: list[str] = []
    for _, _, name in sorted(found, key=lambda f: (f[0], -(f[1] - f[0]))):
        if name.casefold() not in {n.casefold() for n in names}:
            names.append(name)
    return names[:MAX_ENTITIES]


# -- tables ----------------------------------------------------------------------------------

def _cells(row: str) -> list[str]:
    """Cells of one pipe-table row as plain text; `\\|` and pipes inside backticks do not
    split (see `_cell_spans`)."""
    return [plain(row[s:e].replace("\\|", "|")) for s, e in cell_spans(row)]


def _table_facts(text: str, rows: list[tuple[int, int]]
                 ) -> list[tuple[str, int, int, str, dict | None]]:
    """(fact text, cell start, cell end, entity, cell) for every non-empty body cell outside
    the first column: the evidence is the cell itself, so a row's other values (Basic's "Free"
    next to Gold's "$60") never count as this fact's. `cell` is the record {entity, attribute,
    value} the later stages read (never the text, which only the question writer sees). Without
    a header (a piece of a long table) the text is "{first cell}: {value}" and there is no
    record: the attribute is unknown."""
    header: list[str] | None = None
    body = rows
    if len(rows) >= 2 and DELIMITER_ROW.match(text[rows[1][0]:rows[1][1]]):
        header = _cells(text[rows[0][0]:rows[0][1]])
        body = rows[2:]
    transposed = header is not None and header[0].strip().casefold() in _GENERIC_HEADERS | {""}
    out = []
    for start, end in body:
        line = text[start:end]
        if DELIMITER_ROW.match(line):
            continue
        cells = _cells(line)
        if not cells:  # a row that is just "|"
            continue
        spans = cell_spans(line)
        first = cells[0].strip()
        for col in range(1, len(cells)):
            value = cells[col].strip()
            if value.lower() in _EMPTY_CELLS:
                continue
            column = header[col].strip() if header and col < len(header) else ""
            entity, attribute = (column, first) if transposed else (first, column)
            if not entity:
                continue
            claim = f"{entity} — {attribute}: {value}" if attribute else f"{entity}: {value}"
            cell = {"entity": entity, "attribute": attribute, "value": value} if attribute else None
            cell_start, cell_end = spans[col] if col < len(spans) else (0, len(line))
            out.append((claim, start + cell_start, start + cell_end, entity, cell))
    return out
