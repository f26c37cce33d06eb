"""A list item is one of its siblings: the question must say which.

A statement cut from a list ("`publish.css` para agregar CSS personalizado", next to
"`publish.js` para agregar JavaScript personalizado") is answered by its own item only if the
question names something that item says and its siblings do not ("CSS"). "¿Cuál es el nombre
del archivo que puedes agregar para personalizar tu sitio?" fits every item of that list, and
the reference picks one of them. The same holds for "Response.aiter_text() - For streaming the
response content as text." beside `aiter_lines()` ("... as text lines"), and for a troubleshooting
step asked without the step's own words.

What tells an item apart: its key terms, the answer's included, that no sibling item of the
same list uses (exact terms; "connect" stays its own next to a sibling's "connection"), nor
the section heading and the lead-in that introduce the list: they describe every item. Under
"## Using auto-detection" and "There are two widely used Python packages which both handle
this functionality:", "Which Python package handles default encoding using auto-detection?"
fits `chardet` and `charset-normalizer` alike. The question hits one when it holds the term
or a form of it (`terms.near`: "closing" for "close"; "personalizar" is not "CSS"). Labelled
entries ("**Scope**: ...") are left to the label checks (`names_label`, `names_section`):
their label is what a question names.

Read on the three public KBs of issue 12 (bench/quality/labels): of the labelled single-hop
items cut from lists of two or more, this rejects 13, all labelled wrong (publish.css,
appearance.json, aiter_text, chardet, the top-level `httpx.get(..., trust_env=False)` asked as
"the" way), and none of the 19 labelled right.
"""

from __future__ import annotations

from builder.generate.statements import list_around, list_context, plain
from builder.generate.terms import key_terms, near
from builder.generate.worth import LABELLED


def own_terms(text: str, start: int) -> tuple[set[str], str] | None:
    """The terms of the list item at `start` of `text` that none of its siblings uses, nor the
    heading and lead-in that introduce the list, and that item's plain text; None when `start`
    is not in a list of two or more items, or the item is a labelled entry."""
    found = list_around(text, start)
    if found is None or len(found[0]) < 2:
        return None
    items, at = found
    s, e = items[at]
    if LABELLED.match(text[s:e].strip()):
        return None
    shared = key_terms(plain(list_context(text, items[0][0])))
    for k, (s2, e2) in enumerate(items):
        if k != at:
            shared |= key_terms(plain(text[s2:e2]))
    item = plain(text[s:e])
    return key_terms(item) - shared, item


def names_its_item(question: str, text: str, start: int) -> tuple[bool, str] | None:
    """Whether `question` names something of the list item at `start` that its siblings do not
    say (see the module doc); None when the statement is no such item."""
    found = own_terms(text, start)
    if found is None:
        return None
    own, item = found
    if any(near(t, own) for t in key_terms(question)):
        return True, ""
    return False, (f"the statement is one item of a list and the question fits its siblings as "
                   f"well: it names nothing of {item[:70]!r} that the other items do not say")
