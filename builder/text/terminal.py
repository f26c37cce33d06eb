"""Untrusted text (file names, knowledge-base text, LLM output, annotator names) made safe to
print: one rule for which characters never reach a terminal, two ways to show them.

Unsafe: C0 controls (ESC starts an escape sequence), DEL, C1 controls (U+009B is a one-byte
CSI on some terminals), the bidirectional marks, embeddings, overrides and isolates (they
reorder what a reader sees: "Trojan Source"), and lone surrogates (a file name that is not
UTF-8; printing one raises UnicodeEncodeError).

- `visible(text)`: each shown as a glyph (ESC -> '␛', U+202E -> '⟨U+202E⟩'), for text a person
  reads: tables, reports, the review screen. Newlines and tabs are kept, or with
  `multiline=False` shown as ' ⏎ ' and a space; `limit` cuts to that many characters ('…').
- `one_line(message)`: each shown as its Python escape (`\\x1b`, `\\n`, `\\udce9`), for error
  and warning lines, where a file name may have to be typed back exactly.

Neither interprets markup: a caller that hands the result to rich wraps it in `Text`.
"""

from __future__ import annotations

import re

# Bidi marks, embeddings/overrides and isolates.
_BIDI = (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_UNSAFE = (*range(0x20), 0x7F, *range(0x80, 0xA0), *_BIDI, *range(0xD800, 0xE000))
_ESCAPED = re.compile("[" + "".join(re.escape(chr(c)) for c in (*range(0x20), 0x7F))
                      + "\x80-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _glyph(code: int) -> str:
    if code < 0x20:
        return chr(0x2400 + code)          # ␀ .. ␟ (ESC -> ␛)
    if code == 0x7F:
        return "\u2421"                   # ␡
    return f"\u27e8U+{code:04X}\u27e9"    # ⟨U+009B⟩ for C1, bidi controls and surrogates


def _table(keep_newlines: bool) -> dict[int, str]:
    table = {c: _glyph(c) for c in _UNSAFE}
    if keep_newlines:
        del table[0x0A]
        table[0x09] = "    "
    else:
        table[0x0A] = " \u23ce "            # ⏎
        table[0x09] = " "
    return table


_MULTI = _table(True)
_SINGLE = _table(False)


def visible(text: object, *, multiline: bool = True, limit: int | None = None) -> str:
    """`text` (None reads as "") with every unsafe character shown as a glyph (see the module
    docstring); with `limit`, at most that many characters, the last one '…' when cut."""
    if text is None or text == "":
        return ""
    s = str(text)
    if not multiline:
        s = s.replace("\r\n", "\n")
    s = s.translate(_MULTI if multiline else _SINGLE)
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    return s


def one_line(message: str) -> str:
    """A message as one terminal line: newlines and every other unsafe character shown as its
    Python escape, never sent."""
    return _ESCAPED.sub(lambda m: repr(m.group())[1:-1], message)
