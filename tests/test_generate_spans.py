"""Code-chosen answers and the material for harder items: worked examples give no answer,
related values paired, asked side by side early and spread over documents, common words not
taken for names, and the rare words an unanswerable swap replaces."""

from __future__ import annotations

import pytest

from builder.generate.answers import Span, find_value_pairs
from builder.generate.compose import Part, near_spelling, topic_words
from builder.generate.knowledge import KbWords
from builder.generate.spans import common_names, plan_spans, spans_of_chunk
from builder.text.values import find_values


def chunk(cid: str, doc: str, text: str) -> dict:
    return {"id": cid, "document_id": doc, "text": text, "language": "en", "seq": 0}


LEAVE = chunk("c1", "leave.md",
              "Employees who become parents are entitled to 26 weeks of maternity leave at full pay. "
              "The partner of a new parent is entitled to 2 weeks of paternity leave at full pay.")
TRAVEL = chunk("c2", "travel.md",
               "Train tickets for journeys longer than 3 hours may be booked in first class by "
               "the employee. Hotel rooms are reimbursed up to £120 per night in any city.")
SHIPPING = chunk("c3", "shipping.md",
                 "Parcels sent to customers in the same country usually arrive within 5 days "
                 "of the order being placed online.")


def spans_of(*chunks: dict) -> list[Span]:
    return [s for c in chunks for s in spans_of_chunk(c, c["document_id"])]


def test_related_values_of_one_document_are_paired_and_unrelated_ones_are_not():
    spans = spans_of(LEAVE, TRAVEL, SHIPPING)
    pairs = {frozenset((p.a.answer, p.b.answer)) for p in find_value_pairs(spans)}
    assert frozenset(("26 weeks", "2 weeks")) in pairs
    # a train journey's hours and a delivery's days: other documents, nothing in common
    assert not any("5 days" in p for p in pairs)
    assert not any("3 hours" in p for p in pairs)


def test_a_pair_is_asked_side_by_side_at_the_head_of_the_plan_only_when_harder_items_are_wanted():
    chunks = [LEAVE, TRAVEL, SHIPPING]
    titles = {c["id"]: c["document_id"] for c in chunks}
    wanted = plan_spans(chunks, titles, seed=3, plan={"single_hop": 5, "comparative": 1})
    head = [s.answer for s in wanted[:2]]
    assert sorted(head) == ["2 weeks", "26 weeks"]
    plain = plan_spans(chunks, titles, seed=3, plan={"single_hop": 6})
    assert sorted(s.id for s in plain) == sorted(s.id for s in wanted)  # same spans, other order
    # without harder items wanted, documents are taken in turn: the pair is not asked together
    assert plain[0].document_id != plain[1].document_id


def test_a_statement_holding_one_value_is_asked_before_one_holding_several():
    fees = chunk("c4", "fees.md",
                 "The joining fee is $30, the monthly fee is $12 and the late fee is $5 for members. "
                 "Guests pay a day pass of $8 at the front desk of any club.")
    order = [s.answer for s in plan_spans([fees], {"c4": "Fees"}, seed=0)]
    assert order[0] == "$8"
    assert set(order[1:]) == {"$30", "$12", "$5"}


def test_a_bounded_value_is_asked_before_a_bare_one_whatever_the_seed():
    rooms = chunk("c5", "rooms.md",
                  "The meeting room on the second floor can be booked for 45 minutes by any team. "
                  "A desk in the quiet area can be booked for up to 3 hours on any working day.")
    for seed in range(6):
        order = [s.answer for s in plan_spans([rooms], {"c5": "Rooms"}, seed=seed)]
        assert order[:2] == ["up to 3 hours", "45 minutes"], (seed, order)


