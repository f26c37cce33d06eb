"""Chunking rules: offsets, exact token counts, limits, headings, code fences, tables, overlap."""

from __future__ import annotations

import random

from builder.ingest.blocks import markdown_blocks, text_blocks
from builder.ingest.chunker import chunk_blocks
from builder.ingest.html_text import html_to_text
from builder.text.language import detect_language
from builder.ingest.tokens import count_tokens

WORDS = ("return window days receipt gift card 45 $12.50 (member) don't it's /usr/bin C++ "
         "退货 政策 三十天 收据 express shipping Summit tent").split()


def _sentence(r: random.Random) -> str:
    return " ".join(r.choice(WORDS) for _ in range(r.randint(3, 30))) + r.choice(
        [".", "!", "?", "。", ":", "", ";"])


def _random_markdown(r: random.Random) -> str:
    parts = []
    for _ in range(r.randint(1, 30)):
        k = r.random()
        if k < .15:
            parts.append("#" * r.randint(1, 4) + " " + _sentence(r))
        elif k < .25:
            body = "\n".join(r.choice(["x = 1;", "// c", "/path", "  indented()", ""])
                             for _ in range(r.randint(1, 150)))
            parts.append(f"```\n{body}\n```")
        elif k < .32:
            rows = "\n".join(f"| {_sentence(r)} | {r.randint(0, 99)} |"
                             for _ in range(r.randint(1, 40)))
            parts.append("| a | b |\n|---|---|\n" + rows)
        elif k < .35:
            parts.append(" ".join(r.choice(WORDS) for _ in range(r.randint(100, 700))))
        else:
            lines = [" ".join(_sentence(r) for _ in range(r.randint(1, 8)))
                     for _ in range(r.choice([1, 1, 2, 5]))]
            prefix = r.choice(["", "", "- ", "  ", "/"])
            parts.append("\n".join(prefix + line for line in lines))
    sep = r.choice(["\n\n", "\n\n\n", "\r\n\r\n", "\n \n"])
    return r.choice(["", "\n", "  "]) + sep.join(parts) + r.choice(["", "\n", "\n\n  "])


