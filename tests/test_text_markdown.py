"""One reading of Markdown blocks (builder/text/markdown.py) for the chunker and the statement
splitter: fences, headings and tables mean the same thing to both."""

from __future__ import annotations

from builder.generate.statements import extract_statements
from builder.ingest.blocks import markdown_blocks
from builder.text.markdown import cell_spans, line_blocks, plain, section_heading

DOC = """# Prices
Our membership prices:
| Plan | Fee |
|---|---|
| Gold | $60 |

    ```
not a fence: indented four spaces
    ```

```python
| not | a | table |
```
Plan | Days
---|---
Standard | 5
"""


def kinds(text: str) -> list[str]:
    return [b.kind for b in line_blocks(text.split("\n"))]


def test_blocks_of_a_document():
    assert kinds(DOC) == ["heading", "paragraph", "table", "paragraph", "code", "table"]
    # the chunker's blocks are the same, with offsets
    assert [b.kind for b in markdown_blocks(DOC)] == kinds(DOC)
    table = markdown_blocks(DOC)[2]
    assert DOC[table.start:table.end] == "| Plan | Fee |\n|---|---|\n| Gold | $60 |"


def test_unclosed_fence_and_pipe_runs():
    assert kinds("```\ncode\n| a | b |") == ["code"]
    assert kinds("| a | b |\n| c | d |") == ["table"]          # every line piped: a table
    assert kinds("Intro line\n| a | b |\n| c | d |") == ["paragraph", "table"]
    assert kinds("a | b\nplain text") == ["paragraph"]             # no delimiter row


def test_the_splitter_skips_what_the_chunker_calls_code():
    chunk = {"id": "c", "text": DOC, "language": "en"}
    texts = [r["text"] for r in extract_statements(chunk)]
    assert "Gold — Fee: $60" in texts and "Standard — Days: 5" in texts
    assert not any("not | a | table" in t for t in texts)


def test_cells_split_at_pipes_but_not_escaped_or_in_code():
    row = r"| a \| b | `x | y` | c |"
    assert [row[s:e] for s, e in cell_spans(row)] == [r"a \| b", "`x | y`", "c"]


def test_a_heading_is_its_words_without_the_anchors_a_docs_site_adds():
    doc = ('## Fees for members <a href="#fees" id="fees"></a>\nText.\n'
           '### \\[Self-employed] When to declare? {#declare}\nMore text.\n'
           '### Use `Map<K, V>` with **care**\nLast.\n')
    headings = [b.heading for b in markdown_blocks(doc) if b.kind == "heading"]
    assert headings == ["Fees for members", "[Self-employed] When to declare?",
                        "Use Map<K, V> with care"]
    # the heading above an offset reads the same way
    assert section_heading(doc, doc.index("More text")) == "[Self-employed] When to declare?"


def test_a_wiki_link_reads_as_its_label_or_page_and_an_embed_as_nothing():
    assert plain("See [[Permalinks|permanent links]].") == "See permanent links."
    assert plain("Read [[Fees#Refunds]] and [[notes.md]].") == "Read Fees > Refunds and notes."
    assert plain("![[diagram.png|200]] Drag the file.") == "Drag the file."
    assert plain("x [[unclosed") == "x [[unclosed"


def test_a_wiki_link_in_a_table_gives_its_label_and_an_embedded_image_no_fact():
    text = ("| Field | Meaning |\n|---|---|\n"
            "| cover | ![[cover.png\\|100]] |\n"
            "| permalink | See [[Permalinks\\|permanent links]]. |\n")
    facts = extract_statements({"id": "c1", "document_id": "d", "text": text, "language": "en"})
    assert [f["cell"]["value"] for f in facts] == ["See permanent links."]
    assert facts[0]["cell"]["entity"] == "permalink" and facts[0]["cell"]["attribute"] == "Meaning"