def test_a_capitalised_common_word_is_no_name_but_a_real_name_is():
    text = ("Every expense claim is sent to your Manager before the end of the month. "
            "A manager approves claims within a week. "
            "Receipts are uploaded to Expensify within 30 days of the purchase.")
    c = chunk("c9", "expenses.md", text)
    spans = spans_of(c)
    names = {s.answer for s in spans if s.kind == "name"}
    assert {"Manager", "Expensify"} <= names  # both look like names to the span finder
    dropped = common_names(spans, 40, {"c9": text})
    assert "manager" in dropped  # the text also writes it in lower case: a common word
    assert "expensify" not in dropped


def test_topic_words_are_what_the_question_is_about_and_have_siblings():
    statement = "Employees can take up to 10 days of paid jury service leave each year."
    own = statement + " Jury service leave is paid; tell us when the jury summons arrives."
    span = Span(id="s", fact={"id": "f", "text": statement}, chunk_id="c", document_id="d",
                language="en", title="", answer="10 days", kind="duration",
                value=find_values("10 days")[0])
    part = Part({"question": "How many days of paid jury service leave can employees take "
                 "each year from home?", "answer": "10 days", "language": "en"}, span, span.value)
    others = [{"text": t} for t in (
        "Employees get paid maternity service leave.", "Employees get paid military service "
        "leave.", "Employees get paid civic service leave.", "Employees get paid holiday.",
        "Employees work from home.", "Employees work from home on Fridays.")] * 2
    words = KbWords.of([{"text": own}] + others)
    topics = topic_words(part, own, words)
    assert topics[0] == "jury"  # "maternity", "military", "civic" service: siblings exist
    assert "employees" not in [w.casefold() for w in topics]  # on every page: not a topic
    assert "days" not in topics  # the answer's own word is never swapped
    assert not words.fills_a_slot("home", part.question)  # "from home": no sibling in the KB


def test_a_typo_is_no_sibling_but_a_one_letter_sibling_is():
    assert near_spelling("adooption", "adoption")
    assert near_spelling("adoptoin", "adoption")
    assert not near_spelling("paternity", "maternity")
    assert not near_spelling("military", "jury")


def test_in_german_a_capital_alone_makes_no_name_but_another_mark_does():
    # German capitalises every noun: "Zielsetzung" or "Quellen" is no name; a capital inside
    # a word, a sign or bold is a name's mark, and so are several capitalised words in a row
    text = ("Die Datei mit der Zielsetzung des Projekts liegt in den Quellen und wird mit "
            "H2O geöffnet, über die Kunden-ID oder im Menü **Werkzeugleiste**.")
    de = {"id": "g", "document_id": "d", "language": "de", "seq": 0, "text": text}
    names = {s.answer for s in spans_of_chunk(de, "d") if s.kind == "name"}
    assert not names & {"Datei", "Zielsetzung", "Projekts", "Quellen"}
    assert {"H2O", "Kunden-ID"} <= names and any("Werkzeugleiste" in n for n in names)
    two = dict(de, text="Die Fahrkarten werden von der Firma Deutsche Bahn zwischen den Städten "
                        "einer Region verkauft, auch unterwegs.")
    assert "Deutsche Bahn" in " ".join(s.answer for s in spans_of_chunk(two, "d"))
    # the same words in an English text: a capital mid-sentence is a name's mark there
    en = dict(de, language="en", text="The file is kept in the Quellen folder, then opened "
                                      "with the Zielsetzung tool that every team uses daily.")
    assert {"Quellen", "Zielsetzung"} <= {s.answer for s in spans_of_chunk(en, "d")}


@pytest.mark.parametrize("lang, text, listed", [
    ("en", "The most important exception classes are `RequestError` and `HTTPStatusError` in "
           "every version of the client library.", {"RequestError", "HTTPStatusError"}),
    ("de", "Einige Inline-HTML-Tags wie `<span>` oder `<a>` haben eingeschränkte Funktionalität "
           "in der Vorschau der Notizen.", {"<span>", "<a>"}),
    ("en", "Set the timeout with `connect`, `read`, `write` for each request made by the pool.",
     {"connect", "read", "write"}),
])
def test_a_code_identifier_listed_with_another_is_no_answer(lang, text, listed):
    c = {"id": "c", "document_id": "d", "language": lang, "seq": 0, "text": text}
    assert not listed & {s.answer for s in spans_of_chunk(c, "d")}


