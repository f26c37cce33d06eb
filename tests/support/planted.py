"""Planted bad items: one of each way a generated item can be wrong, on a tiny handbook.

Used by tests/test_generate_planted.py (with a scripted honest reader: the checks must reject
100%) and by bench/bench_planted.py (the same items through the real reader model). Each
planted item says which check must catch it; `good` items have the same shapes and must pass,
so checks that reject everything fail the test too.

Single-hop items are (question, the span it was written for); harder items are composer
replies over verified parts. The honest reader answers as a careful model would from the
sentences it is shown: `READER` maps a question to (words a sentence must contain, the answer
it gives from that sentence).
"""

from __future__ import annotations

from dataclasses import dataclass

from builder.generate.answers import Span
from builder.generate.spans import spans_of_chunk
from builder.store import Store
from builder.store.documents import list_chunks
from tests.support.rows import chunk_row, document_row, insert_rows

KB = {
    "devices.md": ("Devices", [
        "Client data may only be accessed on a work device. Personal phones can be used for "
        "email only.",
    ]),
    "holiday.md": ("Holiday", [
        "We offer 25 days of holiday plus bank holidays each calendar year. You can carry over "
        "5 days of unused holiday to the following year.",
    ]),
    "expenses.md": ("Expenses", [
        "Expenses are paid at the end of each month through the payroll. Occasional side "
        "projects, free or paid, are allowed with your manager's agreement.",
    ]),
    "timeouts.md": ("Timeouts", [
        "If the client is unable to connect within the time limit, a ConnectError is raised. "
        "If the client is unable to send data within the time limit, a WriteError is raised. "
        "If the client is unable to read data within the time limit, a ReadError is raised.",
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



def span(store: Store, chunk_id: str, answer: str, *, mention: list[str] | None = None) -> Span:
    """The span code chose for `answer` in chunk `chunk_id` (as the generator chooses it)."""
    chunk = next(c for c in list_chunks(store) if c["id"] == chunk_id)
    title = chunk["title"]
    found = next(s for s in spans_of_chunk(chunk, title) if s.answer == answer)
    if mention is not None:
        found.mention = mention
    return found


def planted_single(store: Store) -> list[tuple[str, str, Span, set[str]]]:
    """(what is wrong, question, span, the checks that may reject it)."""
    days25 = span(store, "holiday.md#0", "25 days")
    days5 = span(store, "holiday.md#0", "5 days")
    return [
        ("the answer in the question", "Is it 25 days of holiday that dxw offers each year?",
         days25, {"form"}),
        ("points at the text", "According to the text, how many days of holiday are offered?",
         days25, {"form"}),
        ("wrong language", "¿Cuántos días de vacaciones se ofrecen cada año natural?", days25,
         {"form"}),
        ("copies its passage", "We offer how many days of holiday plus bank holidays each "
         "calendar year?", days25, {"form"}),
        # also silent on what its answer is: neither word next to "5 days" ("carry", "unused")
        ("vague: another value answers it", "How many days of holiday are there?", days5,
         {"round_trip", "form"}),
        ("needs context it does not state", "What is the limit?", days5, {"round_trip", "form"}),
        ("asks for something else", "How many bank holidays are there each calendar year?",
         days25, {"round_trip"}),
    ]


def good_single(store: Store) -> list[tuple[str, Span]]:
    return [
        ("How many days of unused holiday can staff carry over to the following year?",
         span(store, "holiday.md#0", "5 days")),
        ("How many days of holiday does the company offer each calendar year, on top of bank "
         "holidays?", span(store, "holiday.md#0", "25 days")),
    ]


# question -> [(words a sentence must contain, what an honest reader answers from it)]
READER = {
    "How many days of holiday are there?": [("25 days", "25 days")],
    "What is the limit?": [],
    "How many bank holidays are there each calendar year?": [("bank holidays", "25 days plus bank holidays")],
    "How many days of unused holiday can staff carry over to the following year?":
        [("carry over", "5 days")],
    "How many days of holiday does the company offer each calendar year, on top of bank "
    "holidays?": [("25 days", "25 days")],
    # composed items: the honest reader over the parts' sentences
    "Which is smaller, the holiday each calendar year or the unused holiday staff carry over?":
        [("carry over", "5 days")],
    "Which is larger, the holiday each calendar year or the unused holiday staff carry over?":
        [("25 days", "25 days")],
    "How much holiday is there for the Tacoma office?": [("25 days", "25 days")],
}


def honest_reader(name: str, v, role: str) -> dict:
    """The scripted reader (see READER); only the reader prompt is expected here."""
    import re

    assert name == "reader", name
    shown = [m.group(1) for m in re.finditer(r"^\[\d+\] (.*)$", v["sentences"], re.M)]
    for needle, answer in READER.get(v["question"], []):
        for i, text in enumerate(shown, 1):
            if needle in text:
                return {"sentence": i, "answer": answer}
    return {"sentence": 0, "answer": ""}


# ------------------------------------------------------------------ harder items

def part(store: Store, chunk_id: str, answer: str, question: str, label: str | None = None):
    """A verified single-hop item on the planted KB, as composing reads it; `label` names it
    among parallel spans (answers.find_pairs labels them from the section in a real run)."""
    from dataclasses import replace

    from builder.generate.compose import Part
    from builder.text.values import find_values

    sp = span(store, chunk_id, answer)
    if label:
        sp = replace(sp, label=label)
    cand = {"id": f"c-{answer}-{question[:12]}", "question": question, "answer": answer,
            "language": "en", "fact_ids": [sp.fact["id"]], "chunk_ids": [chunk_id],
            "seed_fact_id": sp.fact["id"], "document_id": sp.document_id,
            "evidence": [{"chunk_id": chunk_id, "quote": sp.fact["evidence"],
                          "start": sp.fact["evidence_start"], "end": sp.fact["evidence_end"]}]}
    values = find_values(answer, "en")
    return Part(cand, sp, values[0] if values else None)


@dataclass
class PlantedHarder:
    """A composer's reply over verified parts: `bad` ones must be rejected by one of `checks`
    (the check meant to catch that mistake), right ones must pass."""

    what: str
    kind: str
    reply: dict
    args: tuple
    bad: bool = True
    checks: frozenset[str] = frozenset()


def planted_harder(store: Store) -> list[PlantedHarder]:
    holiday = part(store, "holiday.md#0", "25 days",
                   "How many days of holiday does the company offer each calendar year?")
    carry = part(store, "holiday.md#0", "5 days",
                 "How many days of unused holiday can staff carry over?")
    offered = part(store, "holiday.md#0", "25 days", "How many days of holiday are offered?")
    carried = part(store, "holiday.md#0", "5 days",
                   "How many of the 25 days can staff carry over?")
    d1 = part(store, "ladder.md#0", "works on well-defined tasks within one feature",
              "What is the scope of a D1 - Developer 1?", label="D1 - Developer 1")
    d1_reworded = part(store, "ladder.md#0", "works on well-defined tasks within one feature",
                       "What is the scope of a first-level developer?", label="D1 - Developer 1")
    d3 = part(store, "ladder.md#0", "owns a whole subsystem and its roadmap",
              "What is the scope of a D3 - Developer 3?", label="D3 - Developer 3")
    holiday_again = part(store, "holiday.md#0", "5 days",
                         "How many days of holiday does the company offer each calendar year?")
    holiday_long = part(store, "holiday.md#0", "25 days",
                        "How many days of holiday, on top of the bank holidays and any days "
                        "the company closes between Christmas and New Year, does the company "
                        "offer its staff each calendar year?")
    return [
        # comparatives and differences are written by code (no reply): what can still go
        # wrong is the parts they are built from
        PlantedHarder("a comparative of two parts asked in the same words (which value is which?)",
                      "comparative", {}, (holiday, holiday_again), checks=frozenset({"names"})),
        PlantedHarder("a comparative one of whose parts states the other's value", "comparative",
                      {}, (offered, carried), checks=frozenset({"leak"})),
        PlantedHarder("a difference one of whose parts states the other's value", "reasoning",
                      {}, (offered, carried), checks=frozenset({"leak"})),
        PlantedHarder("a comparative too long to read as one question", "comparative", {},
                      (holiday_long, carry), checks=frozenset({"form"})),
        PlantedHarder("a multi-hop that names its bridge", "multi_hop",
                      {"question": "How many days of holiday, 25 days, are offered?"},
                      (offered, carried), checks=frozenset({"bridge"})),
        PlantedHarder("a multi-hop one chunk answers", "multi_hop",
                      {"question": "What does the holiday policy offer each year?"},
                      (offered, offered), checks=frozenset({"necessity", "hop1"})),
        PlantedHarder("an unanswerable whose sibling the knowledge base uses (it answers it)",
                      "unanswerable", {"names": ["payroll"]}, (holiday, "company"),
                      checks=frozenset({"absent"})),
        PlantedHarder("an ambiguous item that still names one reading", "ambiguous",
                      {"question": "What is the scope of D1 - Developer 1?"},
                      (d1_reworded, d3), checks=frozenset({"labels"})),
        PlantedHarder("an ambiguous item that no longer asks what its parts ask", "ambiguous",
                      {"question": "What does the ladder say?"},
                      (d1_reworded, d3), checks=frozenset({"frame"})),
        PlantedHarder("right: an ambiguous item, its label taken out by code", "ambiguous",
                      {}, (d1, d3), bad=False),
        PlantedHarder("right: a comparative asking which is larger", "comparative", {},
                      (holiday, carry), bad=False),
        PlantedHarder("right: a reasoning item asking for the difference", "reasoning", {},
                      (holiday, carry), bad=False),
    ]


class ComposerReplies:
    """An LLM that gives every composing prompt `reply` (the planted mistake) and passes every
    other call -- the reader -- to `llm` (a scripted honest reader, or the real model)."""

    dry_run = False

    def __init__(self, llm, reply: dict):
        self.llm, self.reply = llm, reply

    async def structured(self, prompt, variables, output, *, stage=None, role="generator"):
        from builder.llm.types import LLMResult

        if prompt.name.startswith("compose_"):
            return LLMResult(output.model_validate(self.reply), "ok", model="planted")
        return await self.llm.structured(prompt, variables, output, stage=stage, role=role)

    def model_for(self, role: str = "generator", stage: str | None = None) -> str:
        return self.llm.model_for(role, stage)


async def compose_planted(store: Store, llm, item: PlantedHarder) -> dict:
    """The composed row for `item`, its reader calls made through `llm`."""
    from builder.generate import compose
    from builder.generate.context import RunContext
    from builder.generate.knowledge import KnowledgeIndex
    from builder.generate.models import GenerateOptions

    ctx = RunContext.create(store, ComposerReplies(llm, item.reply), GenerateOptions())
    chunks = list_chunks(store)
    kb = KnowledgeIndex(chunks, {c["id"]: c["title"] for c in chunks})
    if item.kind in ("comparative", "reasoning"):  # written by code, no call
        fn = compose.comparative if item.kind == "comparative" else compose.difference
        return fn(ctx, *item.args)
    fn = {"ambiguous": compose.ambiguous, "multi_hop": compose.multi_hop,
          "unanswerable": compose.unanswerable}[item.kind]
    return await fn(ctx, *item.args, kb)
