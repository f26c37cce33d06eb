"""The shipped o200k_base encoding works with no network and matches tiktoken's own."""

from __future__ import annotations

import socket

import pytest

from builder.ingest import tokens


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)
    tokens.encoding.cache_clear()
    yield
    tokens.encoding.cache_clear()


def test_encoding_loads_offline_and_counts(no_network):
    enc = tokens.encoding()
    assert enc.name == "o200k_base"
    assert enc.n_vocab == 200019
    assert tokens.count_tokens("hello world") == 2
    assert tokens.count_tokens("") == 0
    text = "Gold members get free express shipping. 金卡会员免费快递。 <|endoftext|>"
    assert enc.decode(enc.encode_ordinary(text)) == text
    # special-token text counts as plain text instead of raising
    assert tokens.count_tokens("<|endoftext|>") > 1


def test_constants_match_installed_tiktoken(monkeypatch):
    from tiktoken_ext import openai_public

    ranks = tokens.load_mergeable_ranks()
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: ranks)
    spec = openai_public.o200k_base()
    assert spec["pat_str"] == tokens.PAT_STR
    assert spec["special_tokens"] == tokens.SPECIAL_TOKENS
    assert len(ranks) == 199998


def test_damaged_file_fails_loudly(monkeypatch):
    monkeypatch.setattr(tokens, "EXPECTED_SHA256", "0" * 64)
    with pytest.raises(RuntimeError, match="damaged"):
        tokens.load_mergeable_ranks()