def test_a_code_identifier_alone_or_apart_from_another_is_an_answer():
    text = ("Use the `trust_env` option to ignore proxy variables; the default pool size comes "
            "from the `limits` argument of every client.")
    c = {"id": "c", "document_id": "d", "language": "en", "seq": 0, "text": text}
    assert {"trust_env", "limits"} <= {s.answer for s in spans_of_chunk(c, "d")}


def test_a_value_inside_tex_math_is_no_answer_but_money_between_dollars_is():
    text = (r"The formula $x^{2} = 4$ is shown in the note, and the course lasts 3 weeks in "
            "total for every student.")
    c = {"id": "c", "document_id": "d", "language": "en", "seq": 0, "text": text}
    assert [s.answer for s in spans_of_chunk(c, "d")] == ["3 weeks"]  # not "4$"
    money = dict(c, text="Parcels cost $5 and express parcels cost $10 for every order placed "
                         "in the shop.")
    assert {"$5", "$10"} <= {s.answer for s in spans_of_chunk(money, "d")}


def test_a_table_rendered_from_the_code_block_above_it_gives_no_answer():
    text = ("You can make tables with pipes and hyphens, for example:\n\n```md\n"
            "| First name | Last name |\n| --- | --- |\n| Max | Planck |\n```\n\n"
            "| First name | Last name |\n| --- | --- |\n| Max | Planck |\n\n"
            "| Plan | Price |\n| --- | --- |\n| Basic | $10 |\n")
    c = {"id": "c", "document_id": "d", "language": "en", "seq": 0, "text": text}
    answers = {s.answer for s in spans_of_chunk(c, "d") if s.kind == "cell"}
    assert "Planck" not in answers and "$10" in answers


def test_a_value_of_a_lists_lead_in_is_no_answer_of_its_items_but_theirs_are():
    # each item's statement opens with the lead-in, its evidence is the item alone: a span in
    # the lead-in would be asked once per item, with evidence that does not hold its answer
    text = ("Parental bereavement leave is a statutory entitlement of 2 weeks following:\n\n"
            "- the death of a child under the age of 18, paid for up to 39 weeks\n"
            "- a stillbirth after 24 weeks of pregnancy in any hospital\n")
    spans = spans_of_chunk(chunk("c9", "leave.md", text), "Leave")
    assert "2 weeks" not in {s.answer for s in spans}
    assert {"up to 39 weeks", "24 weeks"} <= {s.answer for s in spans}
    for s in spans:
        assert s.answer in s.fact["evidence"]
    assert all(s.fact["text"].startswith("Parental bereavement leave") for s in spans)


def test_a_worked_example_gives_no_answer_in_any_language():
    rule = "Employees are reimbursed up to £120 per night for hotel rooms in any city."
    example = ("For example, an employee who stays three nights in Leeds at £95 per night "
               "claims £285 in total.")
    answers = [s.answer for s in spans_of(chunk("c", "d", f"{rule} {example}"))]
    assert "up to £120" in answers and not any("£95" in a or "£285" in a for a in answers)
    french = {"id": "f", "document_id": "d", "language": "fr", "seq": 0,
              "text": "Par exemple, un agent qui travaille 3 jours par semaine reçoit 60 % de "
                      "la prime annuelle versée en décembre."}
    assert spans_of_chunk(french, "d") == []


def test_pairs_for_harder_items_are_spread_over_documents():
    from builder.generate.spans import _bundles
    table = chunk("t", "plans.md", "| Plan | Price | Storage |\n|---|---|---|\n"
                  + "\n".join(f"| P{i} | ${10 * i} | {i} GB |" for i in range(1, 9)) + "\n")
    spans = spans_of(table, LEAVE)
    from builder.generate.answers import find_pairs
    bundles = _bundles(spans, find_pairs(spans), {"single_hop": 4, "comparative": 1})
    docs = [a.document_id for (a, _), _kind in bundles]
    assert "leave.md" in docs[:2], docs   # the leave pair is not queued behind every table pair