def test_random_documents_keep_every_guarantee():
    for seed in range(40):
        r = random.Random(seed)
        doc = _random_markdown(r)
        limit = r.choice([20, 50, 120, 400])
        overlap = r.choice([0, 5, limit // 4])
        blocks = markdown_blocks(doc) if seed % 3 else text_blocks(doc)
        result = chunk_blocks(doc, blocks, chunk_tokens=limit, overlap=overlap)
        covered = bytearray(len(doc))
        starts = []
        for c in result.chunks:
            assert doc[c.char_start:c.char_end] == c.text, seed
            assert c.text and c.text == c.text.strip(), seed
            assert c.n_tokens == count_tokens(c.text), seed
            if c.n_tokens > limit:  # only one code block or table (after its headings), or
                body = c.text  # a heading, may exceed
                while body.startswith("#") and "\n" in body:
                    body = body.split("\n", 1)[1].lstrip()
                assert body.startswith(("```", "|", "#")), (seed, c.text[:80])
            covered[c.char_start:c.char_end] = b"\x01" * (c.char_end - c.char_start)
            starts.append(c.char_start)
        assert starts == sorted(starts)
        for block in blocks:  # code and tables are never split: each lies in one chunk
            if block.kind in ("code", "table"):
                first = block.start + len(doc[block.start:block.end]) - len(
                    doc[block.start:block.end].lstrip())
                assert any(c.char_start <= first and block.end <= c.char_end
                           for c in result.chunks), (seed, doc[block.start:block.end][:80])
        missing = [i for i, ch in enumerate(doc) if not ch.isspace() and not covered[i]]
        assert not missing, seed
        total = count_tokens(doc)
        assert abs(result.n_tokens - total) <= 3 + total // 30


HANDBOOK = """# Northwind Handbook

Welcome to the handbook.

## Returns

Items can be returned within 45 days. A receipt is required unless the item was a gift.

### Restocking

A 10% restocking fee applies to opened electronics.

## Shipping

Standard shipping takes 5 days.
"""


def test_heading_path_and_sections():
    result = chunk_blocks(HANDBOOK, markdown_blocks(HANDBOOK), chunk_tokens=400, overlap=0)
    texts = [c.text for c in result.chunks]
    # The lone title merges into the first section (tiny), top-level sections are not crossed.
    assert len(texts) == 2
    assert texts[0].startswith("# Northwind Handbook") and "Restocking" in texts[0]
    assert "## Shipping" not in texts[0]
    assert texts[1].startswith("## Shipping")
    assert result.chunks[1].heading_path == ["Northwind Handbook", "Shipping"]
    assert result.chunks[0].heading_path == ["Northwind Handbook"]


def test_small_limit_never_ends_a_chunk_with_a_heading():
    result = chunk_blocks(HANDBOOK, markdown_blocks(HANDBOOK), chunk_tokens=20, overlap=0)
    for c in result.chunks:
        assert not c.text.splitlines()[-1].startswith("#"), c.text
    restock = next(c for c in result.chunks if "restocking fee" in c.text)
    assert restock.heading_path == ["Northwind Handbook", "Returns", "Restocking"]
    assert restock.text.startswith("### Restocking")


def test_code_fences_and_tables_are_never_split_and_keep_their_heading():
    """Issue 14, fault 6: an oversize fence or table is one chunk, whatever its size, with
    the heading right before it (never a chunk of its own), so the fence markers and the
    table's header row stay with every line of it."""
    rows = [f"| item {i} | {i * 3} kg | ships in {i % 5 + 1} days |" for i in range(200)]
    code = "\n".join(f"    call_{i}(argument_{i}, {i})" for i in range(300))
    doc = ("# Shipping\n\nIntro paragraph.\n\n## Rates\n\n| item | weight | time |\n|---|---|---|\n"
           + "\n".join(rows) + "\n\n## API\n\n```python\n" + code + "\n```\n\nAfter the code.\n")
    limit = 100
    result = chunk_blocks(doc, markdown_blocks(doc), chunk_tokens=limit, overlap=20)
    texts = [c.text for c in result.chunks]
    table = next(t for t in texts if "| item 0 |" in t)
    assert table.startswith("## Rates\n\n| item | weight | time |\n|---|---|---|")
    assert table.endswith("| item 199 | 597 kg | ships in 5 days |")
    fence = next(t for t in texts if "```python" in t)
    assert fence.startswith("## API\n\n```python") and fence.endswith("```")
    assert fence.count("```") == 2 and "call_299(" in fence
    assert not any(t.startswith("#") and "\n" not in t for t in texts)  # no lone heading
    assert "After the code." not in fence and "Intro" not in table
    for c in result.chunks:
        assert doc[c.char_start:c.char_end] == c.text
        assert c.n_tokens == count_tokens(c.text)
        if c.text not in (table, fence):
            assert c.n_tokens <= limit


def test_prose_splits_at_paragraphs_then_sentences_with_overlap():
    paragraphs = [" ".join(f"Sentence {p}.{s} talks about the return window." for s in range(6))
                  for p in range(8)]
    doc = "\n\n".join(paragraphs)
    result = chunk_blocks(doc, text_blocks(doc), chunk_tokens=120, overlap=30)
    chunks = result.chunks
    assert len(chunks) > 3
    for prev, cur in zip(chunks, chunks[1:]):
        assert cur.n_tokens <= 120
        if cur.char_start < prev.char_end:  # overlapping: repeated prose, within the budget
            shared = doc[cur.char_start:prev.char_end]
            assert count_tokens(shared) <= 30
            assert shared[0].isupper()  # starts at a sentence, not mid-word
    # paragraphs that fit are never cut
    for p in paragraphs:
        assert any(p in c.text for c in chunks)


def test_long_sentence_without_punctuation_is_cut_by_tokens():
    doc = " ".join(["word"] * 1000)
    result = chunk_blocks(doc, text_blocks(doc), chunk_tokens=100, overlap=0)
    assert len(result.chunks) >= 10
    assert all(c.n_tokens <= 100 for c in result.chunks)


def test_html_visible_text_only():
    page = """<!doctype html><html><head><title>Returns &amp; Refunds</title>
    <style>p { color: red }</style><script>alert("x")</script></head><body>
    <h1>Returns</h1><p>Return within <b>45</b>   days.<br>Keep the receipt.</p>
    <template><p>template text</p></template><div hidden>hidden text</div>
    <pre>code  stays
  as is</pre><table><tr><th>Tier</th><th>Fee</th></tr><tr><td>Gold</td><td>0</td></tr></table>
    <ul><li>one</li><li>two</li></ul></body></html>"""
    text, blocks, title = html_to_text(page)
    assert title == "Returns & Refunds"
    assert "alert" not in text and "color" not in text and "template text" not in text
    assert "hidden text" not in text
    assert "Return within 45 days.\nKeep the receipt." in text
    assert "code  stays\n  as is" in text
    assert "Tier | Fee\nGold | 0" in text
    assert "one\ntwo" in text
    kinds = [b.kind for b in blocks]
    assert kinds[0] == "heading" and "code" in kinds and "table" in kinds
    for b in blocks:
        assert text[b.start:b.end].strip() == text[b.start:b.end]


def test_language_detection():
    assert detect_language("Items can be returned within 45 days.") == "en"
    assert detect_language("退货政策：自购买之日起四十五天内可以退货，需要提供收据。") == "zh"
    assert detect_language("Gold 会员 可以 免费 快递 shipping 服务。会员卡 每年 续费。") == "zh"
    assert detect_language("```\nprint(1)\n```") == "en"
    assert detect_language("これは日本語のテキストです。") == "ja"
