"""One of several answers in one sentence (coordination.py): "HTTPX supports Basic and Digest
HTTP authentication" answers "What authentication method does HTTPX support?" with both, so
"Digest HTTP" alone is wrong. Found on the httpx docs and Obsidian's Spanish help (issue 12)."""

from __future__ import annotations

import pytest

from builder.generate import coordination
from builder.generate.checks import Subject, asks_the_class, names_one_conjunct


def _conjunct(question: str, answer: str, evidence: str):
    fact = {"id": "f1", "text": evidence, "evidence": evidence, "cell": None}
    return names_one_conjunct(Subject(None, {"question": question, "answer": answer}, [fact], {}))


@pytest.mark.parametrize("question,answer,evidence,ok", [
    ("What authentication method does HTTPX support?", "Digest HTTP",
     "HTTPX supports Basic and Digest HTTP authentication.", False),
    ("What command-line option does Uvicorn provide for enabling HTTPS?", "--ssl-keyfile",
     "Uvicorn provides the `--ssl-keyfile` and `--ssl-certfile` options.", False),
    ("What parameter can be used for query parameters and form data?", "params=",
     "For both query params (`params=`) and form data (`data=`), requests sends tuples.", False),
    ("¿Cuáles son los métodos de pago aceptados?", "AliPay.",
     "Aceptamos tarjetas de crédito, PayPal, WeChat y AliPay.", False),
    # naming the other sets it aside; a position picks one out
    ("Besides Basic, which authentication method does HTTPX support?", "Digest HTTP",
     "HTTPX supports Basic and Digest HTTP authentication.", True),
    ("¿Cuál es el nombre del tercer nivel de Catalyst?", "VIP.",
     "Hay tres niveles de Catalyst: *Insider*, *Supporter* y *VIP*.", None),
    # a plain word or a clause after "and" is no second answer
    ("What is the default timeout?", "5 seconds",
     "The timeout defaults to 5 seconds, and can be changed per request.", None),
    ("Which header carries the charset?", "Content-Type",
     "Most servers send a Content-Type header, including a charset encoding.", None),
])
def test_one_conjunct_is_not_the_answer(question, answer, evidence, ok):
    got = _conjunct(question, answer, evidence)
    assert (got[0] if got else None) is ok


def test_only_a_conjunct_of_the_answers_shape_counts():
    assert coordination.other_conjunct("Digest HTTP", "supports Basic and Digest HTTP auth") == "Basic"
    assert coordination.other_conjunct("10 GB", "Sync Plus includes 10 GB or 100 GB") == "100"
    assert coordination.other_conjunct("5 seconds", "It waits 5 seconds and then retries") is None
    pair = "For both query params (`params=`) and form data (`data=`), requests sends tuples."
    assert coordination.other_conjunct("params=", pair) == "data="
    assert coordination.other_conjunct("data=", pair) == "params="
    assert coordination.other_conjunct("timeout=", "Set a limit (`timeout=`) and retry.") is None


_MEDIA = ("[[Introducción a Obsidian Publish|Obsidian Publish]] te permite alojar notas y varios "
          "tipos de archivos multimedia, incluyendo imágenes y videoclips, con un límite de 4 GB "
          "por sitio.")


@pytest.mark.parametrize("question,answer,evidence,ok", [
    # what holds for the class is asked of one example
    ("¿Cuál es el límite de imágenes por sitio en Obsidian Publish?", "4 GB", _MEDIA, False),
    ("How much notice do you give for a funeral?", "2 weeks",
     "Give 2 weeks' notice for family events, such as weddings or funerals.", False),
    # the question names the class, or the answer is the examples themselves
    ("¿Cuál es el límite de archivos multimedia por sitio en Obsidian Publish?", "4 GB", _MEDIA, True),
    ("¿Qué tipos de archivos multimedia puede alojar Obsidian Publish?", "imágenes y videoclips",
     _MEDIA, True),
    # "like" also means "similar to": no example list
    ("Which parameter configures a proxy?", "proxy",
     "Pass the proxy parameter to functions like httpx.get().", True),
])
def test_a_question_about_one_example_of_a_class_is_rejected(question, answer, evidence, ok):
    fact = {"id": "f1", "text": evidence, "evidence": evidence, "cell": None}
    got = asks_the_class(Subject(None, {"question": question, "answer": answer}, [fact], {}))
    if ok:
        assert got is None
    else:
        assert got[0] is False and "one example" in got[1]


def test_the_example_list_ends_where_a_clause_starts():
    # "con un límite ..." after the list is not an example: asking about the limit of the
    # class stays fine, asking about "videoclips" does not
    assert coordination.example_asked("¿Qué límite tienen los videoclips?", "4 GB", _MEDIA)[1] == "multimedia"
    assert coordination.example_asked("¿Cuál es el límite por sitio de los archivos multimedia?",
                                      "4 GB", _MEDIA) is None
