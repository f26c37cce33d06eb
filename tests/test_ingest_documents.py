"""PDF, DOCX, reStructuredText and MDX through `golden ingest` (issue 14): text, structure,
page numbers, headings and offsets, on real-shaped files.

The PDFs are LibreOffice exports of a python-docx handbook (tests/fixtures/documents, made by
tests/document_fixtures.py): subset fonts, an outline, a running header and a "Page N" footer.
DOCX files are written here with python-docx; RST and MDX are inline.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from builder.ingest.docx_text import docx_to_text
from builder.ingest.mdx_text import mdx_to_text
from builder.ingest.pdf_text import pdf_to_text
from builder.ingest.rst_text import rst_to_text
from builder.store import Store
from builder.store.documents import list_chunks, list_documents
from tests.document_fixtures import (
    FIXTURES, HEADER_TEXT, handbook, to_markdown, write_docx, write_image_docx,
)

HEADINGS = ["Staff Handbook", "1. Returns", "1.1 How returns work", "2. Gift Cards",
            "2.1 How gift cards work", "3. Warranty", "3.1 How warranty work", "4. Shipping",
            "4.1 How shipping work"]

RST = """\
=============
Returns Guide
=============

.. contents::

Overview
========

Items can be returned within **45 days**. See :ref:`the fees <fees>` and :class:`~a.b.Refund`.

.. note:: Keep the receipt.

.. toctree::
   :maxdepth: 2

   fees

Fees
----

.. versionadded:: 2.1
   Restocking fees for opened electronics.

* Opened electronics carry a 10% fee.
* Sealed items carry none.

  1. Check the seal
  2. Refund in full

.. list-table:: Tiers
   :header-rows: 1

   * - Tier
     - Window
   * - Gold
     - 60 days

.. code-block:: python

   def refund(order):
       return order.total

.. include:: /etc/passwd

.. raw:: html

   <script>alert(1)</script>

.. |brand| replace:: Northwind
"""

MDX = """\
---
title: "Gift cards"
sidebar_position: 2
---
import Tabs from '@theme/Tabs';
import {Callout,
  Note} from '../components';
export const meta = {
  author: 'x',
};

# Gift cards

Gift cards never expire.{/* internal note */} Balance: {props.balance}.

<Callout type="info" title="a > b" onClick={() => { if (x > 1) { go() } }}>
  Lost cards are **replaced** with the receipt.
</Callout>

<Tabs>
  <TabItem value="us" label="US">
    ## In the US

    Cards work in all 50 states.
  </TabItem>
</Tabs>

Write `<Callout>` in your own pages.<br/>

```jsx
<Callout type="info">code stays as it is</Callout>
```

