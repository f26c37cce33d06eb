"""One rule for text on a terminal (builder.text.terminal): no control, bidi control or lone
surrogate is ever printed, in the glyph form (tables, reports, the review screen) or the escape
form (error lines)."""

from __future__ import annotations

import pytest

from builder.text.terminal import one_line, visible

HOSTILE = "①\x1b]0;pwned\x07②\x9b③\u202eevil\u2066④\udce9⑤\x7f"


@pytest.mark.parametrize("shown", [visible(HOSTILE), visible(HOSTILE, multiline=False),
                                   one_line(HOSTILE)])
def test_nothing_unsafe_is_printed_and_every_letter_stays(shown):
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or 0xD800 <= ord(c) < 0xE000
                   or c in "\u202e\u2066" for c in shown)
    shown.encode("utf-8")  # no lone surrogate left to fail on
    assert [c for c in shown if c in "①②③④⑤"] == list("①②③④⑤")


def test_glyphs_for_people_escapes_for_error_lines():
    assert visible("x\x1b[31m\u202ey") == "x\u241b[31m\u27e8U+202E\u27e9y"
    assert one_line("evil\n\x1b]0;x\x07\u202e.md") == "evil\\n\\x1b]0;x\\x07\\u202e.md"


def test_newlines_are_kept_or_marked_and_limit_cuts():
    assert visible("one\ntwo\tthree") == "one\ntwo    three"
    assert visible("one\r\ntwo", multiline=False) == "one \u23ce two"
    assert visible("abcdefgh", limit=5) == "abcd…" and visible("abc", limit=5) == "abc"
    assert visible(None) == "" and visible(42) == "42"