def test_a_count_states_what_it_counts_unless_the_question_names_it():
    (span,) = [s for s in spans_of(chunk("c", "d", "Each attachment may hold at most 200 Mo "
                                               "of data in the shared folder of a team."))
               if s.kind == "count"]
    assert span.answer == "at most 200 Mo"
    assert span.answer_for("What is the most data one attachment may hold?") == "at most 200 Mo"
    assert span.answer_for("How many Mo of data may one attachment hold?") == "at most 200"


@pytest.mark.parametrize("lang,text,answer", [
    ("en", "Staff can carry over up to 5 days of unused holiday to the next year.", "up to 5 days"),
    ("en", "Employees must have worked for the company for at least 26 weeks to get enhanced pay.",
     "at least 26 weeks"),
    ("en", "Staff can carry over 5 days of unused holiday to the next year.", "5 days"),
    ("fr", "Vous pouvez bénéficier de 25 jours maximum pour la naissance d'un enfant.",
     "25 jours maximum"),
    ("es", "El equipo revisará tu solicitud de descuento dentro de 3 días hábiles.",
     "dentro de 3 días hábiles"),
    ("ja", "申請は5日以内に人事部へ提出してください。", "5日以内"),
])
def test_a_value_span_keeps_the_words_that_bound_it(lang, text, answer):
    """A ceiling asked without its bound reads as an exact value ("How much does X cost?" ->
    "£150" where the text allows up to £150): the span keeps the bound, in any language."""
    c = {**chunk("c", "d", text), "language": lang}
    assert answer in [s.answer for s in spans_of_chunk(c, "d")]


def test_a_row_or_a_pair_label_that_names_nothing_gives_no_label():
    from builder.generate.answers import find_pairs
    table = chunk("t", "plans.md", "| Plan | Storage |\n|---|---|\n| 1. | 10 GB |\n| Gold | 50 GB |\n")
    answers = {s.answer: s.mention for s in spans_of(table)}
    assert answers == {"50 GB": ["Gold", "Storage"]}  # the row "1." cannot be named by a question
    # two statements that differ by a function word only: no label to ask one of them by
    text = chunk("p", "leave.md", "Staff may take up to 5 days of leave to care for a child. "
                                  "Staff may take up to 10 days of leave unless care for a child.")
    assert [(p.a.label, p.b.label) for p in find_pairs(spans_of(text))] == []


def test_a_cell_question_must_name_its_row_and_its_column():
    from builder.generate.form import mention_problem
    table = chunk("t", "tarifs.md", "| Profil | Junior (expérience < 2 ans) | Senior |\n"
                  "|---|---|---|\n| Designer | 370 | 550 |\n| Développeur | 450 | 650 |\n")
    mentions = {s.answer: s.mention for s in spans_of(table)}
    # the gloss in brackets is no name a question repeats
    assert mentions["370"] == ["Designer", "Junior"]
    assert mentions["650"] == ["Développeur", "Senior"]
    # the row alone lets the question call the value anything: the column says what it is
    assert mention_problem("Quel est le tarif d'un designer junior ?", mentions["370"]) is None
    assert mention_problem("Quel est le salaire d'un designer ?", mentions["370"]) \
        == "does not name 'Junior'"
    # a header that reads as a sentence, or names nothing, is not asked for
    long = chunk("l", "plans.md", "| Plan | The amount each member pays every month |\n|---|---|\n"
                 "| Gold | $50 |\n| Silver | $20 |\n")
    assert {s.answer: s.mention for s in spans_of(long)} == {"$50": ["Gold"], "$20": ["Silver"]}


