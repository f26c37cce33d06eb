"""What code decides for the model: unanswerable candidates (invented siblings and topic gaps,
kept only when the whole knowledge base cannot answer them), single-hop answers, ambiguous
answers and underspecified questions, question clean-up."""

from __future__ import annotations

import asyncio

import pytest

from builder.generate.candidate import clean_question
from builder.generate.context import RunContext
from builder.generate.evolve import ambiguous_answer, unnamed
from builder.generate.models import GenerateOptions
from builder.generate.terms import answer_target, holds_all_terms
from builder.generate.statements import extract_statements
from builder.generate.unanswerable import (
    invented_name_problem, new_sibling_name, outline, propose, screen, sibling_groups,
)
from builder.store.candidates import load_candidates
from builder.store.documents import list_chunks
from builder.store.search import absent_terms

from tests.fakes import ScriptedLLM
from tests.support.scripted_kb import build_kb

PROPOSALS = [
    "How much does the Gold membership cost per year?",   # answered by chunk m1
    "Do you gift wrap shipping orders?",                   # 'gift', 'wrap' absent
    "Do you gift wrap shipping orders?",                   # repeated
    "你们提供礼品包装吗？",                                  # not the KB's main language
    "Can I pay for shipping with Bitcoin? Yes you can.",  # cut after the question mark
    "Are you a vegetarian?",                               # off the KB's topics
    "Shipping",                                            # not a question
]


def _ctx(store, llm):
    return RunContext.create(store, llm, GenerateOptions(n=4))


def test_absent_terms_uses_stems_and_prefixes(kb_store):
    store = kb_store
    assert absent_terms(store, ["shipping", "shipped", "restocking", "wrapping", "bitcoin"]) == [
        "wrapping", "bitcoin"]
    assert absent_terms(store, ["标准", "礼品"]) == ["礼品"]


def test_screen_reasons(kb_store):
    store = kb_store
    assert screen(store, "How much does the Gold membership cost per year?", "en") == \
        "a chunk contains every term"
    assert screen(store, "Do you gift wrap shipping orders?", "en") is None
    assert screen(store, "Are you a vegetarian?", "en").startswith("off the knowledge base's topics")
    assert screen(store, "你们提供礼品包装吗？", "en") == "wrong language"
    assert screen(store, "Gift wrapping", "en") == "not a question"


def test_propose_keeps_only_unanswerable_questions(kb_store):
    store = kb_store
    llm = ScriptedLLM(lambda name, v, role: {"questions": PROPOSALS})
    chunks = list_chunks(store)
    made = asyncio.run(propose(_ctx(store, llm), chunks, [], want=3))  # no table: topics
    cands = load_candidates(store)
    assert made == 2 == len(cands)
    assert sorted(c["question"] for c in cands) == ["Can I pay for shipping with Bitcoin?",
                                                     "Do you gift wrap shipping orders?"]
    for c in cands:
        assert c["type"] == "unanswerable" and c["chunk_ids"] == [] and c["evidence"] == []
        assert c["answer"].startswith("The knowledge base does not")
        assert c["document_id"] in {ch["document_id"] for ch in chunks}
    [(name, variables, _)] = llm.calls
    assert name == "evolve_unanswerable_topics" and "membership.md" in variables["topics"]
    assert variables["avoid"] == ""


def test_second_attempt_lists_what_was_asked_and_writes_no_repeats(kb_store):
    store = kb_store
    llm = ScriptedLLM(lambda name, v, role: {"questions": ["Do you gift wrap shipping orders?",
                                                           "Is there parking for store returns?"]})
    ctx = _ctx(store, llm)
    chunks = list_chunks(store)
    assert asyncio.run(propose(ctx, chunks, [], want=1)) == 1
    assert asyncio.run(propose(ctx, chunks, [], want=1)) == 1
    assert "Do you gift wrap shipping orders?" in llm.calls[1][1]["avoid"]
    questions = sorted(c["question"] for c in load_candidates(store))
    assert questions == ["Do you gift wrap shipping orders?", "Is there parking for store returns?"]


