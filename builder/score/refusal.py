"""Refusal detection by code first: is an answer a refusal, an answer that carries claims, or
unclear (the only case the LLM judge is asked about)?

The rule (what the tests check):
- The answer is cut into clauses: sentences (`builder.text.sentences`: a line break always
  ends one), then at ";" and "；", and before a word that turns a sentence ("but", "however",
  "although": the lexicon's `contrast`, every supported language's; a Chinese, Japanese or
  Korean one is cut out), so "I don't know the date, but it opened in 1998" is two clauses.
- A clause containing a phrase of `prompts/refusal_phrases.md` is a refusal clause (every
  language's phrases are checked; whole words, except in Chinese, Japanese and Korean, whose
  phrases are found anywhere).
- Any other clause carries a claim when it has a digit, three or more words of three or more
  letters, or six or more CJK characters.
- Verdict: claims and no refusal clause -> "answer"; refusal clauses and no claim ->
  "refusal"; both -> "partial" (a claim-bearing answer, never a refusal: its claims are
  judged for faithfulness like any other); neither (empty answers aside, which are refusals)
  -> "unclear", for the LLM.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from builder.errors import InputError
from builder.llm.prompts import bundled_prompts_dir
from builder.text.language import HAN, HANGUL, KANA
from builder.text.lexicon import every_language
from builder.text.sentences import split_sentences

PHRASE_FILE = "refusal_phrases.md"
_LINE = re.compile(r"^([a-z]{2,3}(?:-[A-Za-z]{2,4})?):\s*(\S.*)$")
_SEMICOLON = re.compile(r"[;；]\s*")
_CJK = re.compile(f"[{HAN}{KANA}{HANGUL}]")
# The words that turn a sentence in every supported language (the lexicon's `contrast`), like
# the phrases, whatever the answer's language: a clause cut once too often can only let a claim
# through, never hide one in a refusal. A clause starts before a Latin-script word, at a CJK one.
_CONTRAST = sorted(every_language("contrast"), key=lambda w: (-len(w), w))
_TURN = re.compile(r",?\s+\b(?=(?:" + "|".join(re.escape(w) for w in _CONTRAST if not _CJK.match(w))
                   + r")\b)|(?:" + "|".join(re.escape(w) for w in _CONTRAST if _CJK.match(w)) + ")",
                   re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass
class RefusalCheck:
    verdict: str                      # "answer", "refusal", "partial" or "unclear"
    refusal_clauses: list[str] = field(default_factory=list)
    claim_clauses: list[str] = field(default_factory=list)

    @property
    def decided(self) -> bool:
        """True when code settled it; False when the LLM must decide."""
        return self.verdict != "unclear"

    @property
    def is_refusal(self) -> bool:
        return self.verdict == "refusal"

    @property
    def carries_claims(self) -> bool:
        return self.verdict in ("answer", "partial")


@lru_cache(maxsize=8)
def load_phrases(prompts_dir: str | None = None) -> tuple[tuple[str, re.Pattern], ...]:
    """(language, compiled phrase) pairs from the phrase file, the override folder first."""
    folders = [Path(p) for p in (prompts_dir, os.environ.get("GOLDEN_PROMPTS")) if p]
    folders.append(bundled_prompts_dir())
    for folder in folders:
        path = folder / PHRASE_FILE
        if path.is_file():
            phrases = []
            for line in path.read_text(encoding="utf-8").splitlines():
                m = _LINE.match(line.strip())
                if m:
                    phrases.append((m.group(1), _phrase_pattern(m.group(2).strip().lower())))
            if not phrases:
                raise InputError("no '<language>: <phrase>' line", path=str(path))
            return tuple(phrases)
    raise InputError(f"no {PHRASE_FILE} found", path=str(folders[0]))


def _phrase_pattern(phrase: str) -> re.Pattern:
    text = re.escape(phrase).replace("'", "['’]").replace("\\ ", r"\s+")
    if _CJK.search(phrase):
        return re.compile(text)
    return re.compile(r"(?<!\w)" + text + r"(?!\w)")


def clauses(answer: str) -> list[str]:
    """The clauses of `answer` (see the module docstring), stripped of punctuation around them."""
    out = []
    for sentence in split_sentences(answer):
        for piece in _SEMICOLON.split(sentence):
            for part in _TURN.split(piece):
                part = part.strip(" \t,.:;-–—\"'“”")
                if part:
                    out.append(part)
    return out


def _has_claim(clause: str) -> bool:
    if any(ch.isdigit() for ch in clause):
        return True
    if len(_CJK.findall(clause)) >= 6:
        return True
    return len(_WORD.findall(clause)) >= 3


def check_refusal(answer: str, prompts_dir: str | None = None) -> RefusalCheck:
    """Classify one answer (see the module docstring)."""
    if not answer or not answer.strip():
        return RefusalCheck("refusal")
    phrases = load_phrases(prompts_dir)
    refusing, claiming = [], []
    for clause in clauses(answer):
        low = clause.lower().replace("’", "'")
        if any(p.search(low) for _, p in phrases):
            refusing.append(clause)
        elif _has_claim(clause):
            claiming.append(clause)
    if refusing and claiming:
        verdict = "partial"
    elif refusing:
        verdict = "refusal"
    elif claiming:
        verdict = "answer"
    else:
        verdict = "unclear"
    return RefusalCheck(verdict, refusing, claiming)