def test_a_range_is_one_answer_in_any_language_and_two_values_stay_two():
    def answers(text, language):
        return [(s.answer, s.value is None) for s in spans_of_chunk(
            {"id": "c", "document_id": "d", "text": text, "language": language, "seq": 0}, "Doc")
            if s.kind != "name"]
    assert answers("Les contractuels sont recrutés sur des contrats courts de 4 à 10 mois "
                   "pour relever des défis numériques.", "fr") == [("4 à 10 mois", True)]
    assert answers("Der Versand ins Ausland dauert zwischen 3 und 5 Tagen für jedes Paket "
                   "aus dem Lager.", "de") == [("3 und 5 Tagen", True)]
    # two values, each with its own unit: two answers, each comparable
    assert answers("Sick staff get 5 days of paid leave, and 10 days once they have worked "
                   "here a full year.", "en") == [("5 days", False), ("10 days", False)]


def test_a_difference_is_computed_only_under_one_bound_and_states_no_bound():
    from builder.generate.compose import difference_answer

    def p(answer: str) -> Part:
        (value,) = find_values(answer, "en")
        return Part({"id": answer, "answer": answer, "language": "en"}, None, value)

    # two ceilings: the difference of the ceilings, not itself a ceiling
    assert difference_answer(p("up to £150"), p("up to £110")) == "£40"
    assert difference_answer(p("25 days"), p("5 days")) == "20 days"
    # a ceiling and an exact value, a minimum and a ceiling: no fact to compute
    assert difference_answer(p("25 days"), p("up to 5 days")) is None
    assert difference_answer(p("at least 26 weeks"), p("up to 18 weeks")) is None


@pytest.mark.parametrize(("lang", "answer", "direction"), [
    ("en", "up to 18 weeks", "ceiling"), ("en", "within 30 days", "ceiling"),
    ("en", "at least 26 weeks", "floor"), ("en", "5 days or more", "floor"),
    ("en", "about 30 days", None), ("en", "30 days", None),
    ("fr", "25 jours maximum", "ceiling"), ("fr", "au moins 3 mois", "floor"),
    ("de", "bis zu 6 Wochen", "ceiling"), ("de", "mindestens 2 Jahre", "floor"),
    ("es", "hasta 10 días", "ceiling"), ("ja", "5日以内", "ceiling"), ("zh", "至少3天", "floor")])
def test_a_bound_is_read_as_a_ceiling_or_a_floor_in_every_language(lang, answer, direction):
    from builder.text.values import bound_direction
    assert bound_direction(answer, lang) == direction


def test_a_threshold_amount_lies_past_the_limit_and_is_written_like_it():
    from builder.generate.compose import threshold_amount

    def p(answer: str, lang: str = "en") -> Part:
        value = max(find_values(answer, lang), key=lambda v: len(v.text))
        return Part({"id": answer, "answer": answer, "language": lang}, None, value)

    assert threshold_amount(p("up to 18 weeks")) == "36 weeks"      # twice a ceiling
    assert threshold_amount(p("up to £1,200 per year")) == "£2,400 per year"
    assert threshold_amount(p("at least 26 weeks")) == "13 weeks"    # half a floor
    assert threshold_amount(p("no more than 80%")) == "90%"          # a share stays under 100%
    assert threshold_amount(p("25 jours maximum", "fr")) == "50 jours"
    assert threshold_amount(p("mindestens 3 Monate", "de")) == "1,5 Monate"
    # nothing to ask past: a bare or approximate value, a floor of two ("1 days"), a share of
    # 100%, a number in words (only digits are rewritten: it would ask about the limit itself)
    for answer in ("25 days", "about 30 days", "at least 2 days", "up to 100%", "up to two weeks"):
        assert threshold_amount(p(answer)) is None, answer
    # nothing past a share of 99.5% but "100%", and "up to 1 week" doubled would read "2 week"
    for answer in ("up to 99.5%", "up to 1 week"):
        assert threshold_amount(p(answer)) is None, answer
    assert threshold_amount(p("up to 99.5%"), within=True) == "49%"  # half of it still reads
    # within the limit: half a ceiling, twice a floor, halfway to 100% for a share's floor
    assert threshold_amount(p("up to 18 weeks"), within=True) == "9 weeks"
    assert threshold_amount(p("within 30 days"), within=True) == "15 days"
    assert threshold_amount(p("at least 26 weeks"), within=True) == "52 weeks"
    assert threshold_amount(p("au moins 60 %", "fr"), within=True) == "80 %"
    assert threshold_amount(p("no more than 80%"), within=True) == "40%"
    # half of a ceiling under 4 would read "1 weeks"; a share's floor of 100% has no inside
    for answer in ("up to 3 weeks", "up to 2 weeks", "at least 100%"):
        assert threshold_amount(p(answer), within=True) is None, answer


