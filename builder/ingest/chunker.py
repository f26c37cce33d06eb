"""Cut a document's blocks into token-bounded chunks that follow its headings.

Guarantees, for every chunk of a document with text `text`:
- `text[chunk.char_start:chunk.char_end] == chunk.text`, and the text neither starts nor ends
  with whitespace;
- `chunk.n_tokens == count_tokens(chunk.text)` (o200k_base), exactly;
- `chunk.n_tokens <= chunk_tokens`, except a chunk holding one oversize code block or table
  (with the headings right before it, if any, and nothing else), and a chunk that starts with
  a heading that is itself longer than the limit (headings are never split);
- chunks are in document order; consecutive chunks overlap only by whole trailing paragraphs
  or sentences of prose (never code, tables or headings), at most `overlap` tokens.

Rules, in order of preference:
1. Sections. A chunk never crosses a top-level heading (the shallowest heading level used at
   least twice in the document, so a lone `# Title` does not count) unless what it holds so
   far is tiny (under min(`chunk_tokens` // 8, 32) tokens, e.g. a title and one line). It also breaks
   at any deeper heading once it is half full. A chunk never ends with a heading: a heading
   that would end a chunk starts the next one.
2. Paragraphs, then lines, then sentences, then tokens. Blocks are packed whole; a paragraph
   larger than `chunk_tokens` is split between its lines, a line between its sentences, and a
   sentence (rare: no punctuation) at token boundaries.
3. Code fences and tables are never split, whatever their size: a piece of either would
   not be valid on its own (a fence without its closing marker, rows without the header row
   that names their columns), and `text[start:end] == chunk` rules out repeating the header.
   One that does not fit is a chunk of its own, whole, together with the headings right
   before it (a heading never makes a chunk on its own).

Cost: every character is encoded once, piece by piece. Pieces are cut at line starts, which
are always boundaries of tiktoken's pre-tokenizer (except before a line that starts with "/"),
so a chunk's token count is the sum of its pieces' counts, adjusted by re-encoding only its
first and last piece. Where that does not hold (pieces cut mid-line), the chunk is re-encoded.
The document's own token count is the sum over its pieces: exact when every cut is at a line
start, otherwise off by at most a token or so per mid-line cut.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

from builder.ingest.blocks import Block
from builder.ingest.tokens import encoding

_PROSE = {"paragraph", "line", "sentence", "piece"}
# Chunk boundaries between sentences, not the sentences golden reads facts and claims from
# (`builder.text.sentences`): a cut here only has to keep a chunk readable and its token count
# exact, so ";" and ":" end a piece too and no abbreviation is consulted. Where the overlap
# may start: after the punctuation and the whitespace that follows it.
_SENTENCE_END = re.compile(r"[.!?;:][\"'”’)\]]*\s+|[。！？；]+[”’」』）)]*\s*")
# Where to cut between sentences: right after the closing punctuation. Before a space or tab
# that is a pre-tokenizer boundary (the space starts the next pre-token), so counts still add
# up; after CJK punctuation with no space it is not (the mark joins the next word).
_SENTENCE_CUT = re.compile(r"[.!?;:][\"'”’)\]]*(?=\s)|[。！？；]+[”’」』）)]*(?=\S)")
_LAST_SPACE = re.compile(r"(?<=\S)[ \t]\S*\s*\Z")
_WINDOW_CHARS = 100_000  # a huge span is encoded this many characters at a time


@dataclass(slots=True)
class Chunk:
    text: str
    char_start: int
    char_end: int
    n_tokens: int
    heading_path: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Unit:
    start: int  # span start: the chunk-able text is text[start:end], whitespace included
    end: int  # = next unit's start (or the end of the text)
    content_start: int
    content_end: int
    tokens: int  # tokens of text[start:end]
    kind: str  # heading | paragraph | line | sentence | piece | code | table
    path: tuple[str, ...]
    safe: bool  # `start` is a pre-tokenizer boundary, so counts add up across it
    solo: bool = False  # oversize code/table: a chunk of its own (with its headings)
    top: bool = False  # a heading at or above the document's top level


@dataclass(slots=True)
class Chunking:
    chunks: list[Chunk]
    n_tokens: int  # tokens of the whole text (summed over its pieces; see the module docstring)


def chunk_blocks(text: str, blocks: list[Block], *, chunk_tokens: int = 400,
                 overlap: int = 50) -> Chunking:
    """Chunks of one document (see the module docstring for the rules and guarantees)."""
    if chunk_tokens < 1 or overlap < 0 or overlap >= chunk_tokens:
        raise ValueError("need chunk_tokens >= 1 and 0 <= overlap < chunk_tokens")
    if not blocks:
        return Chunking([], 0)
    units = _units(text, blocks, chunk_tokens)
    n_tokens = sum(u.tokens for u in units)
    return Chunking(_Packer(text, units, chunk_tokens, overlap).run(), n_tokens)


# -- units ----------------------------------------------------------------------------------

def _top_level(blocks: list[Block]) -> int:
    counts: dict[int, int] = {}
    for b in blocks:
        if b.kind == "heading":
            counts[b.level] = counts.get(b.level, 0) + 1
    repeated = [level for level, n in counts.items() if n >= 2]
    if repeated:
        return min(repeated)
    return min(counts) if counts else 0


def _units(text: str, blocks: list[Block], limit: int) -> list[_Unit]:
    """Blocks as spans that tile the text, oversize ones pre-split; each encoded once."""
    top = _top_level(blocks)
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    pieces: list[tuple[int, int, str, tuple[str, ...], bool]] = []  # start, content_end, ...
    for b in blocks:
        if b.kind == "heading":
            while stack and stack[-1][0] >= b.level:
                stack.pop()
            stack.append((b.level, b.heading))
            path = tuple(h for _, h in stack)
            pieces.append((b.start, b.end, "heading", path, b.level <= top))
        else:
            pieces.append((b.start, b.end, b.kind, path, False))

    units: list[_Unit] = []
    n = len(pieces)
    for idx, (start, content_end, kind, upath, is_top) in enumerate(pieces):
        span_start = 0 if idx == 0 else start
        span_end = pieces[idx + 1][0] if idx + 1 < n else len(text)
        tokens = _count_span(text, span_start, span_end)
        unit = _Unit(span_start, span_end, _skip_space(text, span_start, content_end),
                     content_end, tokens, kind, upath, _safe(text, span_start), top=is_top)
        if kind == "heading" or tokens <= limit:
            units.append(unit)
        elif kind in ("code", "table"):
            unit.solo = True
            units.append(unit)
        else:
            units.extend(_split_prose(text, unit, limit))
    return units


def _rstrip(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def _skip_space(text: str, pos: int, end: int) -> int:
    while pos < end and text[pos].isspace():
        pos += 1
    return pos


def _safe(text: str, pos: int) -> bool:
    """True when tiktoken's pre-tokenizer always splits at `pos` (a line start not before '/')."""
    return pos == 0 or (text[pos - 1] == "\n" and text[pos] != "/")


