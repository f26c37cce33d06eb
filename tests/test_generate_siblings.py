"""Two single-hop checks read on the public KBs of issue 12: a list item's question must say
which item it asks about (siblings.py, `names_its_item`), and a question may bring in only a
few terms its passage never uses (`question_from_passage`)."""

from __future__ import annotations

import pytest

from builder.generate import siblings
from builder.generate.checks import Subject, code_checks, names_its_item, question_from_passage
from builder.generate.statements import list_around, list_context
from builder.generate.terms import near
from builder.store.documents import chunks_by_id

from tests.support.scripted_kb import build_kb

PUBLISH = """Puedes personalizar tu sitio con estos archivos:

- `publish.css` para agregar CSS personalizado
- `publish.js` para agregar JavaScript personalizado
- `favicon-32x32.png` para establecer el favicon
"""

STREAMING = """Streaming methods:

- `Response.aiter_lines()` - For streaming the response content as text lines.
- `Response.aiter_text()` - For streaming the response content as text.
- `Response.aclose()` - For closing the response.
"""

TIMEOUTS = """HTTPX has four timeouts:

- The connect timeout is the time to wait until a socket connection to the host is established.
  If HTTPX is unable to connect within this time frame, a `ConnectTimeout` exception is raised.
- The pool timeout is the time to wait for acquiring a connection from the pool.
  If HTTPX is unable to acquire a connection within this time frame, a `PoolTimeout` exception is raised.
"""

ENCODINGS = """## Using auto-detection

To use auto-detection you need to set the `default_encoding` argument to a callable.

There are two widely used Python packages which both handle this functionality:

* [`chardet`](https://chardet.readthedocs.io/) - This is a well established package,
  and is a port of the auto-detection code in Mozilla.
* [`charset-normalizer`](https://charset-normalizer.readthedocs.io/) - A newer package, with a different approach.
"""

RUBRIC = """## Level 5

- **Scope**: owns a product area.
- **Trust**: is trusted with production access.
"""


def _item_subject(question: str, answer: str, text: str, quote: str) -> Subject:
    start = text.index(quote)
    fact = {"id": "f1", "chunk_id": "c1", "evidence": quote, "evidence_start": start,
            "evidence_end": start + len(quote), "cell": None}
    chunk = {"id": "c1", "text": text, "title": "", "heading_path": "[]"}
    return Subject(None, {"question": question, "answer": answer, "chunk_ids": ["c1"]},
                   [fact], {"c1": chunk})


@pytest.mark.parametrize("question,answer,text,quote,ok", [
    # fits every item of its list: the reference picks one of them
    ("¿Cuál es el nombre del archivo que puedes agregar para personalizar tu sitio?", "publish.css",
     PUBLISH, "`publish.css` para agregar CSS personalizado", False),
    ("What method streams the response content as text?", "Response.aiter_text()",
     STREAMING, "`Response.aiter_text()` - For streaming the response content as text.", False),
    # the heading and the lead-in introduce every item: "auto-detection" tells none apart
    ("Which Python package handles default encoding using auto-detection?", "chardet",
     ENCODINGS, "This is a well established package,", False),
    # names what only its item says
    ("Which Python package is newer and takes a different approach?", "charset-normalizer",
     ENCODINGS, "A newer package, with a different approach.", True),
    ("¿Qué archivo agrega CSS personalizado a tu sitio?", "publish.css",
     PUBLISH, "`publish.css` para agregar CSS personalizado", True),
    ("¿Qué archivo establece el favicon?", "favicon-32x32.png",
     PUBLISH, "`favicon-32x32.png` para establecer el favicon", True),
    ("What method is used to close an async response?", "Response.aclose()",
     STREAMING, "`Response.aclose()` - For closing the response.", True),
    # "connect" is its own next to a sibling's "connection"
    ("What exception is raised when HTTPX fails to connect in time?", "ConnectTimeout",
     TIMEOUTS, "If HTTPX is unable to connect within this time frame, a `ConnectTimeout` exception is raised.",
     True),
])
def test_a_list_items_question_must_say_which_item(question, answer, text, quote, ok):
    got = names_its_item(_item_subject(question, answer, text, quote))
    assert got is not None and got[0] is ok
    if not ok:
        assert "one item of a list" in got[1]


def test_statements_outside_lists_and_labelled_entries_are_left_alone():
    prose = "Most servers send a Content-Type header. It includes a charset."
    assert names_its_item(_item_subject("Which header do servers send?", "Content-Type", prose,
                                        "Most servers send a Content-Type header.")) is None
    # a rubric entry is named by its label: names_label / names_section judge it
    assert names_its_item(_item_subject("What does Level 5 own?", "a product area", RUBRIC,
                                        "**Scope**: owns a product area.")) is None
    # a list of one item has no siblings
    one = "Steps:\n\n- Restart Obsidian to apply the changes.\n"
    assert names_its_item(_item_subject("What applies the changes?", "Restart Obsidian", one,
                                        "Restart Obsidian to apply the changes.")) is None


