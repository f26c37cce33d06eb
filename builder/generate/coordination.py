"""One of several answers in the same sentence: a statement that coordinates two or more things
("HTTPX supports Basic and Digest HTTP authentication", "take a look at either RESPX or the
pytest-httpx library", "Insider, Supporter y VIP") answers a question about them with all of
them. A single-hop item answered with one conjunct is wrong unless the question sets the
others aside (names them) or picks its own out by position ("the third level"). Read on the
public KBs (issue 12): every such item we labelled was wrong ("Digest HTTP", `--ssl-keyfile`
next to `--ssl-certfile`, RESPX), and the unlabelled ones it finds are of the same kind
("¿Cuáles son los métodos de pago aceptados?" -> "AliPay.", next to WeChat).

Only conjuncts of the answer's own shape count (a name or code next to a name or code, a
number next to a number), so "defaults to 5 seconds, and can be changed" has no second answer.
A parenthesised pair counts too: "query params (`params=`) and form data (`data=`)".

The converse: a sentence that gives examples of a class ("media files, including images and
video clips, with a limit of 4 GB per site") says the limit of the class; a question about one
example ("What is the limit for images?") reads it as the example's own (`example_asked`).
"""

from __future__ import annotations

import re

from builder.generate.statements import plain
from builder.generate.terms import key_terms, numbers

# "either A or B" and its kin in the other languages the form checks know.
EITHER = re.compile(r"\b(?:either|entweder|ya sea|o bien|soit|ou bien|oppure)\b(?P<first>.+?)"
                    r"\b(?:or|oder|o|u|soit|ou|oppure)\b(?P<second>.+)", re.I | re.S)
_AND_OR = r"(?:,|\band\b|\bor\b|\by\b|\bo\b|\bu\b|\bet\b|\bou\b|\bund\b|\boder\b|\be\b)"
_WORD = r"`?([\w./:+-]+)`?"
_CODE = r"`?([\w./:+=-]+)`?"
ORDINAL = re.compile(
    r"\b(first|second|third|fourth|fifth|last|primer[oa]?|segund[oa]|tercer[oa]?|cuart[oa]|"
    r"quint[oa]|últim[oa]|premier|première|deuxième|troisième|dernier|dernière|erste[rsn]?|"
    r"zweite[rsn]?|dritte[rsn]?|letzte[rsn]?|primeir[oa]|terceir[oa]|ultim[oa])\b", re.I)


def _shape(text: str) -> str | None:
    """"number", "name" (capitalised or code-like) or None (a plain word: no list of names)."""
    t = text.strip().strip("`*_\"'")
    if not t:
        return None
    if numbers(t):
        return "number"
    if re.search(r"[`()=_/.\-]|[a-z][A-Z]", t) or t[:1].isupper():
        return "name"
    return None


def other_conjunct(answer: str, sentence: str) -> str | None:
    """The name or number coordinated with `answer` in `sentence` ("Basic" for "Digest HTTP" in
    "supports Basic and Digest HTTP authentication"), or None."""
    core = plain(answer).strip().rstrip(".").strip("`")
    text = plain(sentence)
    shape = _shape(core) if core else None
    at = text.casefold().find(core.casefold()) if shape else -1
    if at < 0:
        return None
    before, after = text[:at], text[at + len(core):]
    for m in (re.search(rf"{_WORD}\s*{_AND_OR}\s*`?$", before),
              re.match(rf"`?\s*{_AND_OR}\s+{_WORD}", after),
              # a parenthesised pair: "query params (`params=`) and form data (`data=`)"
              re.search(rf"\({_CODE}\)\s*{_AND_OR}\s+(?:[\w-]+\s+){{0,3}}\(`?$", before),
              re.match(rf"`?\)\s*{_AND_OR}\s+(?:[\w-]+\s+){{0,3}}\({_CODE}\)", after)):
        if m and _shape(m.group(1)) == shape and not key_terms(m.group(1)) <= key_terms(core):
            return m.group(1)
    return None


def other_alternative(answer_terms: set[str], sentence: str) -> set[str] | None:
    """The terms of the other side of an "either A or B" sentence when the answer gives one side
    only (terms both sides share, such as "library", are no side); None when the sentence offers
    no choice or the answer gives both or neither."""
    choice = EITHER.search(plain(sentence))
    if not choice:
        return None
    first, second = key_terms(choice["first"]), key_terms(choice["second"])
    if not answer_terms or bool(answer_terms & first) == bool(answer_terms & second):
        return None
    return (second - first if answer_terms & first else first - second) - answer_terms


# "media files, including images and video clips": the examples stand for a wider class. Words
# that open an example list, in the languages the form checks know; "like" is left out (it
# also means "similar to": "functions like httpx.get()").
EXAMPLES = re.compile(
    r"(?P<cls>\w+)[\s,]+(?:including|such as|e\.g\.,?|for example|incluyendo|incluidos?|"
    r"incluidas?|tales como|por ejemplo|como por ejemplo|notamment|y compris|par exemple|"
    r"einschließlich|wie zum beispiel|zum beispiel|z\. ?b\.|incluindo|tais como|inclusive|"
    r"ad esempio|compresi|compres[ae])\s+(?P<items>[^.;:()\n]+)", re.I)
_PREPOSITION = re.compile(r"^\s*(with|for|to|at|in|on|by|which|that|con|para|en|por|que|"
                          r"avec|pour|dans|mit|für|com|em|per)\b", re.I)


def example_asked(question: str, answer: str, sentence: str) -> tuple[str, str] | None:
    """(example, class) when the question asks about an example of a class the sentence gives
    ("Publish hosts media files, including images and video clips, with a limit of 4 GB per
    site" asked as "What is the limit for images per site?"): what the sentence says of the
    class reads as said of the example alone. None when the question names the class too, or
    the answer is one of the examples (then it is `other_conjunct`'s case)."""
    text = plain(sentence)
    q_terms, a_terms = key_terms(question), key_terms(answer)
    for m in EXAMPLES.finditer(text):
        items = []
        for part in m.group("items").split(","):  # the list ends where a clause starts
            if items and (_PREPOSITION.match(part) or len(part.split()) > 4):
                break
            items.append(part)
        examples = key_terms(" ".join(items))
        asked = examples & q_terms
        if asked and not examples & a_terms and m.group("cls").casefold() not in question.casefold():
            return sorted(asked)[0], m.group("cls")
    return None