def test_about_half_of_the_thresholds_ask_within_the_limit_and_answer_yes():
    """A set whose every threshold answers no is passed by a model that always says no: the
    part's id picks past or within, and a limit with no amount within it is asked past it."""
    import asyncio
    from types import SimpleNamespace

    from builder.generate.compose import threshold, threshold_units
    from builder.llm.prompts import load_sentences

    def p(answer: str, id_: str) -> Part:
        value = max(find_values(answer, "en"), key=lambda v: len(v.text))
        cand = {"id": id_, "question": "How many weeks of leave can staff take?", "answer": answer,
                "language": "en", "fact_ids": ["f"], "chunk_ids": ["c"], "evidence": [],
                "seed_fact_id": "f", "document_id": "d", "prompts": {}}
        return Part(cand, None, value)

    units = [threshold_units(p("up to 18 weeks", f"item-{i}")) for i in range(12)]
    within = [u for u in units if len(u) == 3]
    assert 3 <= len(within) <= 9 and all(u[1] == "9 weeks" for u in within)
    assert all(u[1] == "36 weeks" for u in units if len(u) == 2)
    # no amount within "up to 2 weeks" can be written: every such part is asked past it
    assert all(len(threshold_units(p("up to 2 weeks", f"item-{i}"))) == 2 for i in range(12))
    ctx = SimpleNamespace(sentences={"threshold_ceiling.md": load_sentences("threshold_ceiling.md")},
                          model=lambda: "code")
    row = asyncio.run(threshold(ctx, *within[0]))
    assert row["answer"] == "Yes: up to 18 weeks"
    assert row["question"].endswith("take? Is 9 weeks within the limit?")



def test_a_total_and_a_yearly_value_are_not_paired_nor_compared():
    """"18 weeks" in all and "4 weeks a year" are no two sizes of one thing: no planned pair, no
    comparison, no difference; two yearly values are, and their difference keeps the period."""
    from builder.generate.compose import difference_answer, value_pairs
    text = chunk("u", "unpaid.md",
                 "Parents may take up to 18 weeks of unpaid parental leave for each child. "
                 "Parents may take up to 4 weeks a year of unpaid parental leave for each child. "
                 "Parents may take up to 2 weeks a year of unpaid carer leave for each relative.")
    spans = [s for s in spans_of(text) if s.value is not None]
    assert sorted(s.answer for s in spans) == ["up to 18 weeks", "up to 2 weeks a year",
                                               "up to 4 weeks a year"]
    assert [{p.a.answer, p.b.answer} for p in find_value_pairs(spans)] == [
        {"up to 4 weeks a year", "up to 2 weeks a year"}]

    by_answer = {s.answer: s for s in spans}

    def part(answer: str, question: str, fact: str) -> Part:
        span = by_answer[answer]
        return Part({"id": answer, "answer": answer, "language": "en", "question": question,
                     "fact_ids": [fact]}, span, span.value)
    total = part("up to 18 weeks", "How long is unpaid parental leave in total?", "f1")
    yearly = part("up to 4 weeks a year", "How long is unpaid parental leave each year?", "f2")
    carer = part("up to 2 weeks a year", "How long is unpaid carer leave each year?", "f3")
    # composed only from pairs planned from the spans: alike questions alone pair nothing
    assert value_pairs([total, yearly], spans) == []
    assert [{p.answer for p in pr} for pr in value_pairs([total, yearly, carer], spans)] == [
        {yearly.answer, carer.answer}]
    # alike questions from another document, no pair planned: not composed (before
    # 2026-12-05 they were, and on the development runs none of those passed)
    study_text = chunk("s", "study.md", "Staff may take up to 6 weeks a year of unpaid study leave.")
    (study_span,) = [s for s in spans_of(study_text) if s.value is not None]
    study = Part({"id": "s", "answer": study_span.answer, "language": "en",
                  "question": "How long is unpaid study leave each year?", "fact_ids": ["f4"]},
                 study_span, study_span.value)
    assert value_pairs([yearly, study], spans + [study_span]) == []
    assert difference_answer(yearly, carer) == "2 weeks a year"
    assert difference_answer(total, yearly) is None


