"""Code checks on a written question, before any model reads it: the cheap rejections.

Each check returns a reason (a short sentence) or None. They are structural -- where the answer
is, which language detects, which words a composed question must hold -- except `document_refs`,
whose phrases come from the question language's lexicon. A question that fails here never costs
a round-trip call.
"""

from __future__ import annotations

import difflib
import re
import unicodedata

from builder.text.language import CJK_CHAR, HANGUL, detect_language
from builder.text.lexicon import lexicon
from builder.text.values import bound_direction, magnitudes

from builder.generate.terms import key_terms, tokens

MAX_COPY = 0.8        # token-sequence similarity to the statement above which it is a copy
MIN_WORDS, MAX_WORDS = 3, 40
HANGUL_CHAR = re.compile(f"[{HANGUL}]")


def _norm(text: str) -> str:
    """Casefolded words, composed (NFC) as `terms.tokens` reads them."""
    return " ".join(re.sub(r"[^\w%$€£¥]+", " ", unicodedata.normalize("NFC", text).casefold()).split())


def contains(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text`, ignoring case, punctuation and spacing."""
    p = _norm(phrase)
    return bool(p) and f" {p} " in f" {_norm(text)} "


ANSWER_MARK = re.compile(r"</?answer>", re.IGNORECASE)  # how question.prompt marks the answer


def shape_problem(question: str) -> str | None:
    q = question.strip()
    if ANSWER_MARK.search(q):
        # the writer copied the prompt's mark: "... for the first <answer>first</answer> of ..."
        return "holds the prompt's answer mark"
    if not q.endswith(("?", "？")):
        return "not a question (no question mark at the end)"
    n = len(CJK_CHAR.findall(q)) // 2 + len(re.findall(r"[^\W\d_]+", CJK_CHAR.sub(" ", q)))
    if n < MIN_WORDS:
        return "too short to name a subject"
    if n > MAX_WORDS:
        return "too long for a question"
    return None


def language_problem(question: str, language: str) -> str | None:
    got = detect_language(question, default=language)
    return None if got == language else f"written in {got}, the passage is in {language}"


def document_ref_problem(question: str, language: str) -> str | None:
    """The question points at the text ("according to the passage") or at something only the
    text showed ("this benefit"): it is not standalone."""
    low = f" {question.casefold()} "
    words = set(re.findall(r"[^\W\d_]+", low))
    for code in {language, "en"}:
        lex = lexicon(code)
        for phrase in lex.document_refs:
            if phrase in low:
                return f"points at the text ('{phrase}') instead of naming its subject"
        for word in lex.demonstratives:
            # CJK has no spaces between words: a substring; elsewhere a whole word
            if (word in low) if CJK_CHAR.search(word) else (word in words):
                return f"points at something the text showed ('{word}') instead of naming it"
    return None


def leak_problem(question: str, answer: str, language: str) -> str | None:
    """The answer, or its value, is in the question; or the question spells out what the
    answer abbreviates ("the code of relations between the public and the administration" ->
    "CRPA"); or every content term of the answer is already in the question, inflected or not
    ("What is the scheme for electric vehicles?" -> "Electric Vehicle")."""
    if contains(question, answer):
        return "the question contains its answer"
    nums = magnitudes(answer, language)
    if nums and nums <= magnitudes(question, language):
        return "the question states its answer's value"
    letters = re.sub(r"[^A-Z]", "", answer)
    if 2 <= len(letters) == len(answer.strip().rstrip("s")) <= 7:
        if _initials_spell(letters, question):
            return "the question spells out the abbreviation it asks for"
    terms = key_terms(answer)
    if terms and (terms <= key_terms(question) or _names_words(question, answer)):
        return "the answer only repeats words of the question"
    return None


def _initials_spell(letters: str, question: str) -> bool:
    """Whether consecutive words of the question spell the acronym out: each gives the next
    letter of it from its own start -- or, for an acronym of four letters or more, the next two
    or three ("l'autorité de régulation de la COMmunication" is ARCOM) -- and words of three
    letters or fewer may be passed over ("de", "la", "of"). At least two words must give
    letters. Structural, so it reads any language's expansions."""
    words = [w.upper() for w in re.findall(r"[^\W\d_]+", question)]
    longest = 3 if len(letters) >= 4 else 1

    def spell(i: int, k: int, used: int) -> bool:
        if k == len(letters):
            return used >= 2
        if i == len(words):
            return False
        w = words[i]
        if any(letters[k:k + n] == w[:n] and spell(i + 1, k + n, used + 1)
               for n in range(1, min(longest, len(w), len(letters) - k) + 1)):
            return True
        return used > 0 and len(w) <= 3 and spell(i + 1, k, used)

    return any(spell(i, 0, 0) for i in range(len(words)))


def copy_problem(question: str, statement: str) -> str | None:
    a, b = tokens(question), tokens(statement)
    if a and difflib.SequenceMatcher(a=a, b=b, autojunk=False).ratio() >= MAX_COPY:
        return "copies its passage instead of asking"
    return None


def mention_problem(question: str, mention: list[str]) -> str | None:
    """A mention counts when each of its content words is in the question, inflected or not
    ("chargés de déploiement" names "Chargé de déploiement")."""
    missing = [m for m in mention if not (contains(question, m) or _names_words(question, m))]
    return f"does not name {missing[0]!r}" if missing else None


def nearby_problem(question: str, nearby: list[str]) -> str | None:
    """None when the question uses one of the words next to its answer (Span.nearby),
    inflected or not; there is nothing to check when there are none."""
    if not nearby or any(_uses(question, w) for w in nearby):
        return None
    return f"does not say what its answer is (none of {', '.join(map(repr, nearby))})"


def _uses(question: str, word: str) -> bool:
    """Whether the question uses `word`, inflected or not. Scripts written without spaces are
    searched as text ("前" in "何週間前に"); a Korean word may end in another particle
    ("회원은" is used by "회원이")."""
    if CJK_CHAR.search(word):
        folded = _norm(question)
        return word in folded or (bool(HANGUL_CHAR.search(word)) and len(word) >= 2
                                  and word[:-1] in folded)
    return contains(question, word) or _names_words(question, word)


def _names_words(question: str, phrase: str) -> bool:
    asked = [t for t in tokens(question)]
    words = [t for t in tokens(phrase) if key_terms(t)]
    return bool(words) and all(any(_same_word(w, t) for t in asked) for w in words)


def _same_word(a: str, b: str) -> bool:
    """One word, inflected: equal, or sharing all but a short ending (at least 4 letters)."""
    if a == b:
        return True
    k = max(4, min(len(a), len(b)) - 2)
    return len(a) >= 4 and len(b) >= 4 and a[:k] == b[:k] and abs(len(a) - len(b)) <= 3


def heading_problem(question: str, title: str) -> str | None:
    """The question is the section's own heading (an FAQ's question): the whole section answers
    it, not the one span it was written for."""
    last = title.split(" > ")[-1] if title else ""
    a, b = tokens(question), tokens(last)
    if a and b and difflib.SequenceMatcher(a=a, b=b, autojunk=False).ratio() >= MAX_COPY:
        return "repeats its section's heading: the section answers it, not the span"
    return None


def bound_problem(question: str, answer: str, language: str) -> str | None:
    """The question asks for a least where the answer sets a most, or the other way ("What is
    the minimum size ...?" -> "less than 32 octets", "What is the maximum duration of absence
    ...?" -> "exceeding 20 working days"): the bound's direction is in the answer (the lexicon's
    `ceilings` and `floors`), the question names the other one. On the development labels, 9
    verified items did so, all 9 wrong; none right was lost (2026-12-07)."""
    direction = bound_direction(answer, language)
    if direction is None:
        return None
    lex = lexicon(language)
    other = lex.floors if direction == "ceiling" else lex.ceilings
    hit = next((p for p in sorted(other, key=len, reverse=True) if contains(question, p)), None)
    return None if hit is None else f"asks for {hit!r} where the answer is the other bound"


def question_problems(question: str, *, answer: str, language: str, statement: str,
                      mention: list[str] | None = None, title: str = "",
                      nearby: list[str] | None = None) -> list[str]:
    """Every reason code finds to reject a single-hop question, in a fixed order."""
    checks = (shape_problem(question), language_problem(question, language),
              document_ref_problem(question, language), leak_problem(question, answer, language),
              bound_problem(question, answer, language), copy_problem(question, statement),
              heading_problem(question, title),
              mention_problem(question, mention or []), nearby_problem(question, nearby or []))
    return [c for c in checks if c]
