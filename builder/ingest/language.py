"""Cheap language detection: the share of CJK ideographs/kana among letters.

golden only needs to know which language to write questions in, so this is deliberately a
heuristic, not a classifier: text whose letters are at least 30 % Han ideographs (or kana) is
"zh" (or "ja" when kana dominate the CJK part), anything else "en". Long texts are sampled
(first 3,000 characters plus 3,000 from the middle) so the cost stays flat.
"""

from __future__ import annotations

import re

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_LETTER = re.compile(r"[^\W\d_]")
_SAMPLE = 3000
CJK_SHARE = 0.3


def detect_language(text: str) -> str:
    """Return "zh", "ja" or "en" (the default, also for text with no letters)."""
    if text.isascii():  # no CJK possible; a C-speed scan instead of three regex passes
        return "en"
    if len(text) > 2 * _SAMPLE:
        mid = len(text) // 2
        text = text[:_SAMPLE] + text[mid:mid + _SAMPLE]
    cjk = len(_CJK.findall(text))
    if not cjk:
        return "en"
    letters = len(_LETTER.findall(text))
    if cjk / max(letters, 1) < CJK_SHARE:
        return "en"
    return "ja" if len(_KANA.findall(text)) * 4 >= cjk else "zh"