def test_two_numbers_of_one_table_column_are_compared_as_planned():
    """The bundles ask two cells of one column side by side (answers.Pair.comparable); composing
    must then pair them, or those calls were spent for nothing. Two bare numbers of one column
    and different rows compare; a bare number and a count of days do not."""
    from builder.generate.answers import find_pairs
    from builder.generate.compose import difference_answer, value_pairs
    table = chunk("t", "tarifs.md", "| Profil | Junior | Senior |\n|---|---|---|\n"
                  "| Designer | 370 | 550 |\n| Développeur | 450 | 650 |\n")
    spans = spans_of(table)
    planned = [p for p in find_pairs(spans) if p.comparable]
    assert planned, "the column's cells are planned as a pair"
    parts = [Part({"id": s.id, "answer": s.answer, "language": "en", "fact_ids": [s.fact["id"]],
                   "question": f"What is the {s.mention[1]} rate for a {s.mention[0]}?"},
                  s, s.value) for s in spans]
    pairs = value_pairs(parts, spans)
    assert {(a.answer, b.answer) for a, b in pairs} >= {(p.a.answer, p.b.answer) for p in planned}
    a, b = pairs[0]
    assert difference_answer(a, b) == str(int(abs(a.value.magnitude - b.value.magnitude)))
    days = Part({"id": "d", "answer": "30 days", "language": "en", "fact_ids": ["f"],
                 "question": "What is the Junior rate for a Designer in days?"},
                None, find_values("30 days", "en")[0])
    assert all(days not in pr for pr in value_pairs(parts + [days], spans))


def test_an_ambiguous_item_over_a_table_column_lists_every_row_not_just_its_two_parts():
    from builder.generate.compose import Part, readings

    rates = chunk("c5", "rates.md", "| Profile | Junior | Senior |\n| --- | --- | --- |\n"
                  "| Developer | 450 | 650 |\n| Designer | 370 | 550 |\n| Coach | 550 | 800 |\n")
    spans = spans_of(rates)
    junior = [s for s in spans if s.fact["cell"]["attribute"] == "Junior"]
    assert [s.label for s in junior] == ["Developer", "Designer", "Coach"]

    def part(s):
        return Part({"id": s.id, "question": f"What is the Junior rate of a {s.label}?",
                     "answer": s.answer}, s, None)
    dev, coach = part(junior[0]), part(junior[2])
    assert readings(dev, coach, spans) == [("Developer", "450"), ("Designer", "370"),
                                           ("Coach", "550")]
    # two statements that differ by a label: the two parts are the readings
    leave = spans_of(LEAVE)
    a, b = (Part({"id": s.id, "question": "?", "answer": s.answer}, s, None) for s in leave[:2])
    a.span.label, b.span.label = "maternity", "paternity"
    assert readings(a, b, spans + leave) == [("maternity", a.answer), ("paternity", b.answer)]
