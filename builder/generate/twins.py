"""Sync and async twins of a code name: an API reference that documents `iter_bytes()` and
`aiter_bytes()`, `BaseTransport` and `AsyncBaseTransport`, answers "Which method streams the
response as bytes?" twice. A single-hop question whose answer is one twin must say which it
asks about (measured on the httpx docs: "Which class should you subclass to implement a
transport?" -> `httpx.BaseTransport` passed every other check, and so did three questions on
the async streaming methods that never said "async").

Twins are told apart by the async prefix only ("a", "async", "async_", "Async", "A" before a
capital): that is how Python, JavaScript and C# APIs name them. Other prefixes ("Mock",
"Http") name different things, and a question may tell those apart in its own words.
"""

from __future__ import annotations

import re

from builder.store.search import texts_containing
from builder.generate.terms import tokens

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# an async prefix and the name it qualifies: "aiter_bytes", "async_send", "AsyncClient", "ASend"
_ASYNC = re.compile(r"^(?:async_|a(?=[a-z_])|async(?=[a-z_])|Async(?=[A-Z])|A(?=[A-Z][a-z]))(?P<rest>\w{3,})$")
ASYNC_WORDS = frozenset({"async", "asynchronous", "asyncio", "await", "asíncrono", "asíncrona",
                         "asynchrone", "asynchron", "assíncrono", "asincrono", "异步", "非同期"})
SYNC_WORDS = frozenset({"sync", "synchronous", "blocking", "síncrono", "síncrona", "synchrone",
                        "synchron", "同步", "同期"})


def code_names(answer: str) -> list[str]:
    """The last part of each code-like name in an answer: `Response.aiter_bytes()` ->
    aiter_bytes, `httpx.BaseTransport` -> BaseTransport. Code-like: dotted, snake_case,
    camelCase or called; plain words are not."""
    out = []
    for m in _NAME.finditer(answer):
        whole = m.group(0)
        last = whole.rsplit(".", 1)[-1]
        called = answer[m.end():m.end() + 1] == "("
        if "." in whole or "_" in last.strip("_") or re.search(r"[a-z][A-Z]", last) or called:
            out.append(last)
    return list(dict.fromkeys(out))


def _as_code(name: str) -> re.Pattern:
    """`name` written as code in a text: in backticks, after a dot, or called."""
    n = re.escape(name)
    return re.compile(rf"(?:`|\.){n}(?![\w])|(?<![\w.]){n}(?:\(|`)")


def _in_kb(store, name: str) -> bool:
    pattern = _as_code(name)
    return any(pattern.search(t) for t in texts_containing(store, name))


def twin(store, name: str) -> tuple[str, str] | None:
    """("async", other) when `name` is the async twin of a name the KB also writes as code,
    ("sync", other) when the KB also has an async twin of it, None otherwise."""
    m = _ASYNC.match(name)
    if m and _in_kb(store, m.group("rest")):
        return "async", m.group("rest")
    prefixes = ("Async", "A") if name[:1].isupper() else ("a", "async_")
    for prefix in prefixes:
        other = prefix + name
        if _ASYNC.match(other) and _in_kb(store, other):
            return "sync", other
    return None


def says_which(question: str, side: str, name: str, evidence: str) -> bool:
    """Whether the question tells the twin `name` it asks about from the other one: an async
    twin needs an async word; a sync one a sync word, its own name ("... on the client" for
    `Client`), or the plain name of another twin pair its evidence holds ("... to use with
    `Client`" against `AsyncClient`)."""
    words = set(tokens(question))
    if side == "async":  # "async", "asynchronous", or an async name ("for an AsyncClient")
        return any(w in ASYNC_WORDS or w.startswith("async") for w in words)
    if words & SYNC_WORDS or name.casefold() in words:
        return True
    ev = set(tokens(evidence))
    return any("async" + w in ev or "async_" + w in ev for w in words if len(w) >= 3)