def _sub_unit(text: str, parent: _Unit, start: int, end: int, content_end: int, kind: str,
              safe: bool, tokens: int | None = None) -> _Unit:
    if tokens is None:
        tokens = len(encoding().encode_ordinary(text[start:end]))
    return _Unit(start, end, _skip_space(text, start, content_end), content_end, tokens, kind,
                 parent.path, safe)


def _line_starts(text: str, unit: _Unit) -> list[int]:
    starts = [unit.start]
    pos = text.find("\n", unit.content_start, unit.content_end)
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1, unit.content_end)
    return starts


def _split_lines(text: str, unit: _Unit, limit: int) -> list[_Unit]:
    """Split prose at line starts: one unit per line, each split further if still too large."""
    starts = _line_starts(text, unit)
    kept = []
    for k, start in enumerate(starts):
        stop = starts[k + 1] if k + 1 < len(starts) else unit.content_end
        if text[start:stop].strip():
            kept.append(start)  # blank lines stay with the line before them
    kept[0] = unit.start
    bounds = kept + [unit.end]
    lines = []
    for k in range(len(kept)):
        start, end = bounds[k], bounds[k + 1]
        content_end = _rstrip(text, start, min(end, unit.content_end))
        lines.append(_sub_unit(text, unit, start, end, content_end, "line",
                               unit.safe if k == 0 else _safe(text, start)))
    out: list[_Unit] = []
    for line in lines:
        if line.tokens > limit:
            out.extend(_split_sentences(text, line, limit))
        else:
            out.append(line)
    return out