def test_outline_lists_titles_and_headings():
    chunks = [
        {"document_id": "a.md", "title": "Returns", "heading_path": ["Returns", "Window"]},
        {"document_id": "a.md", "title": "Returns", "heading_path": ["Returns", "Fees"]},
        {"document_id": "b.md", "title": "Shipping", "heading_path": None},
    ]
    assert outline(chunks) == "- Returns: Window; Fees\n- Shipping"


def test_answer_target_picks_the_value():
    def target(text, cell=None):
        return answer_target({"text": text, "cell": cell})

    assert target("Most items can be returned within 45 days of purchase.") == "45 days"
    assert target("Gold — Annual fee: $60 (US) / CA$75 (Canada)",
                  {"entity": "Gold", "attribute": "Annual fee",
                   "value": "$60 (US) / CA$75 (Canada)"}) == "$60 (US) / CA$75 (Canada)"
    assert target("The Denver store opened on September 14, 2024.") == "September 14, 2024"
    assert target("A restocking fee of 10% applies to opened items.") == "10%"
    assert target("Express to Canada costs CA$29.95.") == "CA$29.95"
    assert target("标准配送需要5天送达。") == "5天"
    assert target("Pickup is free at every store.") is None
    assert target("We employ 1,200 people.") == "1,200 people"
    # a port in a URL is not a value, and ", pass" is not part of a number
    assert target("Route traffic to a proxy at http://localhost:8030, pass the URL to the client.") is None


def test_clean_question_cuts_what_follows_the_question():
    assert clean_question("How long? You can return it within 45 days.") == "How long?"
    assert clean_question("  Is it   free? ") == "Is it free?"
    assert clean_question("退货期限是多少天？45天。") == "退货期限是多少天？"
    assert clean_question("No question mark") == "No question mark"
    # link markup copied from the source becomes its text
    assert clean_question("¿Qué campo se establece en las [[Propiedades]] de la nota?") == \
        "¿Qué campo se establece en las Propiedades de la nota?"
    assert clean_question("¿Cómo se [[Publicar tu contenido#Publicar notas|publica]] una nota?") == \
        "¿Cómo se publica una nota?"
    assert clean_question("How do I use the [CLI](https://x.org/cli) offline?") == \
        "How do I use the CLI offline?"


STORES = ("| Store | Address | Repair shop |\n|---|---|---|\n"
          "| Portland (Pearl District) | 1200 NW Marshall Street | Yes |\n"
          "| Seattle (Ballard) | 5410 Ballard Avenue NW | Yes |\n"
          "| Boise (Downtown) | 820 W Idaho Street | No |")
TABLE_KB = {"stores.md": [("t1", STORES, "en")],
            "hours.md": [("h1", "Every store opens at 9 a.m. on weekdays.", "en")]}


def _table_facts(store):
    chunks = list_chunks(store)
    facts = [f for c in chunks for f in extract_statements(c)]
    for f in facts:
        f["document_id"] = "stores.md"
    return chunks, facts


def test_sibling_groups_come_from_table_attributes(tmp_path):
    store = build_kb(tmp_path / "g.db", TABLE_KB)
    _, facts = _table_facts(store)
    groups = sorted(sibling_groups(facts, seed=0), key=lambda g: g["attribute"])
    assert [g["attribute"] for g in groups] == ["Address", "Repair shop"]
    assert groups[0]["names"] == ["Portland (Pearl District)", "Seattle (Ballard)", "Boise (Downtown)"]


def test_invented_name_must_be_new_to_the_kb_and_named(tmp_path):
    store = build_kb(tmp_path / "g.db", TABLE_KB)
    names = ["Portland (Pearl District)", "Seattle (Ballard)", "Boise (Downtown)"]
    ask = "What is the address of the {} store?"
    assert invented_name_problem(store, "Tacoma (Downtown)", ask.format("Tacoma"), names) is None
    assert invented_name_problem(store, "Pearl District", ask.format("Pearl District"), names) == \
        "the name only repeats words of the listed names"
    assert invented_name_problem(store, "Marshall", ask.format("Marshall"), names) == \
        "the knowledge base mentions the invented name"
    assert invented_name_problem(store, "Tacoma", ask.format("new"), names) == \
        "the question does not name the invented thing"
    assert invented_name_problem(store, "Seattle (Ballard)", ask.format("Seattle"), names) == \
        "the name is one of the listed names"
    products = ["Trailhead 2", "Trailhead 3"]
    assert invented_name_problem(store, "Trailhead 4", "What does the Trailhead 4 weigh?",
                                 products) is None  # a new number: the phrase is new


