"""Where a sentence ends: the one rule golden uses to cut text into sentences.

`sentence_spans(text, start, end)` cuts a stretch of prose (a paragraph or list item, wrapped
lines included) into sentences by offsets; `split_sentences(text)` is the same rule over each
line of a text, as stripped strings (answers, contexts, refusals: a line break always ends a
sentence there).

The rule:
- CJK text ends a sentence after 。！？； (and any closing quote or bracket), whatever follows;
- Latin text ends one after . ! ? (and closing quotes, brackets or emphasis markup) only when
  whitespace and then something that can start a sentence follows: an upper-case letter, a
  digit, an opening quote or bracket, emphasis or code markup, a currency sign, CJK text (a
  blockquote marker in between is skipped). A lower-case word never starts one ("e.g. tents",
  a wrapped line);
- after a period, an abbreviation decides: "e.g.", "Mr.", "approx." never end a sentence
  ("No." does, unless a number follows); "a.m.", "etc.", "Inc.", "U.S." and initials ("J.",
  "U.K.") end one only when the next word opens sentences: a function word or an opener of a
  supported language (the lexicon's `stopwords` and `openers`): "at 4:00 p.m. On other
  holidays" and "... etc. Please note" end, "at 3:00 p.m. Pacific" does not.

Chunk boundaries are a different concern with their own rule (`builder.ingest.chunker`): they
also cut at ";" and ":", and must fall where the tokenizer's counts add up.
"""

from __future__ import annotations

import re

from builder.text.language import HAN
from builder.text.lexicon import all_stopwords, every_language

_LATIN_END = re.compile(r"[.!?]+[\"'”’)\]*_`]*(?=\s)")
_CJK_END = re.compile(r"[。！？；]+[”’」』）)\"'*_`]*")
_NEXT_START = re.compile(rf"\s+(?:>\s*)*(?=[A-Z0-9\"'“‘(\[*_`$€£¥{HAN}])")
_WORD_BEFORE = re.compile(r"(\S+)$")
_WORD_AFTER = re.compile(r"\s+(?:>\s*)*[\"'“‘(\[*_`]*([A-Za-z]+)")
# Never a sentence end ("e.g. Gold", "Mr. Smith", "approx. 5 days").
_HARD_ABBREV = frozenset(
    "e.g. i.e. eg. ie. mr. mrs. ms. dr. prof. approx. vs. cf. st. jr. sr. fig. no. nos. ref. "
    "dept. ca. viz. al.".split())
# A sentence end only when the next word is one that starts sentences.
_SOFT_ABBREV = frozenset("a.m. p.m. etc. inc. ltd. co. corp. u.s. u.k.".split())
# Words that open sentences, of every supported language: after a soft abbreviation, a new one.
_OPENING = all_stopwords() | every_language("openers")
_INITIALS = re.compile(r"(?:[A-Za-z]\.){2,}|[A-Z]\.")  # "U.S.", "J. Smith", "Plan B."

def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """The sentences of text[start:end] as (start, end) offsets, in order, covering it without
    gaps: each span runs to just after its closing punctuation, the whitespace between two
    sentences opens the next. One span when nothing ends a sentence."""
    end = len(text) if end is None else end
    cuts = set()
    for m in _CJK_END.finditer(text, start, end):
        cuts.add(m.end())
    for m in _LATIN_END.finditer(text, start, end):
        if _is_sentence_end(text, start, end, m):
            cuts.add(m.end())
    spans, prev = [], start
    for cut in sorted(cuts):
        if prev < cut < end:
            spans.append((prev, cut))
            prev = cut
    spans.append((prev, end))
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of every line of `text`, stripped, empty ones left out."""
    out = []
    for line in text.splitlines():
        out += [s for a, b in sentence_spans(line) if (s := line[a:b].strip())]
    return out


def _is_sentence_end(text: str, start: int, end: int, m: re.Match) -> bool:
    nxt = _NEXT_START.match(text, m.end(), end)
    if not nxt:
        return False  # lower-case or nothing follows: "e.g. tents", a wrapped line
    if text[m.start()] != ".":
        return True
    word = _WORD_BEFORE.search(text, start, m.start() + 1)
    token = (word.group(1) if word else "").lstrip("(\"'“‘*_`[")
    if token.lower() in _HARD_ABBREV:  # "No." ends a sentence unless a number follows
        return token.lower() == "no." and not text[nxt.end():nxt.end() + 1].isdigit()
    if token.lower() in _SOFT_ABBREV or _INITIALS.fullmatch(token):
        after = _WORD_AFTER.match(text, m.end(), end)
        return bool(after) and after.group(1).lower() in _OPENING
    return True