<Image src="card.png" />
"""


def check_offsets(text: str, chunks: list[dict]) -> None:
    assert chunks
    for c in chunks:
        assert text[c["char_start"]:c["char_end"]] == c["text"], c["id"]


@pytest.fixture
def mixed_kb(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    (kb / "pdf").mkdir(parents=True)
    for name in ("handbook.pdf", "handbook_no_outline.pdf", "scanned.pdf"):
        (kb / "pdf" / name).write_bytes((FIXTURES / name).read_bytes())
    write_docx(kb / "handbook.docx", handbook(pages=3))
    (kb / "guide.rst").write_text(RST, encoding="utf-8")
    (kb / "gift.mdx").write_text(MDX, encoding="utf-8")
    (kb / "notes.md").write_text("# Notes\n\nStore hours are 9 to 5.\n", encoding="utf-8")
    (kb / "page.html").write_text("<h1>Page</h1><p>Visible text.</p>", encoding="utf-8")
    return kb


def test_a_mixed_folder_yields_chunks_with_page_and_heading_provenance(golden_cli, tmp_path,
                                                                        mixed_kb):
    db = tmp_path / "g.db"
    code, out, err = golden_cli("--db", str(db), "ingest", str(mixed_kb))
    assert code == 0, err
    assert "files: 8 read, skipped 1 no text" in out
    assert "documents: 7 added" in out
    # the scanned PDF: one warning line naming it, no empty document
    assert err.count("\n") == 1 and "pdf/scanned.pdf: no text layer" in err
    with Store(db) as store:
        docs = {d["id"]: d for d in list_documents(store)}
        assert set(docs) == {"pdf/handbook.pdf", "pdf/handbook_no_outline.pdf",
                             "handbook.docx", "guide.rst", "gift.mdx", "notes.md", "page.html"}
        assert {d["format"] for d in docs.values()} == {"pdf", "docx", "rst", "mdx",
                                                        "markdown", "html"}
        assert docs["pdf/handbook.pdf"]["metadata"]["pages"] == 5
        assert docs["gift.mdx"]["title"] == "Gift cards"
        assert docs["guide.rst"]["title"] == "Returns Guide"
        pdf_chunks = list_chunks(store, "pdf/handbook.pdf")
        docx_chunks = list_chunks(store, "handbook.docx")

    # PDF: pages per chunk, headings from the outline, running header and footer dropped
    pdf = pdf_to_text((FIXTURES / "handbook.pdf").read_bytes(), "handbook.pdf")
    check_offsets(pdf.text, pdf_chunks)
    assert all(c["metadata"]["pages"] for c in pdf_chunks)
    gift = next(c for c in pdf_chunks if "Rule 0 for gift cards" in c["text"])
    assert gift["metadata"]["pages"] == [3]
    assert gift["heading_path"] == ["Staff Handbook", "2. Gift Cards"]
    # the returns section runs from page 1 on to page 2; its chunk says so
    spanning = next(c for c in pdf_chunks if "approves a request record in writing" in c["text"]
                    and "Rule 12 for returns" in c["text"])
    assert spanning["metadata"]["pages"] == [1, 2]
    assert not any(HEADER_TEXT in c["text"] or "Page 3" in c["text"] for c in pdf_chunks)

    # DOCX: headings, lists and the table as structure
    docx_text = docx_to_text((mixed_kb / "handbook.docx").read_bytes(), "handbook.docx").text
    check_offsets(docx_text, docx_chunks)
    table = next(c for c in docx_chunks if "| Tier | Fee | Window |" in c["text"])
    assert "|---|---|---|\n| Basic | $5 | 30 days |" in table["text"]
    assert table["heading_path"][:2] == ["Staff Handbook", "1. Returns"]
    assert any("- Point 1 on returns: keep the receipt for 21 days" in c["text"]
               for c in docx_chunks)
    assert all(c["metadata"] is None for c in docx_chunks)  # no pages in a Word file


def test_unchanged_documents_are_not_parsed_again(golden_cli, tmp_path, mixed_kb, monkeypatch):
    db = tmp_path / "g.db"
    assert golden_cli("--db", str(db), "ingest", str(mixed_kb))[0] == 0
    from builder.ingest import extract

    real_pdf = extract.EXTRACTORS["pdf"]

    def parse_again(doc):
        if doc.id == "pdf/scanned.pdf":  # never stored, so read again (and warned) each time
            return real_pdf(doc)
        raise AssertionError(f"{doc.id} parsed again although unchanged")

    for fmt in ("pdf", "docx", "rst", "mdx", "html"):
        monkeypatch.setitem(extract.EXTRACTORS, fmt, parse_again)
    code, out, err = golden_cli("--db", str(db), "ingest", str(mixed_kb))
    assert code == 0, err
    assert "documents: 0 added, 7 unchanged, 0 replaced, 0 removed" in out


def test_pdf_headings_from_outline_and_from_font_sizes_agree():
    with_outline = pdf_to_text((FIXTURES / "handbook.pdf").read_bytes(), "a.pdf")
    sizes_only = pdf_to_text((FIXTURES / "handbook_no_outline.pdf").read_bytes(), "b.pdf")
    for result in (with_outline, sizes_only):
        headings = [(b.level, b.heading) for b in result.blocks if b.kind == "heading"]
        assert [h for _, h in headings] == HEADINGS
        assert [lvl for _, lvl in [(h, lvl) for lvl, h in headings]][:3] == [1, 2, 3]
        assert result.pages is not None and len(result.pages) == 5
        # page k starts where its text starts
        for start in result.pages[1:]:
            assert start <= len(result.text)
        body = result.text
        assert "- Point 2 on returns: keep the receipt for 22 days" in body
        assert "Tier Fee Window\nBasic $5 30 days" in body  # short lines stay lines
        assert HEADER_TEXT not in body and "Page 1" not in body
        assert "\uf0b7" not in body  # the Symbol font's bullet became "- "


def test_pdf_text_matches_the_source_words_in_order():
    source = to_markdown(handbook(pages=4))
    extracted = pdf_to_text((FIXTURES / "handbook.pdf").read_bytes(), "a.pdf").text
    words = [w for w in source.replace("|", " ").split() if w.isalpha() and w.islower()]
    got = [w for w in extracted.split() if w.isalpha() and w.islower()]
    assert got == words


def test_pdf_with_some_pages_scanned_names_them(tmp_path, golden_cli):
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument((FIXTURES / "handbook.pdf").read_bytes())
    scan = pdfium.PdfDocument((FIXTURES / "scanned.pdf").read_bytes())
    pdf.import_pages(scan, index=2)
    target = tmp_path / "kb" / "mixed.pdf"
    target.parent.mkdir()
    pdf.save(str(target))
    code, out, err = golden_cli("--db", str(tmp_path / "g.db"), "ingest", str(target.parent))
    assert code == 0, err
    assert err.strip() == (f"golden: warning: {target}: page(s) 3 have no text layer "
                           f"(scanned?); their content is missing")
    with Store(tmp_path / "g.db") as store:
        pages = sorted({p for c in list_chunks(store) for p in c["metadata"]["pages"]})
    assert pages == [1, 2, 4, 5, 6]


@pytest.mark.parametrize("name,data,message", [
    ("broken.pdf", b"%PDF-1.7\n1 0 obj <<>> garbage", "not a readable PDF"),
    ("broken.docx", b"PK\x03\x04 not really a zip", "not a readable .docx file"),
    ("empty.pdf", b"   \n", "file is empty"),
])
def test_damaged_files_stop_with_one_line_and_nothing_written(tmp_path, golden_cli, name, data,
                                                              message):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "fine.md").write_text("# Fine\n\nText.\n", encoding="utf-8")
    (kb / name).write_bytes(data)
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "ingest", str(kb))
    assert code == 2
    assert err.strip().splitlines() == [f"golden: error: {kb / name}: {message}"
                                        + err.split(message, 1)[1].rstrip("\n")]
    with Store(tmp_path / "g.db") as store:
        assert list_documents(store) == []


def test_a_picture_only_word_file_is_a_warning_not_a_document(tmp_path, golden_cli):
    kb = tmp_path / "kb"
    kb.mkdir()
    write_image_docx(kb / "scan.docx")
    (kb / "fine.md").write_text("# Fine\n\nText.\n", encoding="utf-8")
    code, out, err = golden_cli("--db", str(tmp_path / "g.db"), "ingest", str(kb))
    assert code == 0
    assert err.strip() == (f"golden: warning: {kb / 'scan.docx'}: no text in this Word "
                           f"document (pictures only?); skipped")
    assert "documents: 1 added" in out


def test_pdf_and_docx_without_the_documents_extra_name_it(tmp_path, golden_cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "docx", None)
    for name in ("handbook.pdf", "handbook.docx"):
        kb = tmp_path / name.replace(".", "_")
        kb.mkdir()
        if name.endswith(".pdf"):
            (kb / name).write_bytes((FIXTURES / name).read_bytes())
        else:
            (kb / name).write_bytes(b"PK\x03\x04 a word file")
        code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "ingest", str(kb))
        assert code == 2
        kind, library = ("PDF", "pypdfium2") if name.endswith(".pdf") else ("DOCX", "python-docx")
        assert err.strip() == (f"golden: error: {kb / name}: reading {kind} files needs "
                               f"golden's 'documents' extra ({library} is not installed): "
                               f"pip install 'golden[documents]'")


def test_docx_headings_lists_and_tables_are_kept_as_structure(tmp_path):
    import docx

    document = docx.Document()
    document.add_heading("Travel Policy", 0)
    document.add_heading("Booking", 1)
    custom = document.styles.add_style("Policy Heading", 1)  # paragraph style
    custom.base_style = document.styles["Heading 2"]
    document.add_paragraph("Flights", style="Policy Heading")
    document.add_paragraph("Book through the portal | never by phone.")
    document.add_paragraph("Economy under six hours", style="List Bullet")
    document.add_paragraph("Business above six hours", style="List Bullet")
    document.add_paragraph("Submit the form", style="List Number")
    document.add_paragraph("Wait for approval", style="List Number")
    table = document.add_table(rows=3, cols=3)
    for r, row in enumerate([["Class", "Limit", "Notes"], ["Economy", "$500", "any"],
                             ["Business", "$2,000", "a | b"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    merged = table.cell(2, 1).merge(table.cell(2, 2))
    merged.text = "$2,000 with approval"
    document.sections[0].header.paragraphs[0].text = "CONFIDENTIAL HEADER"
    path = tmp_path / "travel.docx"
    document.save(str(path))

    result = docx_to_text(path.read_bytes(), "travel.docx")
    assert result.text == (
        "# Travel Policy\n\n## Booking\n\n### Flights\n\n"
        "Book through the portal | never by phone.\n\n"
        "- Economy under six hours\n- Business above six hours\n\n"
        "1. Submit the form\n2. Wait for approval\n\n"
        "| Class | Limit | Notes |\n|---|---|---|\n| Economy | $500 | any |\n"
        "| Business | $2,000 with approval | |")
    assert [(b.kind, b.level, b.heading) for b in result.blocks] == [
        ("heading", 1, "Travel Policy"), ("heading", 2, "Booking"), ("heading", 3, "Flights"),
        ("paragraph", 0, ""), ("paragraph", 0, ""), ("paragraph", 0, ""), ("table", 0, "")]
    for b in result.blocks:
        assert result.text[b.start:b.end] == result.text[b.start:b.end].strip()


def test_rst_keeps_prose_structure_and_never_reads_other_files():
    result = rst_to_text(RST, "guide.rst")
    text = result.text
    assert [(b.level, b.heading) for b in result.blocks if b.kind == "heading"] == [
        (1, "Returns Guide"), (2, "Overview"), (3, "Fees")]
    assert "Items can be returned within 45 days. See the fees and Refund." in text
    assert "Note: Keep the receipt." in text
    assert "New in version 2.1: Restocking fees for opened electronics." in text
    assert ("- Opened electronics carry a 10% fee.\n- Sealed items carry none.\n"
            "  1. Check the seal\n  2. Refund in full") in text
    assert "| Tier | Window |\n|---|---|\n| Gold | 60 days |" in text
    assert "```python\ndef refund(order):\n    return order.total\n```" in text
    for dropped in ("toctree", "maxdepth", "root:", "passwd", "<script>", "Northwind",
                    "contents"):
        assert dropped not in text, dropped
    kinds = [b.kind for b in result.blocks]
    assert "table" in kinds and "code" in kinds


def test_mdx_drops_front_matter_esm_and_jsx_and_keeps_the_text():
    result = mdx_to_text(MDX, "gift.mdx")
    assert result.title == "Gift cards"
    assert result.text == (
        "# Gift cards\n\nGift cards never expire. Balance: .\n\n"
        "Lost cards are **replaced** with the receipt.\n\n## In the US\n\n"
        "Cards work in all 50 states.\n\nWrite `<Callout>` in your own pages.\n\n"
        "```jsx\n<Callout type=\"info\">code stays as it is</Callout>\n```")
    assert [(b.kind, b.heading) for b in result.blocks if b.kind == "heading"] == [
        ("heading", "Gift cards"), ("heading", "In the US")]


def test_offsets_hold_on_every_extracted_format(tmp_path, golden_cli, mixed_kb):
    db = tmp_path / "g.db"
    assert golden_cli("--db", str(db), "ingest", str(mixed_kb), "--chunk-tokens", "60", "--overlap",
               "10")[0] == 0
    texts = {
        "pdf/handbook.pdf": pdf_to_text((FIXTURES / "handbook.pdf").read_bytes(), "x").text,
        "pdf/handbook_no_outline.pdf": pdf_to_text(
            (FIXTURES / "handbook_no_outline.pdf").read_bytes(), "x").text,
        "handbook.docx": docx_to_text((mixed_kb / "handbook.docx").read_bytes(), "x").text,
        "guide.rst": rst_to_text(RST, "x").text,
        "gift.mdx": mdx_to_text(MDX, "x").text,
    }
    with Store(db) as store:
        for doc_id, text in texts.items():
            chunks = list_chunks(store, doc_id)
            assert len(chunks) > 1, doc_id
            check_offsets(text, chunks)
            assert {c["char_start"] for c in chunks} != {0}
        meta = json.loads(store.query("SELECT metadata FROM documents WHERE id = ?",
                                      ("pdf/handbook.pdf",))[0]["metadata"])
    assert meta["pages"] == 5


def test_the_reviewer_sees_the_pages_a_source_chunk_comes_from(golden_cli, tmp_path):
    from builder.store.review_queue import get_candidate
    from review_tui.widgets.detail import render_sources
    from tests.support.rows import add_candidates

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "handbook.pdf").write_bytes((FIXTURES / "handbook.pdf").read_bytes())
    db = tmp_path / "g.db"
    assert golden_cli("--db", str(db), "ingest", str(kb))[0] == 0
    with Store(db) as store:
        chunks = list_chunks(store, "handbook.pdf")
        on_3 = next(c["id"] for c in chunks if c["metadata"]["pages"] == [3])
        spanning = next(c["id"] for c in chunks if c["metadata"]["pages"] == [1, 2])
        add_candidates(store, 2, chunk_ids=[on_3, spanning])
        shown = {cid: render_sources(get_candidate(store, cid)).plain
                 for cid in ("c000000", "c000001")}
    assert "Staff Handbook › 2. Gift Cards · p. 3" in shown["c000000"]
    assert "· pp. 1-2" in shown["c000001"]


def test_markdown_front_matter_is_dropped_and_gives_the_title(tmp_path):
    """Docs sites put YAML front matter on top of their Markdown; its keys are not text anyone
    asks about ("last_reviewed_at: 2025-05-16"), and its title is the document's."""
    from builder.ingest.pipeline import ingest_paths
    from builder.store import Store

    kb = tmp_path / "kb"
    kb.mkdir()
    source = ("---\ntitle: Holiday\nlast_reviewed_at: 2025-05-16T17:00:00.000Z\n---\n"
              "We offer 25 days of holiday.\n\n## Booking\n\nUse BreatheHR.\n")
    (kb / "holiday.md").write_text(source, encoding="utf-8")
    (kb / "plain.md").write_text("---\n\nA rule, then text.\n", encoding="utf-8")  # no block
    (kb / "index.md").write_text("---\ntitle: Leave\n---\n", encoding="utf-8")  # a section index
    warnings = []
    with Store(tmp_path / "g.db") as store:
        ingest_paths(store, [str(kb)], warn=warnings.append)
        assert not store.query("SELECT 1 FROM documents WHERE id = 'index.md'")
        doc = store.query("SELECT title FROM documents WHERE id = 'holiday.md'")[0]
        chunks = store.query("SELECT text, title, char_start, char_end FROM chunks "
                             "WHERE document_id = 'holiday.md' ORDER BY seq")
        plain = store.query("SELECT text FROM chunks WHERE document_id = 'plain.md'")
    assert doc["title"] == "Holiday" and all(c["title"] == "Holiday" for c in chunks)
    text = "".join(c["text"] for c in chunks)
    assert "last_reviewed_at" not in text and "25 days" in text and "BreatheHR" in text
    body = source.split("---\n", 2)[2]
    assert all(body[c["char_start"]:c["char_end"]] == c["text"] for c in chunks)
    assert plain[0]["text"].startswith("---")  # a leading rule without a closing one stays
    assert any("index.md" in w and "only front matter" in w for w in warnings)