def test_propose_prefers_invented_siblings(tmp_path):
    store = build_kb(tmp_path / "g.db", TABLE_KB)
    chunks, facts = _table_facts(store)
    replies = iter([{"name": "Tacoma", "question": "What is the address of the Tacoma store?"},
                    {"name": "Ballard", "question": "Does the Ballard store have a repair shop?"}])

    def respond(name, v, role):
        if name == "evolve_unanswerable_near":  # near misses of statements: none usable here
            return {"questions": ["What is the address of the Seattle store?"]}  # answered
        if name == "evolve_unanswerable_topics":  # siblings gave one of two: topics for the rest
            return {"questions": ["Is there a café in the Seattle store?"]}
        return next(replies)

    llm = ScriptedLLM(respond)
    assert asyncio.run(propose(_ctx(store, llm), chunks, facts, want=2)) == 2
    assert [name for name, _, _ in llm.calls] == ["evolve_unanswerable"] * 2 + [
        "evolve_unanswerable_near", "evolve_unanswerable_topics"]
    cand = next(c for c in load_candidates(store) if "Tacoma" in c["question"])
    assert cand["question"] == "What is the address of the Tacoma store?"
    assert cand["document_id"] == "stores.md" and cand["chunk_ids"] == []
    infos = store.query("SELECT info FROM stage_done WHERE stage = 'unanswerable'")
    assert any("the name only repeats" in i["info"] for i in infos)  # Ballard is listed
    # both groups are done: the next call asks for topic gaps instead
    llm2 = ScriptedLLM(lambda name, v, role: {"questions": ["Does the Seattle store sell bicycles?"]}
                       if name == "evolve_unanswerable_topics" else {"questions": []})
    assert asyncio.run(propose(_ctx(store, llm2), chunks, facts, want=1)) == 1
    # (and the KB's few statements were all shown in the first near-miss call)
    assert [name for name, _, _ in llm2.calls] == ["evolve_unanswerable_topics"]


def test_ambiguous_question_loses_the_one_name_it_gives():
    names = ["Basic", "Gold"]
    assert unnamed("What is the annual fee for Basic?", names) == "What is the annual fee?"
    assert unnamed("How much does a Gold pass cost?", names) == "How much does a pass cost?"
    assert unnamed("How much does the Gold membership cost?", ["Gold membership", "Basic membership"],
                   "membership") == "How much does the membership cost?"
    both = "Is Gold dearer than Basic?"
    assert unnamed(both, names) == both  # a comparison: left for the checks to reject
    assert unnamed("Basic?", names) == "Basic?"  # nothing would be left


def test_ambiguous_answer_names_every_reading():
    facts = [{"text": "Basic — Rental discount: 5%"}, {"text": "Gold members get 20% off."}]
    assert ambiguous_answer("It depends on which one you mean.", facts) == (
        "It depends on which one you mean. Basic — Rental discount: 5%. Gold members get 20% off.")


def test_new_sibling_name_continues_a_numbered_series(tmp_path):
    store = build_kb(tmp_path / "g.db", TABLE_KB)
    assert new_sibling_name(store, ["Trailhead 2", "Trailhead 3", "Summit Ridge 2"]) == "Trailhead 4"
    assert new_sibling_name(store, ["Portland (Pearl District)", "Seattle (Ballard)"]) is None
    news = build_kb(tmp_path / "n.db", {"news.md": [("n1", "The Trailhead 4 arrives in May.", "en")]})
    assert new_sibling_name(news, ["Trailhead 2", "Trailhead 3"]) == "Trailhead 5"  # 4 is known