def _split_prose(text: str, unit: _Unit, limit: int) -> list[_Unit]:
    if text.find("\n", unit.content_start, unit.content_end) != -1:
        return _split_lines(text, unit, limit)
    return _split_sentences(text, unit, limit)


def _sentence_starts(text: str, start: int, end: int) -> list[int]:
    """Offsets in text[start:end] where a sentence begins (after its predecessor's space)."""
    return [m.end() for m in _SENTENCE_END.finditer(text, start, end) if m.end() < end]


def _split_sentences(text: str, unit: _Unit, limit: int) -> list[_Unit]:
    starts = [unit.start] + [m.end() for m in _SENTENCE_CUT.finditer(
        text, unit.content_start, unit.content_end) if m.end() < unit.content_end]
    bounds = starts + [unit.end]
    out: list[_Unit] = []
    for k in range(len(starts)):
        start, end = bounds[k], bounds[k + 1]
        content_end = _rstrip(text, start, min(end, unit.content_end))
        sent = _sub_unit(text, unit, start, end, content_end, "sentence",
                         unit.safe if k == 0 else text[start] in " \t",
                         unit.tokens if len(starts) == 1 else None)
        out.extend(_split_tokens(text, sent, limit) if sent.tokens > limit else [sent])
    return out


def _window(step: int) -> int:
    return max(_WINDOW_CHARS, 300 * step)


def _token_cuts(span: str, step: int) -> list[int]:
    """0, then the character position after every `step` tokens of `span`, then len(span).

    Linear in the span: it is encoded window by window (tiktoken slows down more than
    linearly on one huge piece without spaces, such as CJK text), each window restarting at
    the last cut, so no token straddles a window's end; and the character position of each
    cut is counted incrementally (the decoder holds back the bytes of a character split
    between two steps, so a cut inside a character falls before it)."""
    enc = encoding()
    cuts = [0]
    window = _window(step)
    while cuts[-1] < len(span):
        start = cuts[-1]
        end = min(len(span), start + window)
        tokens = enc.encode_ordinary(span[start:end])
        decoder = codecs.getincrementaldecoder("utf-8")()
        char_pos = start
        groups = range(0, len(tokens), step)
        for a in groups:
            if end < len(span) and a + step >= len(tokens):
                break  # the window's last group may end in a cut token: the next window redoes it
            char_pos += len(decoder.decode(enc.decode_bytes(tokens[a:a + step])))
            if cuts[-1] < char_pos < len(span):
                cuts.append(char_pos)
        if cuts[-1] == start:  # no whole group in this window (very long tokens): cut at its end
            cuts.append(end)
    if cuts[-1] != len(span):
        cuts.append(len(span))
    return cuts


def _count_span(text: str, start: int, end: int) -> int:
    """Tokens of text[start:end], encoded in windows if it is huge (linear time; across a
    window's edge the count can be off by a token, as for any mid-line cut)."""
    encode = encoding().encode_ordinary
    if end - start <= _WINDOW_CHARS:
        return len(encode(text[start:end]))
    return sum(len(encode(text[k:min(end, k + _WINDOW_CHARS)]))
               for k in range(start, end, _WINDOW_CHARS))


