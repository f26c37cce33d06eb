"""Planted bad candidates: one of each way a generated item can be wrong, on a tiny handbook.

Used by tests/test_generate_planted.py (with a scripted honest reader: verification must
reject 100%) and by bench/bench_planted.py (the same candidates through the real verifier
model). Each planted item says which check must catch it; `GOOD` are items of the same shapes
that must pass, so a verifier that rejects everything fails the test too.

The honest reader answers as a careful model would from the passages it is shown: `READER`
maps a question to (words a passage must contain, the answer it gives from that passage).
"""

from __future__ import annotations

from builder.generate.candidate import make_candidate
from builder.generate.statements import extract_statements
from builder.store import Store
from builder.store import candidates as cstore
from builder.store.documents import list_chunks
from tests.support.rows import chunk_row, document_row, insert_rows

KB = {
    "devices.md": ("Devices", [
        "Client data may only be accessed on a work device. Personal phones can be used for "
        "email only.",
    ]),
    "holiday.md": ("Holiday", [
        "We offer 25 days of holiday plus bank holidays each calendar year. You can carry over "
        "up to 5 days of unused holiday to the following year.",
    ]),
    "expenses.md": ("Expenses", [
        "Expenses are paid at the end of each month through the payroll. Occasional side "
        "projects, free or paid, are allowed with your manager's agreement.",
    ]),
    "ladder.md": ("Developer", [
        "# Developer\n\n## D1 - Developer 1\n\n"
        "* **Scope**: works on well-defined tasks within one feature\n"
        "* **Trust**: asks for review before every merge\n\n"
        "## D3 - Developer 3\n\n"
        "* **Scope**: owns a whole subsystem and its roadmap\n"
        "* **Trust**: reviews the merges of others",
    ]),
}

REFUSAL = "The knowledge base does not contain this information."