def test_code_names_the_new_sibling_when_the_names_form_a_series(tmp_path):
    tents = ("| Tent | Seasons |\n|---|---|\n| Trailhead 2 | 3 |\n| Trailhead 3 | 3 |\n"
             "| Summit Ridge 2 | 4 |")
    store = build_kb(tmp_path / "g.db", {"tents.md": [("t1", tents, "en")]})
    chunks, facts = _table_facts(store)
    seen = {}

    def respond(name, v, role):
        seen.update(v)
        return {"name": "Trailhead 2", "question": f"How many seasons is the {v['new_name']} for?"}

    assert asyncio.run(propose(_ctx(store, ScriptedLLM(respond)), chunks, facts, want=1)) == 1
    assert seen["new_name"] == "Trailhead 4" and seen["attribute"] == "Seasons"
    [cand] = load_candidates(store)
    assert cand["question"] == "How many seasons is the Trailhead 4 for?"


def test_numbered_names_count_as_one_term():
    table = "| Tent | Seasons |\n| Trailhead 2 | 4 |\n| Trailhead 3 | 3 |"
    assert not holds_all_terms("How many seasons is the Trailhead 4 for?", table)
    assert holds_all_terms("How many seasons is the Trailhead 3 for?", table)
    assert holds_all_terms("How many seasons is the tent for?", table)
    assert not holds_all_terms("Is the tent waterproof?", table)


def test_ambiguous_question_naming_one_reading_is_caught():
    from builder.generate.checks import names_a_reading
    names = ["Sleeping bag (20 °F / −7 °C)", "Sleeping pad"]
    assert names_a_reading("How much does a sleeping bag cost per day?", names) == [names[0]]
    assert names_a_reading("How much does the sleeping gear cost per day?", names) == []
    assert names_a_reading("What is the annual fee for Gold?", ["Basic", "Gold"]) == ["Gold"]


def _checks(store, cand, facts, example=""):
    from builder.generate.checks import code_checks
    from builder.store.documents import chunks_by_id

    chunks = chunks_by_id(store, cand["chunk_ids"])
    return {c["check"]: c for c in code_checks(store, cand, facts, chunks, example)}


def _cell_candidate(store, question):
    chunks, facts = _table_facts(store)
    fact = next(f for f in facts if f["text"].startswith("Seattle (Ballard) — Address"))
    cand = {"type": "single_hop", "question": question, "answer": "5410 Ballard Avenue NW",
            "language": "en", "chunk_ids": [fact["chunk_id"]],
            "evidence": [{"chunk_id": fact["chunk_id"], "quote": fact["evidence"]}]}
    return cand, [fact]


def test_a_table_cell_question_must_name_its_row(tmp_path):
    store = build_kb(tmp_path / "g.db", TABLE_KB)
    cand, facts = _cell_candidate(store, "What is the address of the Seattle store?")
    assert _checks(store, cand, facts)["names_subject"]["passed"] is True
    cand, facts = _cell_candidate(store, "What is the address of the store?")
    assert _checks(store, cand, facts)["names_subject"]["passed"] is False


def test_words_copied_from_the_prompt_example_are_caught(tmp_path):
    store = build_kb(tmp_path / "g.db", TABLE_KB)
    example = 'Example: {"question": "For how long can library books be borrowed?"}'
    cand, facts = _cell_candidate(store, "Can I borrow the address of the Seattle store?")
    got = _checks(store, cand, facts, example)["no_example_words"]
    assert got["passed"] is False and "'borrow'" in got["reason"]
    cand, facts = _cell_candidate(store, "For how long is the Seattle store address valid?")
    assert _checks(store, cand, facts, example)["no_example_words"]["passed"] is True  # KB words


def _new_names_asked(store, want: int) -> list[str]:
    """The new names code hands the model when `want` unanswerable items are proposed."""
    chunks, facts = _table_facts(store)
    asked = []

    def respond(name, v, role):
        asked.append(v["new_name"])
        return {"name": v["new_name"], "question": f"What is the size of the {v['new_name']}?"}

    asyncio.run(propose(_ctx(store, ScriptedLLM(respond)), chunks, facts, want=want))
    return sorted(asked)


