"""`uses_both_hops`: a multi-hop question takes something from each of its hops. Read on
Obsidian's Spanish help (issue 12): "¿Cuál es el límite de almacenamiento que ofrece Sync Plus?"
came back as a multi-hop item citing Publish's 4 GB media limit as its first hop; the question
and its answer come from the plans table alone."""

from __future__ import annotations

from builder.generate.checks import Subject, uses_both_hops

PUBLISH = ("Obsidian Publish te permite alojar notas y varios tipos de archivos multimedia, "
           "incluyendo imágenes y videoclips, con un límite de 4 GB por sitio.")
PLANS = ("## Planes\n\n| Plan | Almacenamiento total |\n|---|---|\n"
         "| Sync Plus | 10 GB a 100 GB |")
CHUNKS = {"media": {"id": "media", "text": PUBLISH}, "plans": {"id": "plans", "text": PLANS}}


def _hops(question: str, answer: str, statements: dict[str, str]):
    """Facts in hop order, one per chunk; each cites its whole statement."""
    cand = {"question": question, "answer": answer,
            "evidence": [{"chunk_id": c, "quote": t} for c, t in statements.items()]}
    facts = [{"id": f"f{i}", "chunk_id": c, "text": t, "evidence": t}
             for i, (c, t) in enumerate(statements.items())]
    return uses_both_hops(Subject(None, cand, facts, CHUNKS))


def test_a_question_from_one_hop_is_not_multi_hop():
    plans = "Sync Plus — Almacenamiento total: 10 GB a 100 GB"
    passed, reason = _hops("¿Cuál es el límite de almacenamiento que ofrece Sync Plus?",
                           "10 GB a 100 GB", {"media": PUBLISH, "plans": plans})
    assert passed is False and "media" in reason


def test_a_question_that_needs_both_hops_passes():
    passed, _ = _hops("¿Cuánto almacenamiento total tiene el plan Sync que supera el límite de "
                      "4 GB de imágenes y videoclips de Publish?", "10 GB a 100 GB",
                      {"media": PUBLISH, "plans": "Sync Plus — Almacenamiento total: 10 GB a 100 GB"})
    assert passed is True


def test_one_cited_chunk_is_left_to_hops_needed():
    assert _hops("¿Qué límite tiene Publish?", "4 GB", {"media": PUBLISH}) is None
