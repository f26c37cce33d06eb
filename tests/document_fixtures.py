"""Real-shaped knowledge-base documents for the ingest tests and the document bench.

One content model (`handbook`: headings, paragraphs, lists, a table, page breaks) written as
DOCX with python-docx (styles "Heading N", "List Bullet"/"List Number", a table with a header
row, a page header and a "Page N" footer field, as Word writes them) and as Markdown, so a
test or the bench can compare the two. The PDFs in `tests/fixtures/documents/` were made from
these DOCX files by LibreOffice (`make_fixture_pdfs`, run by hand; see that folder's README):
embedded subset fonts, ToUnicode maps, an outline built from the headings, and the running
header and footer on every page, as real exported PDFs have. All text here is our own.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "documents"
HEADER_TEXT = "Northwind Outfitters Staff Handbook"

_TOPICS = ["returns", "gift cards", "warranty", "shipping", "loyalty points", "repairs",
           "rentals", "price matching", "store hours", "safety"]
_WORDS = ("customers staff receipt store manager days refund exchange item order policy "
          "payment card account team member product service request approval record")


@dataclass
class Block:
    kind: str  # heading | paragraph | bullets | numbers | table | pagebreak
    text: str = ""
    level: int = 0
    items: tuple = ()


def _sentence(rng_state: list[int], topic: str, k: int) -> str:
    words = _WORDS.split()
    rng_state[0] = (rng_state[0] * 1103515245 + 12345) % (2 ** 31)
    seed = rng_state[0]
    picked = [words[(seed >> (3 * i)) % len(words)] for i in range(8)]
    return (f"Rule {k} for {topic} says that {picked[0]} and {picked[1]} must keep the "
            f"{picked[2]} for {10 + seed % 80} days, unless the {picked[3]} approves a "
            f"{picked[4]} {picked[5]} in writing.")


def handbook(pages: int = 3, *, seed: int = 7) -> list[Block]:
    """About `pages` pages of handbook: per page a section (Heading 1), a subsection
    (Heading 2) with two paragraphs, a bulleted and a numbered list, and every third page a
    fee table; a page break after each page's content."""
    state = [seed]
    blocks: list[Block] = [Block("heading", "Staff Handbook", 0)]
    for page in range(pages):
        topic = _TOPICS[page % len(_TOPICS)]
        n = page + 1
        blocks.append(Block("heading", f"{n}. {topic.title()}", 1))
        blocks.append(Block("paragraph", " ".join(_sentence(state, topic, k) for k in range(4))))
        blocks.append(Block("heading", f"{n}.1 How {topic} work", 2))
        blocks.append(Block("paragraph", " ".join(_sentence(state, topic, k)
                                                  for k in range(4, 9))))
        blocks.append(Block("bullets", items=tuple(
            f"Point {k} on {topic}: keep the receipt for {20 + k} days" for k in range(1, 4))))
        blocks.append(Block("numbers", items=tuple(
            f"Step {k}: ask the manager about {topic}" for k in range(1, 4))))
        if page % 3 == 0:
            blocks.append(Block("table", items=(
                ("Tier", "Fee", "Window"),
                ("Basic", f"${5 + page}", "30 days"),
                ("Gold", f"${9 + page}", "60 days"),
                ("Platinum", "none", "90 days"))))
        blocks.append(Block("paragraph", " ".join(_sentence(state, topic, k)
                                                  for k in range(9, 13))))
        if page < pages - 1:
            blocks.append(Block("pagebreak"))
    return blocks


def to_markdown(blocks: list[Block]) -> str:
    """The same content as Markdown (what the DOCX loader should produce, structure-wise)."""
    out: list[str] = []
    for b in blocks:
        if b.kind == "heading":
            out.append("#" * max(1, b.level) + " " + b.text)
        elif b.kind == "paragraph":
            out.append(b.text)
        elif b.kind == "bullets":
            out.append("\n".join(f"- {item}" for item in b.items))
        elif b.kind == "numbers":
            out.append("\n".join(f"{k}. {item}" for k, item in enumerate(b.items, 1)))
        elif b.kind == "table":
            rows = [list(r) for r in b.items]
            lines = ["| " + " | ".join(rows[0]) + " |",
                     "|" + "|".join("---" for _ in rows[0]) + "|"]
            lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
            out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


def write_docx(path: Path, blocks: list[Block], *, header: str | None = HEADER_TEXT,
               page_numbers: bool = True) -> Path:
    """A DOCX as Word would save it: built-in heading/list styles, a table with a header
    row, a running header and a PAGE field in the footer."""
    import docx
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    section = document.sections[0]
    if header:
        section.header.paragraphs[0].text = header
    if page_numbers:
        para = section.footer.paragraphs[0]
        para.add_run("Page ")
        field = OxmlElement("w:fldSimple")
        field.set(qn("w:instr"), "PAGE")
        run = OxmlElement("w:r")
        text = OxmlElement("w:t")
        text.text = "1"
        run.append(text)
        field.append(run)
        para._p.append(field)
    for b in blocks:
        if b.kind == "heading":
            document.add_heading(b.text, b.level)
        elif b.kind == "paragraph":
            document.add_paragraph(b.text)
        elif b.kind in ("bullets", "numbers"):
            style = "List Bullet" if b.kind == "bullets" else "List Number"
            for item in b.items:
                document.add_paragraph(item, style=style)
        elif b.kind == "table":
            rows = b.items
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            table.style = "Table Grid"
            for r, row in enumerate(rows):
                for c, value in enumerate(row):
                    table.cell(r, c).text = value
        elif b.kind == "pagebreak":
            document.add_page_break()
    document.save(str(path))
    return path


def write_image_docx(path: Path) -> Path:
    """A 'scanned' document: one page holding only a picture (no text at all)."""
    import docx
    from docx.shared import Inches

    with tempfile.TemporaryDirectory() as tmp:
        png = Path(tmp, "scan.png")
        png.write_bytes(tiny_png())
        document = docx.Document()
        document.add_picture(str(png), width=Inches(5))
        document.save(str(path))
    return path


def tiny_png(width: int = 64, height: int = 64) -> bytes:
    """A grey PNG, made with the standard library."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    raw = b"".join(b"\x00" + bytes([128] * width) for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def docx_to_pdf(docx_path: Path, out_dir: Path, *, bookmarks: bool = True) -> Path:
    """Export with LibreOffice (headless), as a user's 'Save as PDF' would."""
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        raise RuntimeError("LibreOffice (soffice) is needed to remake the fixture PDFs")
    target = 'pdf:writer_pdf_Export:{"ExportBookmarks":{"type":"boolean","value":"%s"}}' % (
        "true" if bookmarks else "false")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([soffice, f"-env:UserInstallation=file://{profile}", "--headless",
                        "--convert-to", target, "--outdir", str(out_dir), str(docx_path)],
                       check=True, capture_output=True, timeout=300)
    return out_dir / (docx_path.stem + ".pdf")


def make_fixture_pdfs() -> None:
    """Remake tests/fixtures/documents/*.pdf (by hand: python -m tests.document_fixtures)."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        write_docx(tmp_path / "handbook.docx", handbook(pages=4))
        docx_to_pdf(tmp_path / "handbook.docx", FIXTURES)
        write_docx(tmp_path / "handbook_no_outline.docx", handbook(pages=4))
        docx_to_pdf(tmp_path / "handbook_no_outline.docx", FIXTURES, bookmarks=False)
        write_image_docx(tmp_path / "scanned.docx")
        docx_to_pdf(tmp_path / "scanned.docx", FIXTURES)


if __name__ == "__main__":
    make_fixture_pdfs()