def test_invented_names_are_spread_over_series(tmp_path):
    tents = ("| Tent | Seasons | Sleeps |\n|---|---|---|\n| Trailhead 2 | 3 | 2 |\n"
             "| Trailhead 3 | 3 | 3 |\n| Trailhead 5 | 4 | 5 |")
    packs = ("| Pack | Volume | Weight |\n|---|---|---|\n| Ridge 30 | 30 L | 1 kg |\n"
             "| Ridge 40 | 40 L | 1.2 kg |\n| Ridge 50 | 50 L | 1.4 kg |")
    store = build_kb(tmp_path / "g.db", {"gear.md": [("t1", tents, "en"), ("p1", packs, "en")]})
    assert _new_names_asked(store, want=2) == ["Ridge 60", "Trailhead 6"]  # one per series


def test_two_attributes_of_one_table_get_two_different_new_names(tmp_path):
    tents = ("| Tent | Seasons | Sleeps |\n|---|---|---|\n| Trailhead 2 | 3 | 2 |\n"
             "| Trailhead 3 | 3 | 3 |\n| Summit Ridge 2 | 4 | 2 |")
    store = build_kb(tmp_path / "g.db", {"tents.md": [("t1", tents, "en")]})
    assert _new_names_asked(store, want=2) == ["Summit Ridge 3", "Trailhead 4"]


def test_a_yes_no_question_is_answered_yes_or_no_and_adds_information(tmp_path):
    store = build_kb(tmp_path / "g.db", TABLE_KB)
    cand, facts = _cell_candidate(store, "Is the Seattle store at 5410 Ballard Avenue NW?")
    checks = _checks(store, cand, facts)
    assert checks["answer_adds_information"]["passed"] is False  # the value is in the question
    assert checks["answer_fits_question"]["passed"] is False     # and no yes or no
    cand["answer"] = "Yes, the Seattle store is at 5410 Ballard Avenue NW."
    assert _checks(store, cand, facts)["answer_fits_question"]["passed"] is True
    cand["question"], cand["answer"] = "Does the Seattle store have an address?", \
        "The Seattle store has an address."  # a tautology, with no yes or no either
    checks = _checks(store, cand, facts)
    assert checks["answer_adds_information"]["passed"] is False
    assert checks["answer_fits_question"]["passed"] is False


def test_a_value_question_must_name_a_subject_of_its_fact(tmp_path):
    store = build_kb(tmp_path / "g.db", TABLE_KB)
    cand, facts = _cell_candidate(store, "What is the address?")
    fact = dict(facts[0], text="Express costs $18.95 and takes 2 business days.",
                entities=["Express"], cell=None)  # a prose fact: no table cell record
    cand["answer"] = "$18.95"
    assert _checks(store, cand, [fact])["names_subject"]["passed"] is False
    cand["question"] = "What does Express shipping cost?"
    assert _checks(store, cand, [fact])["names_subject"]["passed"] is True
    cand["answer"] = "Express costs $18.95."  # not the value alone: no subject to require
    assert "names_subject" not in _checks(store, cand, [fact])


def test_one_of_two_values_of_one_unit_must_name_its_subject(tmp_path):
    # "5 MB" for Estándar and "200 MB" for Plus: "hasta 5 MB" is not the first value phrase
    # alone, yet it is one of two answers unless the question names the plan
    store = build_kb(tmp_path / "g.db", TABLE_KB)
    cand, facts = _cell_candidate(store, "¿Cuál es el límite de tamaño de archivos que se pueden sincronizar?")
    fact = dict(facts[0], text="El plan Estándar permite sincronizar archivos de hasta 5 MB, mientras "
                "que el plan Plus soporta archivos de hasta 200 MB.", entities=["Estándar", "MB", "Plus"],
                cell=None)
    cand["answer"] = "hasta 5 MB"
    got = _checks(store, cand, [fact])["names_subject"]
    assert got["passed"] is False and "Estándar" in got["reason"]
    cand["question"] = "¿Cuál es el límite de tamaño de archivos del plan Estándar?"
    assert _checks(store, cand, [fact])["names_subject"]["passed"] is True
    # one value of its unit: nothing to tell apart, the first-value rule alone applies
    fact["text"] = "El plan Estándar permite sincronizar archivos de hasta 5 MB."
    cand["question"] = "¿Cuál es el límite de tamaño de archivos que se pueden sincronizar?"
    assert "names_subject" not in _checks(store, cand, [fact])


