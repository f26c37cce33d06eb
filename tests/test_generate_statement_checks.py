"""`statement_says_what`: a single-hop item is written only from a statement that says what its
answer is about. Read on Obsidian's Spanish help (issue 12): "Tomará hasta 3 días hábiles." and
"Si no, nuestro equipo intentará revisar tu solicitud dentro de 3 días hábiles." both leave the
request, or its condition, to the sentence before, and the questions written from them
("¿Cuánto tiempo tiene que esperar para que revisen tu solicitud?") do not say which request."""

from __future__ import annotations

import pytest

from builder.generate.checks import Subject, statement_says_what


def _says_what(statement: str, answer: str, question: str = "¿Cuánto tiempo tarda?"):
    fact = {"id": "f1", "text": statement, "evidence": statement, "cell": None}
    return statement_says_what(Subject(None, {"question": question, "answer": answer}, [fact], {}))


@pytest.mark.parametrize("statement,answer,ok", [
    ("Tomará hasta 3 días hábiles.", "hasta 3 días hábiles", False),
    ("Si no, nuestro equipo intentará revisar tu solicitud dentro de 3 días hábiles.",
     "dentro de 3 días hábiles", False),
    ("Otherwise, the support team replies to your request within 2 working days.",
     "within 2 working days", False),
    ("In that case the refund is paid within 14 days.", "within 14 days", False),
    # a statement that names its subject and carries its own condition is usable
    ("Las solicitudes de descuento educativo se revisan dentro de 3 días hábiles.",
     "dentro de 3 días hábiles", True),
    ("If you are not satisfied, the refund is paid within 14 days.", "within 14 days", True),
    ("Sin costes adicionales, Sync guarda el historial durante 12 meses.", "12 meses", True),
])
def test_a_statement_must_say_what_its_answer_is_about(statement, answer, ok):
    passed, reason = _says_what(statement, answer)
    assert passed is ok
    assert bool(reason) is not ok


def test_labelled_entries_and_table_cells_take_their_subject_elsewhere():
    cell = {"id": "f1", "text": "3", "evidence": "3", "cell": {"row": "Sync Plus"}}
    assert statement_says_what(Subject(None, {"question": "q?", "answer": "3"}, [cell], {})) is None
    assert _says_what("**Escritorio**: Otherwise choose Configurar", "Configurar") is None