def test_a_list_ends_where_prose_starts():
    text = "First list:\n\n- alpha one\n- beta two\n\nBetween them.\n\n- gamma three\n- delta four\n"
    items, at = list_around(text, text.index("gamma"))
    assert [text[s:e] for s, e in items] == ["gamma three", "delta four"] and at == 0
    items, at = list_around(text, text.index("beta"))
    assert [text[s:e] for s, e in items] == ["alpha one", "beta two"] and at == 1
    assert list_around(text, text.index("Between")) is None


def test_the_heading_and_lead_in_introduce_every_item():
    assert list_context(ENCODINGS, ENCODINGS.index("[`chardet`]")) == (
        "Using auto-detection There are two widely used Python packages which both handle this "
        "functionality:")
    # a paragraph that does not end with ":" is no lead-in; a list under a heading alone
    text = "## Steps\n\nSome words.\n\n- alpha one\n- beta two\n"
    assert list_context(text, text.index("alpha")) == "Steps"


def test_own_terms_are_what_no_sibling_says():
    own, item = siblings.own_terms(PUBLISH, PUBLISH.index("`publish.css`"))
    assert own == {"css"}  # "publish", "agregar", "personalizado": the siblings say them too
    assert item.startswith("publish.css")


@pytest.mark.parametrize("term,other,same", [
    ("clos", "close", True), ("enroll", "enrollment", True), ("esperar", "espera", True),
    ("connect", "connection", True), ("threshold", "three", False), ("bocal", "bóveda", False),
    ("css", "personalizado", False),
])
def test_near_takes_forms_of_one_word(term, other, same):
    assert near(term, {other}) is same


def _passage_subject(question: str, text: str) -> Subject:
    chunk = {"id": "c1", "text": text, "title": "Maternity leave", "heading_path": '["Telling us"]'}
    return Subject(None, {"question": question, "answer": "x", "chunk_ids": ["c1"]}, [], {"c1": chunk})


DUE = "Legally, you don't have to make us aware until after 15 weeks before your due date."


@pytest.mark.parametrize("question,ok", [
    # four terms of its own: it asks something the passage does not say
    ("What is the threshold that must be exceeded before you can legally avoid making us aware?", False),
    # the passage's own words, or forms of them, and the title
    ("When do you legally have to make us aware of your maternity leave?", True),
    # two new terms are a paraphrase, and frame words ("name", "maximum number") do not count
    ("What is the maximum number of weeks before the due date you must inform the company?", True),
    # three are not
    ("What is the maximum number of weeks before the due date you must inform the company "
     "in writing?", False),
])
def test_a_question_brings_in_few_terms_its_passage_never_uses(question, ok):
    got = question_from_passage(_passage_subject(question, DUE))
    assert got[0] is ok
    if not ok:
        assert "never uses" in got[1]


ASYNC = "To make asynchronous requests, you'll need an `AsyncClient`. Closing: `Response.aclose()`."


@pytest.mark.parametrize("question,ok", [
    ("What library software or tool do you need to make asynchronous requests?", False),
    # our own hint for a code answer ("a function or method call") is frame, not content
    ("What function or method call is used to close an async response stream?", True),
])
def test_the_code_hint_is_frame_and_other_new_terms_count(question, ok):
    got = question_from_passage(_passage_subject(question, ASYNC))
    assert got[0] is ok


def test_unspaced_scripts_are_not_counted():
    # Chinese terms are character pairs: the question's frame alone would count as new
    assert question_from_passage(_passage_subject("标准配送需要多长时间送达？", "标准配送需要5天送达。")) is None


def test_both_checks_run_for_single_hop_items_in_code_checks(tmp_path):
    store = build_kb(tmp_path / "g.db", {"personalizar.md": [("c1", PUBLISH, "es")]})
    chunks = chunks_by_id(store, ["c1"])
    quote = "`publish.css` para agregar CSS personalizado"
    start = PUBLISH.index(quote)
    fact = {"id": "f1", "chunk_id": "c1", "text": quote, "evidence": quote, "evidence_start": start,
            "evidence_end": start + len(quote), "cell": None, "entities": [], "dates": []}
    cand = {"id": "k1", "type": "single_hop", "question":
            "¿Cuál es el nombre del archivo que puedes agregar para personalizar tu sitio?",
            "answer": "publish.css", "chunk_ids": ["c1"],
            "evidence": [{"chunk_id": "c1", "quote": quote, "start": start, "end": start + len(quote)}]}
    results = {r["check"]: r for r in code_checks(store, cand, [fact], chunks)}
    store.close()
    assert results["names_its_item"]["passed"] is False
    assert results["question_from_passage"]["passed"] is True
