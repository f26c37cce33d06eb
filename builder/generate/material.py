"""Stage 4, the material: code decides what each evolved question is about; the LLM only
phrases it. Measured with the embedded 0.5B and 1.5B models on plain prompts, 0 of 5 usable
items each for multi-hop, unanswerable, ambiguous and temporal: asked for "a multi-hop
question" they write single-hop ones, "unanswerable" ones the chunk answers, and temporal
answers that use the old rule; with code choosing the facts, 4 of 5 temporal questions from the
1.5B were usable.

Pairs are always of facts in one language (measured: a Chinese question over an English table
and a Chinese chunk passed as "multi-hop" though one chunk answered it). Every picker returns
`Material`: the facts in hop order, the prompt variables and a key that
identifies the material (its evolve stage key is a hash of it). Rules, all lexical and
deterministic:

- reasoning: a fact that sets one numeric limit ("up to 5 days", "at least 4 weeks"), with a
  situation on one side of it and the outcome, both chosen by code (limits.py).
- multi_hop: two facts in different chunks (different documents first) that share an entity;
  shared entities come from the facts' entity lists and from FTS5 searches for each entity.
  Hop 1 is the fact that identifies the bridge, hop 2 the fact with the answer value.
- comparative and ambiguous never pair two versions of one document (`_versions`).
- comparative: two facts whose values carry the same unit ("5 days" / "2 days", "$10" / "$30")
  and whose wording overlaps (attribute terms Jaccard >= 0.3: both are prices, both are
  durations), about different entities, with different values.
- temporal: two facts in different chunks with highly overlapping wording (attribute terms
  Jaccard >= 0.5), the same entity (or >= 0.6 overlap), different values, and dates that order
  them (the fact's own date, else its chunk's, else its document's). Hops: NEWER FIRST -- the
  newer chunk holds the reference answer, the older one is cited as the superseded statement.
- unanswerable: not here; proposed in one batch per round by unanswerable.py.
- ambiguous: two facts about different entities whose wording overlaps (shared attribute terms)
  with different values; the shared term (the entities' common head noun when they have one,
  e.g. "plan" for "Basic plan"/"Pro plan") is what the underspecified question uses.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import combinations

from builder.store.search import search_chunks

from builder.generate.limits import limits, scenario

from builder.generate.terms import (
    date_order_key, dates, jaccard, key_terms, numbers, value_units, without_dates,
)

CONDITION_CUES = re.compile(
    r"\b(if|unless|within|after|before|at least|at most|up to|more than|less than|over|under|"
    r"only|except|per|each|every|minimum|maximum|until|or more|or less)\b"
    r"|如果|除非|以内|之内|超过|至少|最多|每|不超过|以上|以下", re.I)


@dataclass
class Material:
    type: str
    facts: list[dict]                       # hop order
    variables: dict[str, object]           # prompt variables; lists become `--- list` text
    key: tuple
    info: dict = field(default_factory=dict)

    @property
    def document_id(self) -> str:
        return self.facts[0]["document_id"]

    @property
    def language(self) -> str:
        return self.facts[0].get("chunk_language") or self.facts[0].get("language") or "en"


def annotate(facts: list[dict], chunks: dict[str, dict]) -> list[dict]:
    """Add the derived fields the pickers use (keys starting with '_'); returns `facts`."""
    doc_dates: dict[str, list[str]] = defaultdict(list)
    chunk_dates: dict[str, list[str]] = {}
    for cid, chunk in chunks.items():
        found = [d for d in dates(chunk["text"] + " " + (chunk.get("title") or ""))
                 if not d.startswith("v")]
        chunk_dates[cid] = found
        doc_dates[chunk["document_id"]].extend(found)
    for f in facts:
        f["_terms"] = key_terms(f["text"]) | key_terms(f["evidence"])
        f["_vals"] = numbers(without_dates(f["evidence"]))
        f["_units"] = value_units(f["evidence"])
        names = [n for n in f.get("entities") or [] if key_terms(n)]
        f["_names"] = {n.casefold() for n in names}
        f["_name_list"] = names
        ent_terms = set().union(*(key_terms(n) for n in names)) if names else set()
        f["_ent_terms"] = ent_terms
        f["_attr"] = {t for t in f["_terms"] - ent_terms if not t.isdigit()}
        own = [d for d in (f.get("dates") or []) if not d.startswith("v")
               and date_order_key(d)[0] == 0]
        pool = own or chunk_dates.get(f["chunk_id"]) or doc_dates.get(f["document_id"]) or []
        f["_when"] = max(pool, key=date_order_key) if pool else None
        f["_cond"] = bool(CONDITION_CUES.search(f["text"]) or CONDITION_CUES.search(f["evidence"]))
        f["_lang"] = (f.get("chunk_language") or f.get("language") or "en").split("-")[0]
    return facts


_VERSION_NOISE = re.compile(r"(?:19|20)\d{2}(?:[-_.]\d{1,2}){0,2}|\bv?\d+(?:\.\d+)*\b|[-_. ]+")


def _version_key(document_id: str) -> tuple[str, bool]:
    """(file stem without dates, years and version numbers, whether the path carries a year)."""
    stem = document_id.rsplit("/", 1)[-1].rsplit(".", 1)[0].casefold()
    return _VERSION_NOISE.sub("", stem), bool(re.search(r"(?:19|20)\d{2}", stem))


def superseded_chunks(chunks: dict[str, dict]) -> set[str]:
    """Ids of the chunks of documents that a newer version supersedes: documents whose file
    names differ only by a date or version, one of them carrying a year (returns-2023.md and
    returns.md), each dated by the newest date it states; all but the newest are superseded.
    Same-named files in different folders without a year are not versions (a Sync and a
    Publish "Security" page). Depends on the chunks only, so verification can use it before
    any fact of a run is loaded."""
    docs: dict[str, list[dict]] = defaultdict(list)
    for chunk in chunks.values():
        docs[chunk["document_id"]].append(chunk)
    groups: dict[str, list[str]] = defaultdict(list)
    for doc in docs:
        groups[_version_key(doc)[0]].append(doc)
    old_docs: set[str] = set()
    for members in groups.values():
        members = sorted(members)
        if len(members) < 2 or not any(_version_key(d)[1] for d in members):
            continue
        when = {}
        for doc in members:
            found = [d for c in docs[doc] for d in dates(c["text"] + " " + doc)
                     if not d.startswith("v")]
            if found:
                when[doc] = max(found, key=date_order_key)
        if len(when) == len(members) and len(set(when.values())) == len(members):
            newest = max(members, key=lambda d: date_order_key(when[d]))
            old_docs.update(d for d in members if d != newest)
    return {c["id"] for doc in old_docs for c in docs[doc]}


def stale_facts(facts: list[dict], chunks: dict[str, dict], old_chunks: set[str]) -> set[str]:
    """Ids of the facts a newer statement supersedes: the older fact of every temporal pair,
    and every fact of a superseded document (`superseded_chunks`). Stale facts are material
    for temporal items only: asked as a plain single-hop item, "What is the return window?"
    would be answered with the superseded value (seen on a KB holding a 2022 and a 2024
    policy)."""
    annotate(facts, chunks)
    stale = {m.facts[1]["id"] for m in pick_temporal(facts)}
    return stale | {f["id"] for f in facts if f["chunk_id"] in old_chunks}


def spread(materials: list[Material], seed: int) -> list[Material]:
    """Seeded shuffle, then round-robin over documents so no document comes first every time."""
    rng = random.Random(seed)
    items = sorted(materials, key=lambda m: m.key)
    rng.shuffle(items)
    by_doc: dict[str, list[Material]] = defaultdict(list)
    for m in items:
        by_doc[m.document_id].append(m)
    out: list[Material] = []
    queues = [by_doc[d] for d in sorted(by_doc)]
    rng.shuffle(queues)
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def _pairs_by_terms(facts: list[dict], min_shared: int) -> set[tuple[int, int]]:
    """Index pairs of facts sharing at least `min_shared` attribute terms (blocking step)."""
    index: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(facts):
        for t in f["_attr"]:
            index[t].append(i)
    shared: Counter = Counter()
    limit = max(50, len(facts) // 5)  # very common words block nothing
    for members in index.values():
        if len(members) > limit:
            continue
        for a, b in combinations(members, 2):
            shared[(a, b)] += 1
    return {p for p, n in shared.items() if n >= min_shared}


def _versions(a: dict, b: dict) -> bool:
    """Two facts from different documents under the same title and section: two versions of
    one document (returns.md and returns-2023.md). Their differences are temporal conflicts,
    not two things to compare or two readings of a term (measured: an "ambiguous" item that
    paired the old 60-day and the new 90-day store-credit rule)."""
    return (a["document_id"] != b["document_id"] and bool(a.get("title"))
            and a.get("title") == b.get("title"))


def _fmt(f: dict) -> str:
    return f["text"]


def pick_reasoning(facts: list[dict]) -> list[Material]:
    """Facts that set exactly one numeric limit ("up to a maximum of 5 days", "at least 4
    weeks' notice"), each with a situation code picked a little inside or outside it and the
    outcome code computed (limits.py). A fact with two limits ("requests of more than 2 days
    need at least 4 weeks' notice") is left out: which one the rule is about is not code's to
    guess."""
    out = []
    for f in facts:
        found = limits(f["text"])
        if len(found) != 1 or f["_lang"] in ("zh", "ja", "ko"):
            continue
        limit = found[0]
        value, holds = scenario(limit, f["id"])
        out.append(Material("reasoning", [f], {"fact": _fmt(f), "situation": limit.say(value)},
                            ("r", f["id"]), {"holds": holds, "value": str(value)}))
    return out


def _facts_by_name(facts: list[dict]) -> tuple[dict[str, list[dict]], dict[str, str]]:
    """Facts grouped by the entity names they mention (case-folded), and each name's first
    spelling for display."""
    by_name: dict[str, list[dict]] = defaultdict(list)
    display: dict[str, str] = {}
    for f in facts:
        for n in f["_name_list"]:
            by_name[n.casefold()].append(f)
            display.setdefault(n.casefold(), n)
    return by_name, display


def pick_multi_hop(facts: list[dict], store=None) -> list[Material]:
    by_name, display = _facts_by_name(facts)
    if store is not None:  # chunks that mention the entity though their facts do not list it
        by_chunk: dict[str, list[dict]] = defaultdict(list)
        for f in facts:
            by_chunk[f["chunk_id"]].append(f)
        for name in list(by_name):
            terms = key_terms(name)
            for hit in search_chunks(store, display[name], k=5):
                for f in by_chunk.get(hit["id"], []):
                    if terms <= f["_terms"] and f not in by_name[name]:
                        by_name[name].append(f)
    n_chunks = len({f["chunk_id"] for f in facts})
    out: dict[tuple, Material] = {}
    for name, members in sorted(by_name.items()):
        if len({f["chunk_id"] for f in members}) < 2:
            continue
        if n_chunks >= 8 and len({f["chunk_id"] for f in members}) > max(3, n_chunks * 0.3):
            continue  # "customers" links everything, and so bridges nothing
        bridge_terms = key_terms(name)
        for a in members:
            for b in members:
                if a["chunk_id"] == b["chunk_id"] or not (b["_vals"] or b.get("dates")) \
                        or a["_lang"] != b["_lang"]:
                    continue
                if not (a["_attr"] - bridge_terms) or not (b["_attr"] - bridge_terms):
                    continue
                if jaccard(a["_attr"], b["_attr"]) >= 0.5:
                    continue  # two statements of one attribute: a conflict, not a bridge
                key = ("m", a["id"], b["id"])
                if key in out:
                    continue
                cross_doc = a["document_id"] != b["document_id"]
                out[key] = Material(
                    "multi_hop", [a, b],
                    {"bridge": display[name], "fact_a": _fmt(a), "fact_b": _fmt(b)},
                    key, {"bridge": display[name], "cross_document": cross_doc})
    # different documents first (stable within each group; spread() reorders by seed later)
    return sorted(out.values(), key=lambda m: not m.info["cross_document"])


def _named(f: dict) -> bool:
    """The fact is about a named thing: a name with letters ("Gold membership", "Sync Plus"),
    not a bare number or code such as a table's "4" or "TPM4", that is what the statement is
    about -- a table cell's row, or a name in the statement's first half ("The Gold membership
    costs ..."), not one mentioned in passing at its end ('... with your "Head of"')."""
    if f.get("cell"):
        return bool(re.search(r"[^\W\d_]{3,}", f["cell"]["entity"]))
    head = key_terms(f["text"][: max(1, len(f["text"]) // 2)])
    return any(re.search(r"[^\W\d_]{3,}", n) and not re.fullmatch(r"[A-Z]+\d+", n)
               and key_terms(n) & head for n in f["_name_list"])


def _links(f: dict) -> bool:
    """The fact's evidence is mostly a link (a navigation table's "[TPM4 - ...](#tpm4)")."""
    return bool(re.fullmatch(r"\s*!?\[[^\]]*\]\([^)]*\)\s*", f["evidence"]))


def pick_comparative(facts: list[dict]) -> list[Material]:
    by_unit: dict[str, list[dict]] = defaultdict(list)
    for f in facts:
        for u in f["_units"]:
            by_unit[u].append(f)
    out: dict[tuple, Material] = {}
    for unit, members in sorted(by_unit.items()):
        for a, b in combinations(members, 2):
            if a["_vals"] == b["_vals"] or not a["_vals"] or not b["_vals"] or a["_lang"] != b["_lang"] \
                    or _versions(a, b):
                continue
            if a["_names"] & b["_names"] or a["id"] == b["id"] or not _named(a) or not _named(b):
                continue  # two things to compare, each with a name the question can use
            if jaccard(a["_attr"], b["_attr"]) < 0.3:
                continue  # "a 5% fee" and "a 10% discount" share a unit, not a kind
            a, b = sorted((a, b), key=lambda f: f["id"])
            key = ("c", a["id"], b["id"])
            out.setdefault(key, Material("comparative", [a, b],
                                         {"fact_a": _fmt(a), "fact_b": _fmt(b)}, key, {"unit": unit}))
    return list(out.values())


def pick_temporal(facts: list[dict]) -> list[Material]:
    out = []
    for i, j in sorted(_pairs_by_terms(facts, 2)):
        a, b = facts[i], facts[j]
        if a["chunk_id"] == b["chunk_id"] or not a["_when"] or not b["_when"] \
                or a["_lang"] != b["_lang"]:
            continue
        if a["_when"] == b["_when"] or not a["_vals"] or not b["_vals"] or a["_vals"] == b["_vals"]:
            continue
        overlap = jaccard(a["_attr"], b["_attr"])
        if overlap < 0.5 or not (a["_names"] & b["_names"] or overlap >= 0.6):
            continue
        newer, older = (a, b) if date_order_key(a["_when"]) > date_order_key(b["_when"]) else (b, a)
        out.append(Material(
            "temporal", [newer, older],
            {"older_fact": _fmt(older), "older_date": older["_when"],
             "newer_fact": _fmt(newer), "newer_date": newer["_when"]},
            ("t", newer["id"], older["id"]),
            {"newer_values": sorted(newer["_vals"] - older["_vals"])}))
    return out


def pick_ambiguous(facts: list[dict]) -> list[Material]:
    out = []
    for i, j in sorted(_pairs_by_terms(facts, 1)):
        a, b = facts[i], facts[j]
        if not _named(a) or not _named(b) or a["_names"] & b["_names"] \
                or a["_lang"] != b["_lang"] or _versions(a, b) or _links(a) or _links(b):
            continue
        if not a["_vals"] or not b["_vals"] or a["_vals"] == b["_vals"]:
            continue
        if a["_units"] and b["_units"] and not a["_units"] & b["_units"]:
            continue  # "$10" vs "5 days" is not one term read two ways
        if jaccard(a["_attr"], b["_attr"]) < 0.3:
            continue
        head = a["_ent_terms"] & b["_ent_terms"]
        shared = sorted(a["_attr"] & b["_attr"])
        term = " ".join(sorted(head)) if head else (shared[0] if shared else "")
        if not term:
            continue
        out.append(Material(
            "ambiguous", [a, b],
            {"term": term, "entity_a": a["_name_list"][0], "entity_b": b["_name_list"][0],
             "fact_a": _fmt(a), "fact_b": _fmt(b)},
            ("a", a["id"], b["id"]), {"term": term}))
    return out


def pick_all(facts: list[dict], store, seed: int,
             kinds: set[str] | None = None) -> dict[str, list[Material]]:
    """Every evolution's material (for `kinds`, default all), each list in seeded,
    document-spread order."""
    kinds = kinds or {"reasoning", "multi_hop", "comparative", "temporal", "ambiguous"}
    pickers = {
        "reasoning": lambda: pick_reasoning(facts),
        "multi_hop": lambda: pick_multi_hop(facts, store),
        "comparative": lambda: pick_comparative(facts),
        "temporal": lambda: pick_temporal(facts),
        "ambiguous": lambda: pick_ambiguous(facts),
    }
    picks = {kind: pick() for kind, pick in pickers.items() if kind in kinds}
    out = {}
    for kind, items in picks.items():
        if kind == "multi_hop":  # keep cross-document bridges ahead of same-document ones
            cross = [m for m in items if m.info["cross_document"]]
            same = [m for m in items if not m.info["cross_document"]]
            out[kind] = spread(cross, seed) + spread(same, seed)
        else:
            out[kind] = spread(items, seed)
    return out