def _split_tokens(text: str, unit: _Unit, limit: int, step: int | None = None) -> list[_Unit]:
    """Last resort: cut every `step` tokens (moved back to a character boundary). A piece
    re-encoded on its own can need a token more than its slice, so an overfull piece is cut
    again with a smaller step."""
    enc = encoding()
    step = step or limit
    span = text[unit.start:unit.end]
    cuts = _token_cuts(span, step)
    k = 1
    while k < len(cuts) - 1:  # no piece may be only whitespace: merge it with the next one
        if span[cuts[k - 1]:cuts[k]].strip():
            k += 1
        else:
            del cuts[k]
    if len(cuts) > 2 and not span[cuts[-2]:].strip():
        del cuts[-2]
    out: list[_Unit] = []
    for k in range(len(cuts) - 1):
        start, end = unit.start + cuts[k], unit.start + cuts[k + 1]
        content_end = _rstrip(text, start, min(end, unit.content_end))
        piece = _sub_unit(text, unit, start, end, content_end, "piece",
                          unit.safe if k == 0 else False)
        excess = len(enc.encode_ordinary(text[piece.content_start:content_end])) - limit
        if excess > 0 and step > 1:
            out.extend(_split_tokens(text, piece, limit, max(1, step - excess - 1)))
        else:
            out.append(piece)
    return out


# -- packing --------------------------------------------------------------------------------