def _prose_candidate(store, statement, question, answer):
    cand, facts = _cell_candidate(store, question)
    fact = dict(facts[0], text=statement, evidence=statement, entities=[], cell=None)
    cand["answer"] = answer
    return cand, [fact]


@pytest.mark.parametrize("statement,question,answer,ok", [
    # lost the condition: another passage answers "your request" differently
    ("A decision on your flexible working request will be made and communicated to you within "
     "14 calendar days and you will receive paperwork confirming the changes.",
     "How long will it take for your request to be processed?", "within 14 calendar days", False),
    ("A decision on your flexible working request will be made and communicated to you within "
     "14 calendar days and you will receive paperwork confirming the changes.",
     "Within how long is a decision on a flexible working request communicated?",
     "within 14 calendar days", True),
    # lost "the top-level API": the Client form answers it too
    ("Using the top-level API, such as `httpx.get(\"<url>\", trust_env=False)`.",
     "What function or method call can be used to disable environment variables?",
     'httpx.get("<url>", trust_env=False)', False),
    ("Using the top-level API, such as `httpx.get(\"<url>\", trust_env=False)`.",
     "Which top-level API call ignores environment variables?",
     'httpx.get("<url>", trust_env=False)', True),
    # Spanish: the function words do not count as kept context
    ("En el dispositivo móvil, revisa el registro de sincronización para confirmar la recepción "
     "del archivo `appearance.json` actualizado.",
     "¿Cuál es el nombre del archivo que se usa?", "appearance.json", False),
    ("En el dispositivo móvil, revisa el registro de sincronización para confirmar la recepción "
     "del archivo `appearance.json` actualizado.",
     "¿Qué archivo confirma el registro de sincronización del móvil?", "appearance.json", True),
    # the other sentence of the statement does not count against the question
    ("Sync keeps version history. Sync Plus stores up to 10 GB in total across all of your vaults.",
     "How much can Sync Plus store?", "up to 10 GB", None),  # 4 other terms: vaults, total ...
])
def test_a_question_keeps_what_makes_its_answer_the_answer(tmp_path, statement, question, answer, ok):
    store = build_kb(tmp_path / "g.db", TABLE_KB)
    cand, facts = _prose_candidate(store, statement, question, answer)
    got = _checks(store, cand, facts).get("keeps_context")
    if ok is None:
        assert got is None or got["passed"] is True
    else:
        assert got is not None and got["passed"] is ok, got


def test_a_table_cell_is_left_to_names_subject(tmp_path):
    store = build_kb(tmp_path / "g.db", TABLE_KB)
    cand, facts = _cell_candidate(store, "What is the address of the Seattle store?")
    assert "keeps_context" not in _checks(store, cand, facts)


def test_topic_proposals_stop_after_three_attempts(kb_store):
    store = kb_store
    llm = ScriptedLLM(lambda name, v, role: {"questions": ["Is the KB complete?"]})  # same reply
    chunks = list_chunks(store)
    for _ in range(5):
        asyncio.run(propose(_ctx(store, llm), chunks, [], want=1))
    assert [name for name, _, _ in llm.calls] == ["evolve_unanswerable_topics"] * 3


def test_pairs_never_mix_languages():
    from builder.generate.material import annotate, pick_multi_hop

    def fact(fid, chunk, doc, text, lang):
        return {"id": fid, "chunk_id": chunk, "document_id": doc, "text": text, "evidence": text,
                "entities": ["Vancouver"], "dates": [], "language": lang}

    en_a = fact("a", "c1", "stores.md", "Vancouver has a rental desk and a repair shop.", "en")
    en_b = fact("b", "c2", "hours.md", "Vancouver opens at 10 a.m. on Sundays.", "en")
    zh_b = fact("z", "c3", "zh.md", "Vancouver 门店周日 11 点开门。", "zh")
    facts = annotate([en_a, en_b, zh_b], {})
    pairs = {tuple(f["id"] for f in m.facts) for m in pick_multi_hop(facts)}
    assert ("a", "b") in pairs
    assert not any("z" in p for p in pairs)


