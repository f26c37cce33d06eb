"""Sync/async twins of a code name (twins.py): an API reference documenting `iter_bytes()` and
`aiter_bytes()` answers "Which method streams the response as bytes?" twice, so a question
whose answer is one twin must say which. Found on the httpx docs (issue 12)."""

from __future__ import annotations

import pytest

from builder.generate import twins
from builder.generate.checks import code_checks
from builder.store.documents import chunks_by_id

from tests.support.scripted_kb import build_kb

ASYNC_DOC = ("The async response streaming methods are:\n\n"
             "* `Response.aread()` - For conditionally reading a response inside a stream block.\n"
             "* `Response.aiter_bytes()` - For streaming the response content as bytes.\n")
API_DOC = ("* `def .read()` - **bytes**\n"
           "* `def .iter_bytes([chunk_size])` - **bytes iterator**\n")
TRANSPORT_DOC = ("You should either subclass `httpx.BaseTransport` to implement a transport to use "
                 "with `Client`, or subclass `httpx.AsyncBaseTransport` to implement a transport "
                 "to use with `AsyncClient`.")
KB = {"async.md": [("a1", ASYNC_DOC, "en")], "api.md": [("p1", API_DOC, "en")],
      "transports.md": [("t1", TRANSPORT_DOC, "en")],
      "exceptions.md": [("e1", "* `ConnectTimeout` - Failed to establish a connection in time.", "en")]}


def _check(store, chunk_id: str, quote: str, question: str, answer: str,
           name: str = "tells_twins_apart"):
    cand = {"type": "single_hop", "question": question, "answer": answer, "language": "en",
            "chunk_ids": [chunk_id], "evidence": [{"chunk_id": chunk_id, "quote": quote}]}
    fact = {"id": "f1", "chunk_id": chunk_id, "text": quote, "evidence": quote, "entities": [],
            "cell": None, "evidence_start": 0}
    got = {c["check"]: c for c in code_checks(store, cand, [fact], chunks_by_id(store, [chunk_id]))}
    return got.get(name)


@pytest.mark.parametrize("chunk,quote,question,answer,ok", [
    ("a1", "`Response.aiter_bytes()` - For streaming the response content as bytes.",
     "Which method streams the response content as bytes?", "Response.aiter_bytes()", False),
    ("a1", "`Response.aiter_bytes()` - For streaming the response content as bytes.",
     "Which async method streams the response content as bytes?", "Response.aiter_bytes()", True),
    ("p1", "`def .iter_bytes([chunk_size])` - **bytes iterator**",
     "Which method gives a bytes iterator?", ".iter_bytes()", False),
    ("p1", "`def .iter_bytes([chunk_size])` - **bytes iterator**",
     "Which synchronous method gives a bytes iterator?", ".iter_bytes()", True),
    ("t1", TRANSPORT_DOC, "Which class should you subclass to implement a transport?",
     "httpx.BaseTransport", False),
    ("t1", TRANSPORT_DOC, "Which class do you subclass to implement a transport for Client?",
     "httpx.BaseTransport", True),  # Client against AsyncClient, in the evidence
    ("t1", TRANSPORT_DOC, "Which class do you subclass for an AsyncClient transport?",
     "httpx.AsyncBaseTransport", True),
])
def test_a_question_about_one_twin_says_which(tmp_path, chunk, quote, question, answer, ok):
    store = build_kb(tmp_path / "g.db", KB)
    got = _check(store, chunk, quote, question, answer)
    assert got is not None and got["passed"] is ok, got


def test_names_without_a_twin_are_not_checked(tmp_path):
    store = build_kb(tmp_path / "g.db", KB)
    assert _check(store, "e1", "`ConnectTimeout` - Failed to establish a connection in time.",
                  "Which exception means no connection was made in time?", "ConnectTimeout") is None
    # a plain word is not a code name, whatever the KB holds ("read" against `aread`)
    assert twins.code_names("read it twice") == []
    assert twins.code_names("Response.aiter_bytes()") == ["aiter_bytes"]
    assert twins.code_names("httpx.Client(trust_env=False)") == ["Client", "trust_env"]


def test_a_twin_counts_only_when_the_kb_writes_it_as_code(tmp_path):
    kb = {"a.md": [("a1", "* `aread()` reads the body. You can read more in the guide.", "en")]}
    store = build_kb(tmp_path / "g.db", kb)
    assert twins.twin(store, "aread") is None          # "read" occurs only as a word
    kb["b.md"] = [("b1", "Call `response.read()` first.", "en")]
    store = build_kb(tmp_path / "h.db", kb)
    assert twins.twin(store, "aread") == ("async", "read")
    assert twins.twin(store, "read") == ("sync", "aread")


CHOICE_DOC = ("For more advanced use-cases you might want to take a look at either [the third-party\n"
              "mocking library, RESPX](https://lundberg.github.io/respx/), or the [pytest-httpx "
              "library](https://github.com/Colin-b/pytest_httpx).")


@pytest.mark.parametrize("question,answer,ok", [
    # one side of "either ... or" is one of two answers
    ("Which mocking library should you use for more advanced testing?", "RESPX", False),
    # naming the other side sets it aside; giving both sides is the whole answer
    ("Besides pytest-httpx, which third-party mocking library is suggested?", "RESPX", True),
    ("Which mocking libraries suit advanced use-cases?", "RESPX or pytest-httpx", None),
])
def test_one_side_of_a_choice_is_not_the_answer(tmp_path, question, answer, ok):
    store = build_kb(tmp_path / "g.db", {"mocking.md": [("m1", CHOICE_DOC, "en")], **KB})
    got = _check(store, "m1", CHOICE_DOC, question, answer, name="names_one_alternative")
    assert (got["passed"] if got else None) is ok


def test_a_choice_between_twins_is_left_to_the_twin_check(tmp_path):
    store = build_kb(tmp_path / "g.db", KB)
    got = _check(store, "t1", TRANSPORT_DOC,
                 "Which class do you subclass to implement a transport for Client?",
                 "BaseTransport", name="names_one_alternative")
    assert got is None