class _Packer:
    def __init__(self, text: str, units: list[_Unit], limit: int, overlap: int):
        self.text = text
        self.units = units
        self.limit = limit
        self.overlap = overlap
        self.tiny = max(1, min(limit // 8, 32))
        self.chunks: list[Chunk] = []
        self._encode = encoding().encode_ordinary
        # Span counts asked for more than once: the overlap's count is asked again when the
        # next chunk closes (its head), so each is encoded once.
        self._counts: dict[tuple[int, int], int] = {}

    def _count(self, start: int, end: int) -> int:
        key = (start, end)
        n = self._counts.get(key)
        if n is None:
            n = self._counts[key] = len(self._encode(self.text[start:end]))
        return n

    def run(self) -> list[Chunk]:
        units = self.units
        cur: list[int] = []  # unit indices of the open chunk
        cur_start = 0  # char start of the open chunk (may be inside its first unit)
        cur_tokens = 0  # running estimate: first unit from cur_start + whole others
        i = 0
        while i < len(units):
            u = units[i]
            if cur:
                reason = None
                if u.kind == "heading" and (
                        (u.top and cur_tokens >= self.tiny) or cur_tokens >= self.limit // 2):
                    reason = "section"
                elif u.solo or units[cur[-1]].solo or cur_tokens + u.tokens > self.limit:
                    reason = "size"
                if reason:
                    carried = self._trailing_headings(cur) if reason == "size" else []
                    keep = cur[:len(cur) - len(carried)]
                    if keep:
                        nxt = self._emit(keep, cur_start)
                        if nxt <= keep[-1]:  # exact count overflowed: re-pack from there
                            i, cur, cur_tokens = nxt, [], 0
                            continue
                        if carried:
                            cur = carried
                            cur_start = units[carried[0]].content_start
                            cur_tokens = sum(units[k].tokens for k in carried)
                        elif reason == "size" and not u.solo:
                            cur, cur_start, cur_tokens = self._overlap(
                                keep, cur_start, min(self.overlap, self.limit - u.tokens))
                        else:
                            cur, cur_tokens = [], 0
            if cur and u.kind in _PROSE and cur_tokens + u.tokens > self.limit and all(
                    units[k].kind == "heading" for k in cur):
                # Headings must not end up alone: split the prose after them to fit.
                parts = _split_prose(self.text, u, max(1, self.limit - cur_tokens))
                if len(parts) > 1:
                    units[i:i + 1] = parts
                    continue
            if not cur and u.kind in _PROSE and u.tokens >= self.limit - 3 and self._count(
                    u.content_start, u.content_end) > self.limit:
                # Alone it still overflows (e.g. " Summit" is one token, "Summit" two).
                units[i:i + 1] = _split_tokens(self.text, u, self.limit)
                u = units[i]
            if not cur:
                cur_start = u.content_start
                cur_tokens = u.tokens if u.content_start == u.start else self._count(
                    u.content_start, u.end)
            else:
                cur_tokens += u.tokens
            cur.append(i)
            i += 1
        while cur:
            nxt = self._emit(cur, cur_start)
            if nxt > cur[-1]:
                break
            cur = [k for k in cur if k >= nxt]
            cur_start = units[cur[0]].content_start
        return self.chunks

    def _trailing_headings(self, cur: list[int]) -> list[int]:
        k = len(cur)
        while k > 0 and self.units[cur[k - 1]].kind == "heading":
            k -= 1
        return cur[k:]

    def _exact_tokens(self, idx: list[int], start: int) -> int:
        units = self.units
        first, last = units[idx[0]], units[idx[-1]]
        end = last.content_end
        if len(idx) == 1 or not all(units[k].safe for k in idx[1:]):
            return self._count(start, end)
        head = first.tokens if start == first.start else self._count(start, first.end)
        middle = sum(units[k].tokens for k in idx[1:-1])
        return head + middle + self._without_trailing_space(last)

    def _without_trailing_space(self, unit: _Unit) -> int:
        """Tokens of text[unit.start:unit.content_end], re-encoding only the last word: the
        position before the last space of a line is a pre-tokenizer boundary."""
        if unit.content_end == unit.end:
            return unit.tokens
        text = self.text
        m = _LAST_SPACE.search(text, max(unit.start, unit.content_end - 200), unit.end)
        if m is None or m.start() <= unit.start or "\n" in text[m.start():unit.content_end]:
            return self._count(unit.start, unit.content_end)
        cut = m.start()
        return unit.tokens - self._count(cut, unit.end) + self._count(cut, unit.content_end)

    def _emit(self, idx: list[int], start: int) -> int:
        """Close a chunk over units `idx`; returns the index of the next unit to pack (less
        than idx[-1] + 1 when the exact count overflowed and trailing units were handed back)."""
        units = self.units
        while True:
            tokens = self._exact_tokens(idx, start)
            if tokens <= self.limit or len(idx) == 1 or (
                    units[idx[-1]].solo and all(units[k].kind == "heading" for k in idx[:-1])):
                break  # (an oversize code block or table keeps the headings before it)
            idx = idx[:-1]  # summed estimate was off at a mid-line cut: hand the last unit back
        end = units[idx[-1]].content_end
        path = next((units[k].path for k in idx if units[k].kind != "heading"),
                    units[idx[0]].path)
        self.chunks.append(Chunk(self.text[start:end], start, end, tokens, list(path)))
        return idx[-1] + 1

    def _overlap(self, prev: list[int], prev_start: int,
                 budget: int) -> tuple[list[int], int, int]:
        """Start of the next chunk: trailing prose of the previous one, up to `budget` tokens
        (the overlap, less whatever the next unit needs to fit)."""
        units = self.units
        if budget <= 0 or units[prev[-1]].kind not in _PROSE:
            return [], 0, 0
        k = len(prev) - 1
        total = 0
        while k >= 1 and units[prev[k]].kind in _PROSE \
                and total + units[prev[k]].tokens <= budget:
            total += units[prev[k]].tokens
            k -= 1
        if k < len(prev) - 1:  # whole trailing units fit
            taken = prev[k + 1:]
            first = units[taken[0]]
            return taken, first.content_start, total
        last = units[prev[-1]]
        floor = max(last.content_start, prev_start)
        best = None
        for s in reversed(_sentence_starts(self.text, floor, last.content_end)):
            if s <= floor:
                break
            if self._count(s, last.end) > budget:
                break
            best = s
        if best is None:
            return [], 0, 0
        return [prev[-1]], best, self._count(best, last.end)