def test_versions_of_one_document_are_not_ambiguous_or_comparative():
    from builder.generate.material import annotate, pick_ambiguous

    def fact(fid, doc, text, entity):
        return {"id": fid, "chunk_id": doc + "#1", "document_id": doc, "text": text,
                "evidence": text, "entities": [entity], "dates": [], "language": "en",
                "title": "Returns Policy > Store credit"}

    old = fact("o", "returns-2023.md", "Basic members get store credit covering the last 60 days.", "Basic")
    new = fact("n", "returns.md", "Gold members get store credit covering the last 90 days.", "Gold")
    assert pick_ambiguous(annotate([dict(old), dict(new)], {})) == []  # one policy, two dates
    other = dict(new, title="Membership > Store credit")
    assert len(pick_ambiguous(annotate([dict(old), other], {}))) == 1


DESIGNS = "**Designs**: designs and implements medium to large size features"
EVOLVES = "**Evolves**: evolves the architecture to support future requirements"
COORDINATES = "**Coordinates**: coordinates team members providing effective feedback"


@pytest.mark.parametrize("entry,question,ok", [
    (DESIGNS, "What does TPM5 design?", True),
    (DESIGNS, "What are the designs for TPM5?", False),        # the verb read as a noun
    (EVOLVES, "What does EM6 evolve to?", False),              # the entry goes on "the architecture"
    (EVOLVES, "What does EM6 evolve the architecture to?", True),
    (COORDINATES, "What is the description of the Technical Program Manager 5's coordinates?", False),
    (COORDINATES, "Whom does a Technical Program Manager 5 coordinate?", True),
])
def test_a_rubric_verb_label_is_asked_as_a_verb(entry, question, ok):
    from types import SimpleNamespace

    from builder.generate.checks import reads_label_as_verb
    answer = entry.split(": ", 1)[1]
    got = reads_label_as_verb(SimpleNamespace(facts=[{"evidence": entry}], q=question, a=answer))
    assert got[0] is ok, got


@pytest.mark.parametrize("entry,question,ok", [
    ("**Móvil/Tableta**: **Configurar Obsidian Sync**",
     "¿Cómo puedo sincronizar mi bóveda remota en otro dispositivo?", False),
    ("**Móvil/Tableta**: **Configurar Obsidian Sync**",
     "¿Qué se elige en el móvil para sincronizar la bóveda?", True),
    ("**Defines**: defines the right processes for the team", "What does EM6 define?", True),
    ("**325 - Direct Expenses**: A cost that is part of producing work",
     "What is the description of direct expenses?", True),
    ("**Note**: restart the app after the change", "What should you do after the change?", None),
])
def test_a_labelled_entry_is_asked_about_its_label(entry, question, ok):
    from types import SimpleNamespace

    from builder.generate.checks import names_label
    answer = entry.split(": ", 1)[1].strip("*")
    got = names_label(SimpleNamespace(facts=[{"evidence": entry}], q=question, a=answer))
    assert (got if got is None else got[0]) is ok, got


CALLOUT_KB = {"sync.md": [("s1", "> [!note] The Plus plan keeps your notes for 12 months.", "en")]}


def test_a_near_miss_statement_reaches_the_writer_without_its_callout_marker(tmp_path):
    # "[!abstract] Lectura adicional: ..." once came back as "el sitio web que menciona en el
    # abstract": the marker is markup, not words of the statement
    store = build_kb(tmp_path / "g.db", CALLOUT_KB)
    chunks = list_chunks(store)
    facts = [f for c in chunks for f in extract_statements(c)]
    for f in facts:
        f["document_id"] = "sync.md"
    assert any(f["text"].startswith("[!note]") for f in facts)
    llm = ScriptedLLM(lambda name, v, role: {"questions": []})
    asyncio.run(propose(_ctx(store, llm), chunks, facts, want=1))
    shown = [v["statements"] for name, v, _ in llm.calls if name == "evolve_unanswerable_near"]
    assert shown and "12 months" in shown[0] and "[!note]" not in shown[0]
