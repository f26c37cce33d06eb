"""Text and structure of the formats that are parsed rather than read as they are.

Plain text is chunked as it is, and Markdown too once a front matter block is taken off the
top; HTML, PDF, DOCX, reStructuredText and MDX are parsed first, by one module each (`html_text`, `pdf_text`, `docx_text`, `rst_text`,
`mdx_text`), into the text golden keeps of them (the document text: chunk offsets index it),
its blocks (headings, paragraphs, lists, tables, code) and, for PDF, where each page starts.
This happens only for documents that are new or changed (an unchanged file costs a read and a
hash), and before anything is written, so a file that cannot be parsed stops the ingest with
the database untouched.
"""

from __future__ import annotations

from collections.abc import Callable

from builder.errors import InputError
from builder.ingest.document_text import Extracted, NoText
from builder.ingest.html_text import html_to_text
from builder.ingest.loaders import LoadedDocument


def _html(doc: LoadedDocument) -> Extracted:
    text, blocks, title = html_to_text(doc.text)
    if not text.strip():
        raise InputError("no visible text in this HTML page", path=doc.display)
    return Extracted(text, blocks, title or None)


def _pdf(doc: LoadedDocument) -> Extracted:
    from builder.ingest.pdf_text import pdf_to_text

    return pdf_to_text(doc.raw or b"", doc.display)


def _docx(doc: LoadedDocument) -> Extracted:
    from builder.ingest.docx_text import docx_to_text

    return docx_to_text(doc.raw or b"", doc.display)


def _rst(doc: LoadedDocument) -> Extracted:
    from builder.ingest.rst_text import rst_to_text

    return rst_to_text(doc.text, doc.display)


def _markdown(doc: LoadedDocument) -> Extracted | None:
    """Markdown as it is, without the YAML/TOML front matter docs sites (Jekyll, Hugo, MkDocs,
    Docusaurus) put at the top: its `title` becomes the document's, and its keys
    (`last_reviewed_at: 2025-05-16`, `permalink: ...`) are not text anybody would ask about.
    None when there is no front matter: the file is kept exactly as read."""
    from builder.ingest.blocks import markdown_blocks
    from builder.ingest.mdx_text import strip_front_matter

    body, title, found = strip_front_matter(doc.text)
    if not found:
        return None
    if not body.strip():
        raise InputError("no text below the front matter", path=doc.display)
    return Extracted(body, markdown_blocks(body), title)


def _mdx(doc: LoadedDocument) -> Extracted:
    from builder.ingest.mdx_text import mdx_to_text

    return mdx_to_text(doc.text, doc.display)


EXTRACTORS: dict[str, Callable[[LoadedDocument], Extracted | None]] = {
    "markdown": _markdown, "html": _html, "pdf": _pdf, "docx": _docx, "rst": _rst, "mdx": _mdx,
}


def extract(doc: LoadedDocument, warn: Callable[[str], None]) -> bool:
    """Parse `doc` in place if its format needs it (text, blocks, title, pages set; the raw
    bytes dropped). False when the file holds no text at all (a scanned PDF): `warn` got one
    line naming it and the caller skips it. Raises InputError for a file that cannot be read."""
    parse = EXTRACTORS.get(doc.format)
    if parse is None:
        return True
    try:
        result = parse(doc)
    except NoText as exc:
        warn(f"{doc.display}: {exc}")
        return False
    if result is None:  # nothing to change (Markdown without front matter)
        return True
    if not result.text.strip():
        raise InputError(f"no text in this {doc.format.upper()} file once parsed",
                         path=doc.display)
    for message in result.warnings:
        warn(message)
    doc.text, doc.blocks, doc.pages, doc.raw = result.text, result.blocks, result.pages, None
    doc.title = doc.title or result.title
    return True
