"""Code-only fact extraction (builder.generate.statements): spans, splitting, tables, entities."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.generate.candidate import stable_id
from builder.generate.statements import (
    EXTRACTOR, VERSION, extract_statements, extract_statements_counted,
)
from builder.generate.terms import key_terms
from builder.text.values import stated_dates
from builder.ingest.pipeline import ingest_paths
from builder.store.documents import list_chunks
from builder.store.db import Store

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def chunk(text: str, cid: str = "c1", language: str | None = "en") -> dict:
    return {"id": cid, "document_id": "doc.md", "text": text, "title": "Doc",
            "language": language, "heading_path": "[]"}


def texts(text: str, **kw) -> list[str]:
    return [r["text"] for r in extract_statements(chunk(text, **kw))]


@pytest.fixture(scope="module")
def sample_chunks(tmp_path_factory) -> list[dict]:
    store = Store(str(tmp_path_factory.mktemp("kb") / "golden.db"))
    ingest_paths(store, [str(SAMPLES)])
    chunks = list_chunks(store)
    assert len(chunks) > 100
    return chunks


def test_every_sample_statement_is_an_exact_grounded_span(sample_chunks):
    keys = {"id", "chunk_id", "seq", "text", "evidence", "evidence_start", "evidence_end",
            "entities", "dates", "language", "prompt_name", "prompt_version", "llm_call_id", "cell"}
    total = tables = 0
    for c in sample_chunks:
        rows = extract_statements(c)
        chunk_terms = key_terms(c["text"])
        assert [r["seq"] for r in rows] == list(range(len(rows)))
        for r in rows:
            assert set(r) == keys
            assert c["text"][r["evidence_start"]:r["evidence_end"]] == r["evidence"], r
            assert r["evidence"] == r["evidence"].strip() and r["text"] == " ".join(r["text"].split())
            assert r["dates"] == stated_dates(r["evidence"], r["language"])
            assert len(r["entities"]) <= 4
            for name in r["entities"]:
                assert key_terms(name) and key_terms(name) <= chunk_terms, (name, c["id"])
            assert r["chunk_id"] == c["id"] and r["llm_call_id"] is None
            assert (r["prompt_name"], r["prompt_version"]) == (EXTRACTOR, VERSION)
            assert r["language"] == c["language"]
            assert "**" not in r["text"] and "`" not in r["text"]
            assert not r["evidence"].startswith(("#", "- ", "* ", "> ", "```"))
            tables += " — " in r["text"]
        total += len(rows)
    assert total > 500 and tables > 150


def test_sample_extraction_is_deterministic(sample_chunks):
    for c in sample_chunks[:20]:
        first = extract_statements(c)
        assert extract_statements(dict(c)) == first
        for r in first:
            assert r["id"] == stable_id(c["id"], EXTRACTOR, VERSION, r["seq"], r["text"])
    ids = [r["id"] for c in sample_chunks for r in extract_statements(c)]
    assert len(ids) == len(set(ids))


def test_abbreviations_decimals_versions_and_domains_do_not_split_sentences():
    text = ("Phone support opens at 7:00 a.m. Pacific on weekdays and closes at 7 p.m. Mountain "
            "on Fridays. Bring ID, e.g. Passport or licence, to the counter. Mr. Smith runs the "
            "U.S. stores for the company. Item No. 5 costs $6.95 per unit, approx. 1.5 kg in "
            "total. Version v2.1 of the app is required. Write to support@northwind.example. Visit "
            "northwind.example. Our stores open at 9 a.m. daily. The counters close at 4:00 p.m. "
            "On holidays all stores close early.")
    assert texts(text) == [
        "Phone support opens at 7:00 a.m. Pacific on weekdays and closes at 7 p.m. Mountain on "
        "Fridays.",
        "Bring ID, e.g. Passport or licence, to the counter.",
        "Mr. Smith runs the U.S. stores for the company.",
        "Item No. 5 costs $6.95 per unit, approx. 1.5 kg in total.",
        "Version v2.1 of the app is required.",
        "Our stores open at 9 a.m. daily.",
        "The counters close at 4:00 p.m.",  # "p.m." ends a sentence when "On ..." follows
        "On holidays all stores close early.",
    ]
    rows, dropped = extract_statements_counted(chunk(text))
    assert dropped == 2  # "Write to ..." and "Visit northwind.example." are under 4 words


def test_semicolons_split_only_into_parts_that_stand_alone():
    assert texts("The Denver store is our newest; it opened on September 14, 2024.") == [
        "The Denver store is our newest", "it opened on September 14, 2024."]
    assert texts("Tents and sleeping bags may be returned without cleaning; we clean them.") == [
        "Tents and sleeping bags may be returned without cleaning; we clean them."]
    rows = extract_statements(chunk("The Denver store is our newest; it opened on September 14, 2024."))
    assert rows[1]["dates"] == ["2024-09-14"]
    assert rows[0]["evidence"] == "The Denver store is our newest"  # no trailing ";"


def test_list_items_and_blockquotes_exclude_their_markers():
    text = ("Rules for rentals:\n\n"
            "- The person renting must be 18 or older and show photo ID.\n"
            "- We place a hold on a credit card for the replacement value: $200 per tent\n"
            "  and $100 for every other item.\n"
            "* Late returns are charged a **late fee of $10 per item per day**.\n"
            "1. the **Northwind Guarantee**, our standard one-year warranty on all gear;\n"
            "2) Returned items reverse the Trail Dollars earned. If those were spent, the value "
            "is deducted from the refund.\n\n"
            "> Gift cards never expire and carry no fees.\n"
            "> Lost cards can be replaced with the receipt.\n")
    rows, dropped = extract_statements_counted(chunk(text))
    lead = "Rules for rentals: "  # the list's lead-in opens each item's text, not its evidence
    assert [r["text"] for r in rows] == [
        lead + "The person renting must be 18 or older and show photo ID.",
        lead + "We place a hold on a credit card for the replacement value: $200 per tent and "
        "$100 for every other item.",
        lead + "Late returns are charged a late fee of $10 per item per day.",
        lead + "the Northwind Guarantee, our standard one-year warranty on all gear",
        lead + "Returned items reverse the Trail Dollars earned.",
        lead + "If those were spent, the value is deducted from the refund.",
        "Gift cards never expire and carry no fees.",
        "Lost cards can be replaced with the receipt.",
    ]
    assert not any(r["evidence"].startswith("Rules") for r in rows)
    assert dropped == 1  # the lead-in "Rules for rentals:"
    assert rows[1]["evidence"] == ("We place a hold on a credit card for the replacement value: "
                                   "$200 per tent\n  and $100 for every other item.")
    assert rows[2]["evidence"] == "Late returns are charged a **late fee of $10 per item per day**."
    assert rows[3]["entities"] == ["Northwind Guarantee"]
    assert rows[6]["evidence"] == "Gift cards never expire and carry no fees."


def test_transposed_table_has_column_entities(sample_chunks):
    table = next(c for c in sample_chunks if "| Benefit | Basic | Gold |" in c["text"])
    rows = extract_statements(table)
    fee = next(r for r in rows if r["text"] == "Gold — Annual fee: $60 (US) / CA$75 (Canada)")
    assert fee["evidence"] == "$60 (US) / CA$75 (Canada)"  # the cell, not the whole row
    assert fee["entities"] == ["Gold"]
    assert "Basic — Annual fee: Free" in [r["text"] for r in rows]
    # the "—" cell of the early-access row gives no Basic fact
    early = [r for r in rows if "Early access" in r["text"]]
    assert [r["entities"] for r in early] == [["Gold"]]


@pytest.mark.parametrize("header", ["Avantage", "Vorteile", "Características", "功能"])
def test_a_table_headed_by_a_generic_word_of_any_language_is_transposed(header):
    rows = extract_statements(chunk(
        f"| {header} | Basic | Gold |\n|---|---|---|\n| Frais annuels | Gratuit | 60 € |\n"))
    assert {r["text"] for r in rows} == {"Basic — Frais annuels: Gratuit",
                                         "Gold — Frais annuels: 60 €"}


def test_normal_table_has_row_entities_and_skips_separator_and_empty_cells():
    text = ("| Store | Address | Fitting studio | Repair shop |\n"
            "|---|---|---|---|\n"
            "| **Boise** (Downtown) | 820 W Idaho Street | No | n/a |\n"
            "| Seattle | 5410 Ballard Avenue NW | — | Yes |\n")
    rows = extract_statements(chunk(text))
    assert [r["text"] for r in rows] == [
        "Boise (Downtown) — Address: 820 W Idaho Street",
        "Boise (Downtown) — Fitting studio: No",
        "Seattle — Address: 5410 Ballard Avenue NW",
        "Seattle — Repair shop: Yes",
    ]
    assert rows[1]["evidence"] == "No"
    assert text[rows[1]["evidence_start"]:rows[1]["evidence_end"]] == "No"
    assert rows[1]["entities"] == ["Boise (Downtown)"]
    assert rows[3]["evidence_end"] == len(text) - 3  # the cell "Yes", before " |\n"


def test_headings_code_rules_and_link_only_lines_are_skipped():
    text = ("# Shipping Guide For Customers\n\n"
            "Setext Heading About Parcels\n"
            "----------------------------\n\n"
            "```json\n{\"status\": \"shipped\", \"note\": \"Orders ship from Portland daily.\"}\n```\n\n"
            "---\n\n"
            "[Read the full shipping policy here](https://northwind.example/shipping)\n\n"
            "- <https://northwind.example/ca>\n\n"
            "Orders ship from the Portland warehouse every business day.\n")
    rows, dropped = extract_statements_counted(chunk(text))
    assert [r["text"] for r in rows] == ["Orders ship from the Portland warehouse every business day."]
    assert dropped == 2  # the two link-only lines
    assert rows[0]["entities"] == ["Portland"]


def test_chinese_splits_after_cjk_punctuation():
    text = ("我们只向美国和加拿大的地址发货，包括美国全部 50 个州。寄往邮政信箱（PO Box）的订单只能选择"
            "标准配送！快递和次日达订单如在下午 1 点前下单，当天发货；标准配送订单在 1 至 2 个工作日内发货。")
    rows = extract_statements(chunk(text, language=None))
    assert [r["text"] for r in rows] == [
        "我们只向美国和加拿大的地址发货，包括美国全部 50 个州。",
        "寄往邮政信箱（PO Box）的订单只能选择标准配送！",
        "快递和次日达订单如在下午 1 点前下单，当天发货",
        "标准配送订单在 1 至 2 个工作日内发货。",
    ]
    assert {r["language"] for r in rows} == {"zh"}
    assert rows[1]["entities"] == ["PO Box"]


def test_entities_skip_sentence_start_words_and_keep_names_and_bold():
    text = ("Trail Club has two tiers: **Basic**, which is free, and **Gold**, which costs $60 in "
            "the United States. Most Trail Club members in Denver choose Gold. Refunds go back to "
            "the original card within 5 days. The Denver store opened on **September 14, 2024**.")
    rows = extract_statements(chunk(text))
    assert rows[0]["entities"] == ["Trail Club", "Basic", "Gold", "United States"]
    assert rows[1]["entities"] == ["Trail Club", "Denver", "Gold"]
    assert rows[2]["entities"] == []  # "Refunds" is only capitalised because it starts a sentence
    assert rows[3]["entities"] == ["Denver"]  # a bold date is not an entity


def test_entities_skip_function_words_of_every_language_but_not_english_homographs():
    text = ("Wenn Sie Ihre Angaben ändern, berechnet Concular die Bilanz neu. Si tu pars, "
            "préviens Tchap avant la fin. Die Software speichert das Projekt automatisch.")
    rows = extract_statements(chunk(text))
    assert rows[0]["entities"] == ["Angaben", "Concular", "Bilanz"]  # not "Wenn Sie Ihre Angaben"
    assert rows[1]["entities"] == ["Tchap"]  # not "Si"
    # German "die" is an English word too: not dropped where the language is unknown
    assert rows[2]["entities"][0] == "Die Software"


def test_entities_keep_a_capitalised_word_mid_sentence_and_drop_calendar_words():
    city = extract_statements(chunk("Our new offices in New York open in March."))
    assert city[0]["entities"] == ["New York"]  # mid-sentence: written as a name
    text = ("New Hires Onboarding takes two full days for each employee. On Monday the Paris "
            "team moves to the Lyon office. Le lundi, Tchap envoie un rappel à chaque agent. "
            "Patients of the Mayo Clinic in Rochester pay nothing.")
    rows = extract_statements(chunk(text))
    assert rows[0]["entities"] == ["Hires Onboarding"]  # "New" opens the sentence: an opener
    assert rows[1]["entities"] == ["Paris", "Lyon"]  # not "Monday" (a calendar word)
    assert rows[2]["entities"] == ["Tchap"]  # not "Le lundi": French calendar words too
    # calendar words of the statement's language and English only: "mayo" is May in Spanish
    assert rows[3]["entities"] == ["Mayo Clinic", "Rochester"]


def test_entities_drop_an_opener_where_a_clause_opens_not_mid_sentence():
    text = ("Step 2: Use your job code to find your band in Assemble. Non-US teammates: Please "
            "review our Medical Leave Policy. 4.4.2 Use inline assembly in Bit.sol for the loop. "
            "We ship to every New Zealand address (New customers pay the postage).")
    rows = extract_statements(chunk(text))
    assert rows[0]["entities"] == ["Step 2", "Assemble"]  # not "Use"
    assert rows[1]["entities"] == ["Medical Leave Policy"]  # not "Please"
    assert "Use" not in rows[2]["entities"]  # after a section number
    assert rows[3]["entities"] == ["New Zealand"]  # "(New customers": an opener after "("


def test_questions_short_and_overlong_pieces_are_dropped_and_counted():
    long_sentence = "The warranty covers " + " ".join(f"item{i}" for i in range(70)) + " forever."
    text = f"How long do I have to return something?\nNo.\n\n{long_sentence}\n\nGold members have 90 days."
    rows, dropped = extract_statements_counted(chunk(text))
    assert [r["text"] for r in rows] == ["Gold members have 90 days."]
    assert dropped == 3


def test_a_table_cell_fact_carries_its_cell_as_a_record():
    rows = extract_statements(chunk(
        "Plans:\n\n| Plan | Fee: yearly | Notes |\n|---|---|---|\n"
        "| Gold — Plus | $60 | Includes express shipping for every order. |\n\n"
        "The Gold plan renews every year on the same day."))
    cells = {r["text"]: r["cell"] for r in rows}
    # the record keeps each part exactly, even where the text's separators recur inside a part
    assert cells["Gold — Plus — Fee: yearly: $60"] == {
        "entity": "Gold — Plus", "attribute": "Fee: yearly", "value": "$60"}
    assert cells["The Gold plan renews every year on the same day."] is None


def test_tables_without_outer_pipes_and_after_a_paragraph_are_tables():
    # the chunker reads these as tables (builder.text.markdown), and so does the splitter
    assert texts("Plan | Fee\n---|---\nGold | $60\nBasic | free of charge\n") == [
        "Gold — Fee: $60", "Basic — Fee: free of charge"]
    assert texts("Our membership prices are listed here.\n| Plan | Fee |\n|---|---|\n"
                 "| Gold | $60 |\n") == ["Our membership prices are listed here.",
                                        "Gold — Fee: $60"]


def test_a_numbered_list_item_is_a_step_and_a_bulleted_one_is_not():
    from builder.text.markdown import step_at

    text = ("## Making HTTPS requests to a local server\n\nYou will need certificates:\n\n"
            "1. Use trustme to generate them.\n2) Pass the server files to the server.\n"
            "3. Configure `httpx` to use the certificates stored in `client.pem`.\n\n"
            "- a bullet item 1. with a number\n\n> 4. a quoted step\n\n"
            "Version 2. The prose after it.\n")
    for words in ("trustme", "server files", "client.pem", "quoted step"):
        assert step_at(text, text.index(words)), words
    for words in ("You will need", "bullet item", "The prose after"):
        assert not step_at(text, text.index(words)), words
    assert not step_at(text, None)


def test_a_table_row_that_is_only_a_pipe_is_skipped_not_a_crash():
    text = "| Plan | Trial |\n|---|---|\n|\n| Gold | 5 days |\n"
    facts = extract_statements({"id": "c", "text": text, "document_id": "d"})
    assert [f["text"] for f in facts] == ["Gold — Trial: 5 days"]