def build(path) -> Store:
    store = Store(path)
    docs, chunks = [], []
    for doc, (title, parts) in KB.items():
        text = "\n\n".join(parts)
        docs.append(document_row(doc, content_hash=str(hash(text)), n_chars=len(text),
                                 n_tokens=len(text) // 4, language="en", metadata={}))
        heading = ["Developer"] if doc == "ladder.md" else []
        chunks += [chunk_row(f"{doc}#{i}", doc, t, i, title=title, heading_path=heading,
                             language="en", metadata={}) for i, t in enumerate(parts)]
    insert_rows(store, "documents", docs)
    insert_rows(store, "chunks", chunks)
    return store


def _fact(store: Store, chunk_id: str, needle: str) -> dict:
    """The statement of chunk `chunk_id` whose evidence contains `needle` (as the code
    extractor cuts it), stored in the facts table."""
    chunk = next(c for c in list_chunks(store) if c["id"] == chunk_id)
    fact = next(f for f in extract_statements(chunk) if needle in f["evidence"])
    fact["document_id"] = chunk["document_id"]
    cstore.record_facts(store, [fact], stage="facts", key=f"planted:{fact['id']}", info={})
    return fact


def _cand(store, ctype, question, answer, facts, *, evidence=None, writer="questions"):
    cand = make_candidate(ctype=ctype, question=question, answer=answer, facts=facts,
                          language="en", prompts={writer: "planted"}, model="planted",
                          seed_fact_id=facts[0]["id"] if facts else None,
                          document_id=None if facts else "holiday.md", key=(question, answer))
    if evidence is not None:  # a fabricated quote
        cand["evidence"][0]["quote"] = evidence
    return cand


def planted(store: Store) -> list[tuple[str, dict, set[str]]]:
    """(what is wrong, candidate, the checks that may reject it), written to the store as
    pending. Several checks can catch one fault; the first to fail decides."""
    holiday = _fact(store, "holiday.md#0", "25 days")
    carry = _fact(store, "holiday.md#0", "carry over")
    devices = _fact(store, "devices.md#0", "work device")
    side = _fact(store, "expenses.md#0", "side")
    paid = _fact(store, "expenses.md#0", "end of each month")
    d1_scope = _fact(store, "ladder.md#0", "well-defined")
    out = [
        ("fabricated evidence span",
         _cand(store, "single_hop", "How many days of holiday does dxw offer each year?",
               "30 days", [holiday], evidence="We offer 30 days of holiday"),
         {"evidence_in_chunk"}),
        ('one-chunk "multi-hop"',
         _cand(store, "multi_hop", "How many unused days can be carried over where 25 days "
               "of holiday are offered?", "up to 5 days", [holiday, carry]),
         {"hops_needed"}),
        ('"multi-hop" one of its two chunks answers',
         _cand(store, "multi_hop", "How many days of unused holiday can be carried over to the "
               "following year?", "up to 5 days", [carry, paid]),
         {"hops_needed", "second_hop_needed"}),
        ('answerable "unanswerable" (same words)',
         _cand(store, "unanswerable", "How many days of holiday are offered each calendar "
               "year?", REFUSAL, []),
         {"kb_does_not_answer", "kb_does_not_answer_llm"}),
        ('answerable "unanswerable" (other words)',
         _cand(store, "unanswerable", "How much paid time off do staff get per year?",
               REFUSAL, []),
         {"kb_does_not_answer", "kb_does_not_answer_llm"}),
        ("tautology",
         _cand(store, "single_hop", "What is an occasional side project?",
               "An occasional side project, free or paid.", [side]),
         {"answer_adds_information"}),
        ("answer contradicting its evidence (restating the question)",
         _cand(store, "single_hop", "Can client data be accessed on a personal device?",
               "Yes, client data can be accessed on a personal device.", [devices]),
         {"answer_adds_information", "answer_in_evidence", "round_trip"}),
        ("answer contradicting its evidence (a bare no)",
         _cand(store, "single_hop", "Can client data be accessed only on a work device?",
               "No.", [devices]),
         {"round_trip"}),
        ("answer from another level of a rubric",
         _cand(store, "single_hop", "What scope is expected of a Developer 3?",
               "works on well-defined tasks within one feature", [d1_scope]),
         {"names_section", "round_trip"}),
        ("the prompt's example question copied",
         _cand(store, "single_hop", "How much does a pass cost?", "25 days", [holiday],
               writer="evolve_ambiguous"),
         {"not_an_example"}),
        ("unanswerable off the knowledge base's topics",
         _cand(store, "unanswerable", "Are you a vegetarian?", REFUSAL, []),
         {"in_domain"}),
    ]
    cstore.record_candidates(store, [c for _, c, _ in out], stage="planted", key="planted", info={})
    return out


def good(store: Store) -> list[dict]:
    """Items of the same shapes that are right: they must pass."""
    carry = _fact(store, "holiday.md#0", "carry over")
    devices = _fact(store, "devices.md#0", "work device")
    d1_scope = _fact(store, "ladder.md#0", "well-defined")
    items = [
        _cand(store, "single_hop", "How many days of unused holiday can be carried over to the "
              "following year?", "up to 5 days", [carry]),
        _cand(store, "single_hop", "Can client data be accessed on a personal device?",
              "No, only on a work device.", [devices]),
        _cand(store, "single_hop", "What scope is expected of a Developer 1?",
              "works on well-defined tasks within one feature", [d1_scope]),
        _cand(store, "unanswerable", "Is there a paid sabbatical after five years of holiday "
              "service?", REFUSAL, []),
    ]
    cstore.record_candidates(store, items, stage="planted-good", key="planted-good", info={})
    return items


# question -> [(words a passage must hold, what an honest reader answers from it)]
READER = {
    "How many days of holiday does dxw offer each year?": [("25 days of holiday", "25 days")],
    "How many days of unused holiday can be carried over to the following year?":
        [("carry over", "up to 5 days")],
    "How many unused days can be carried over where 25 days of holiday are offered?":
        [("carry over", "up to 5 days")],
    "How many days of holiday are offered each calendar year?": [("25 days", "25 days")],
    "How much paid time off do staff get per year?": [("25 days", "25 days of holiday")],
    "What is an occasional side project?": [("side projects", "free or paid")],
    "Can client data be accessed on a personal device?":
        [("work device", "No, only on a work device")],
    "Can client data be accessed only on a work device?":
        [("work device", "Yes, client data may only be accessed on a work device")],
    "What scope is expected of a Developer 3?": [("owns a whole subsystem",
                                                  "owns a whole subsystem and its roadmap")],
    "What scope is expected of a Developer 1?": [("well-defined tasks",
                                                  "works on well-defined tasks within one feature")],
    "How much does a pass cost?": [],
}


def honest_reader(name: str, v, role: str) -> dict:
    """The scripted verifier: the `roundtrip` answers a careful reader gives (see READER)."""
    import re

    assert name == "roundtrip", name
    passages = re.findall(r'<passage number="\d+">\n(.*?)\n</passage>', v["passages"], re.S)
    for needle, answer in READER.get(v["question"], []):
        for i, text in enumerate(passages, 1):
            if needle in text:
                return {"passage": i, "answer": answer}
    return {"passage": 0, "answer": ""}
