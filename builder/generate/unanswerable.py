"""Stage 4, the unanswerable kind: questions near the knowledge base's topics that it cannot
answer.

Three sources, in this order because code controls more of what is missing in the first:

1. **Invented sibling** (`evolve_unanswerable`). Code finds things of one kind that the KB lists
   with an attribute (table cells "Trailhead 2 — Seasons: 3", "Denver — Address: ..."; at least
   3 things per attribute), or the titles of the documents of one folder (the benefits of
   `handbook/benefits/`), and asks for that attribute of one thing more. When the names form
   a numbered series, code names the new one ("Trailhead 4": the next number whose name the KB
   never mentions) and the LLM only phrases the question; otherwise the LLM invents the name
   (the embedded 0.5B cannot: measured 0 new names in 10 tries, it repeats listed ones; strong
   models can). Kept only when the new name's own words (those no listed name has) occur
   nowhere in the KB -- or, for a new number, the whole name occurs nowhere -- and the question
   names it: a question about something the KB never mentions cannot be answered by it.
2. **Near miss** (`evolve_unanswerable_near`): statements of the KB, each turned by the LLM into
   a question about the same subject with one detail changed.
3. **Topic gap** (`evolve_unanswerable_topics`), when there is nothing else left: the LLM
   sees an outline of the KB (document titles and section headings) and proposes questions on
   topics the outline leaves out; code keeps those with at least one content term that occurs
   nowhere in the KB (`search.absent_terms`). Weaker: a synonym of a covered topic ("hotline"
   for the support phone line) passes this screen, so the verifier's absence check and the
   reviewer matter more here.

Why not the older way, an (entity, attribute word) gap picked from words near values: measured
on samples/, it produced questions like "What is the ready attribute for fitting studios?".

Every kept question also passes `screen`: a question in the KB's language, and no FTS5 top-5
chunk of the whole KB holding all of its content terms (verification repeats this and adds the
LLM absence check). The reference answer is the fixed refusal of `prompts/refusals.md`; no
chunks are cited. Idempotent: a sibling group is done when `stage_done('unanswerable',
hash(attribute, names, prompt version))` exists; topic proposals are numbered attempts (one
more than recorded, at most MAX_TOPIC_ATTEMPTS) that list the questions already asked, so each
asks for new ones. Each
call's candidates and ledger row are committed together.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict

from builder.llm.prompts import load_sentences, sentence_for
from builder.store import candidates as cstore
from builder.store.search import absent_terms, phrase_in_kb, search_chunks
from builder.text.language import detect_language, language_name

from builder.generate.absence import chunk_answering, content_words, off_domain
from builder.generate.candidate import clean_question, make_candidate, stable_id
from builder.generate.context import RunContext, run_units
from builder.generate.models import InventedEntityQuestion, ProposedQuestions
from builder.generate.worth import ADMONITION, assess
from builder.generate.terms import STOPWORDS, key_terms, tokens

STAGE = "unanswerable"
SIBLINGS, TOPICS = "evolve_unanswerable", "evolve_unanswerable_topics"
NEAR = "evolve_unanswerable_near"
NEAR_SOURCES = 6  # verified questions shown to one near-miss call
MIN_SIBLINGS = 3
MAX_NAMES = 12
MAX_PER_CALL = 8
MAX_TOPIC_ATTEMPTS = 3
MAX_OUTLINE_DOCS = 30
MAX_HEADINGS_PER_DOC = 6


def outline(chunks: list[dict]) -> str:
    """One line per document: its title and its section headings, in document order."""
    heads: dict[str, list[str]] = defaultdict(list)
    titles: dict[str, str] = {}
    for c in chunks:
        path = c.get("heading_path") or []
        titles.setdefault(c["document_id"], c.get("title") or (path[0] if path else c["document_id"]))
        for h in path[1:]:
            if h not in heads[c["document_id"]]:
                heads[c["document_id"]].append(h)
    lines = []
    for doc in sorted(titles)[:MAX_OUTLINE_DOCS]:
        sub = heads[doc][:MAX_HEADINGS_PER_DOC]
        lines.append(f"- {titles[doc]}" + (f": {'; '.join(sub)}" if sub else ""))
    return "\n".join(lines)


def sibling_groups(facts: list[dict], seed: int) -> list[dict]:
    """{attribute, names, document_id, language} for each table attribute stated for at least
    MIN_SIBLINGS things, in seeded order."""
    by_attr: dict[str, dict[str, dict]] = defaultdict(dict)
    for f in facts:
        cell = f.get("cell")
        if cell and key_terms(cell["entity"]) and key_terms(cell["attribute"]):
            by_attr[cell["attribute"]].setdefault(cell["entity"], f)
    return _groups({attribute: (attribute, list(named), next(iter(named.values())))
                    for attribute, named in by_attr.items()},
                   lambda first: first.get("chunk_language") or first.get("language") or "en",
                   seed)


FOLDER_ATTRIBUTE = "what it is, who can use it or how to get it"


def folder_groups(chunks: list[dict], seed: int) -> list[dict]:
    """The titles of the documents of one folder (at least MIN_SIBLINGS of them) as things of
    one kind: the benefits of `handbook/benefits/`, the plans of `pricing/`. A question about one
    more of them that the KB never mentions is as near its topics as an unanswerable item gets
    ("What does the dental plan cover?" next to the cash plan and the cycle-to-work scheme)."""
    titles: dict[str, dict[str, dict]] = defaultdict(dict)
    for c in chunks:
        folder = c["document_id"].rpartition("/")[0]
        title = (c.get("title") or "").strip()
        if folder and title and key_terms(title):
            titles[folder].setdefault(title, c)
    return _groups({folder: (FOLDER_ATTRIBUTE, sorted(named), next(iter(named.values())))
                    for folder, named in titles.items()},
                   lambda first: (first.get("language") or "en").split("-")[0], seed)


def _groups(kinds: dict[str, tuple[str, list[str], dict]], language_of, seed: int) -> list[dict]:
    """The group dicts of both sources, in seeded order: per kind (sorted by key) its attribute,
    its names in the given order, and the first row's document and language; kinds of fewer
    than MIN_SIBLINGS names are no kind."""
    groups = [{"attribute": attribute, "names": names[:MAX_NAMES],
               "document_id": first["document_id"], "language": language_of(first)}
              for _key, (attribute, names, first) in sorted(kinds.items())
              if len(names) >= MIN_SIBLINGS]
    random.Random(seed).shuffle(groups)
    return groups


def majority_language(chunks: list[dict]) -> str:
    counts = Counter((c.get("language") or "en").split("-")[0] for c in chunks)
    return counts.most_common(1)[0][0] if counts else "en"


def screen(store, question: str, language: str) -> str | None:
    """Why a proposed question cannot be an unanswerable candidate, or None when it can."""
    if not question.endswith(("?", "？")) or len(question) < 8:
        return "not a question"
    if detect_language(question) != language:
        return "wrong language"
    if chunk_answering(store, question) is not None:
        return "a chunk contains every term"
    if why := off_domain(store, question):
        return why
    return None


_SERIES = re.compile(r"^(?P<stem>.*\D)\s*(?P<number>\d{1,4})$")
INVENT = "(invent one)"


def new_sibling_name(store, names: list[str], avoid: frozenset[str] = frozenset()) -> str | None:
    """The next member of a numbered series among `names` ("Trailhead 2", "Trailhead 3" ->
    "Trailhead 4"; "Ridge 30", "Ridge 40" -> "Ridge 50") that the KB never mentions: from the
    largest series whose next name is not in `avoid`, else the largest. None without a series."""
    return _pick(series_names(store, names), avoid)


def _pick(found: list[str], avoid: frozenset[str]) -> str | None:
    fresh = [n for n in found if n not in avoid]
    return (fresh or found or [None])[0]


def series_names(store, names: list[str]) -> list[str]:
    """For each numbered series among `names`, largest first, its next name the KB never
    mentions (FTS5 phrase queries: compute once per group)."""
    series: dict[str, list[int]] = defaultdict(list)
    for name in names:
        m = _SERIES.match(name.strip())
        if m and key_terms(m.group("stem")):
            series[m.group("stem").strip()].append(int(m.group("number")))
    found = []
    for stem, numbers in sorted(series.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        steps = [b - a for a, b in zip(sorted(set(numbers)), sorted(set(numbers))[1:])]
        step = min(steps) if steps else 1  # "Ridge 30, 40, 50" -> "Ridge 60"
        for number in range(max(numbers) + step, max(numbers) + 10 * step, step):
            if not phrase_in_kb(store, f"{stem} {number}"):
                found.append(f"{stem} {number}")
                break
    return found


def invented_name_problem(store, name: str, question: str, siblings: list[str]) -> str | None:
    """Why an invented sibling is not usable, or None. Its own words (those no listed name has)
    must occur nowhere in the KB -- or, when its only new word is a number ("Trailhead 4" next
    to "Trailhead 2" and "Trailhead 3"), the whole name must occur nowhere -- and the question
    must name it."""
    if name.casefold() in {s.casefold() for s in siblings}:
        return "the name is one of the listed names"
    shared = set().union(*(tokens(s) for s in siblings)) if siblings else set()
    words = [w for w in dict.fromkeys(tokens(name))
             if w not in shared and w not in STOPWORDS and not w.isdigit()]
    if words:
        if absent_terms(store, words) != words:
            return "the knowledge base mentions the invented name"
    elif not _SERIES.match(name.strip()):
        return "the name only repeats words of the listed names"
    elif phrase_in_kb(store, name):  # a new number in a series: the whole name must be new
        return "the knowledge base mentions the invented name"
    if not set(words or tokens(name)) - STOPWORDS <= set(tokens(question)):
        return "the question does not name the invented thing"
    return None


def group_key(ctx: RunContext, group: dict) -> str:
    p = ctx.prompts[SIBLINGS]
    return stable_id(STAGE, "siblings", group["attribute"], group["names"], p.name, p.version)


async def propose(ctx: RunContext, chunks: list[dict], facts: list[dict], want: int) -> int:
    """Up to `want` new unanswerable candidates: sibling groups first (one call each), then one
    topic-proposal call for what is still missing. Returns how many it wrote."""
    if want <= 0:
        return 0
    done = cstore.done_keys(ctx.store, STAGE)
    groups = _order(ctx, [g for g in sibling_groups(facts, ctx.options.seed)
                          + folder_groups(chunks, ctx.options.seed)
                          if group_key(ctx, g) not in done])
    made = Counter()
    refusals = load_sentences("refusals.md", ctx.options.prompts_dir)

    async def one(item: tuple[dict, str | None]) -> None:
        wrote = await _from_siblings(ctx, *item, refusals)  # await first: no lost update
        made["siblings"] += wrote

    await run_units(ctx, "unanswerable", groups[:want], one)
    if sum(made.values()) < want:
        made["near"] += await _from_near_misses(ctx, chunks, facts, want - sum(made.values()),
                                                refusals)
    if sum(made.values()) < want:
        made["topics"] += await _from_topics(ctx, chunks, want - sum(made.values()), refusals)
    return sum(made.values())


def _order(ctx: RunContext, groups: list[dict]) -> list[tuple[dict, str | None]]:
    """(group, new name or None) in the order to use them: groups whose new name code can make
    first (a small model cannot invent one), and names used least so far first: four questions
    about one invented "Trailhead 4" test the same thing four times."""
    used = Counter(i.get("name") for i in cstore.done_infos(ctx.store, STAGE)
                   if i.get("source") == "siblings" and i.get("generated"))
    left = [(g, series_names(ctx.store, g["names"])) for g in groups]
    out = []
    while left:
        avoid = frozenset(n for n, k in used.items() if k)
        named = [(g, _pick(found, avoid)) for g, found in left]
        best = min(range(len(named)), key=lambda i: (named[i][1] is None, used[named[i][1]], i))
        group, name = named[best]
        left.pop(best)
        used[name] += 1
        out.append((group, name))
    return out


async def _from_siblings(ctx: RunContext, group: dict, given: str | None,
                         refusals: dict[str, str]) -> int:
    result = await ctx.call(SIBLINGS, {
        "names": "; ".join(group["names"]), "attribute": group["attribute"],
        "new_name": given or INVENT, "language": language_name(group["language"]),
    }, InventedEntityQuestion)
    if not result.ok:
        return 0
    name = given or result.value.name.strip()
    question = clean_question(result.value.question)
    why = (invented_name_problem(ctx.store, name, question, group["names"])
           or screen(ctx.store, question, group["language"]))
    rows = [] if why else [_candidate(ctx, SIBLINGS, question, group["language"],
                                      group["document_id"], result.model, refusals)]
    cstore.record_candidates(ctx.store, rows, stage=STAGE, key=group_key(ctx, group), info={
        "source": "siblings", "attribute": group["attribute"], "name": name,
        "generated": len(rows), "screened": why})
    return len(rows)


async def _from_near_misses(ctx: RunContext, chunks: list[dict], facts: list[dict], want: int,
                            refusals: dict[str, str]) -> int:
    """Statements of the KB, each turned by the model into a question about the same subject
    with one detail changed, so that the KB no longer answers it ("We offer 25 days of
    holiday" -> "How many days of holiday do contractors in Germany get?"): as near the KB's
    topics and words as a defensive item can be. Kept only when `screen` passes and a word of
    the new question occurs nowhere in the KB. One call per attempt over the next NEAR_SOURCES
    statements, taken in a seeded order over documents from the facts code picked answers
    for (so a resumed run asks the same statements)."""
    attempts = [i for i in cstore.done_infos(ctx.store, STAGE) if i.get("source") == "near"]
    if len(attempts) >= MAX_TOPIC_ATTEMPTS:
        return 0
    ordered = _near_sources(ctx, facts)
    batch = ordered[len(attempts) * NEAR_SOURCES:(len(attempts) + 1) * NEAR_SOURCES]
    if not batch:
        return 0
    language = majority_language(chunks)
    key = stable_id(STAGE, "near", [f["id"] for f in batch], ctx.prompts[NEAR].version)
    # without an admonition's marker: "[!abstract] ..." came back as "el abstract"
    result = await ctx.call(NEAR, {"statements": [{"text": ADMONITION.sub("", f["text"]).strip()}
                                                  for f in batch],
                                   "language": language_name(language)}, ProposedQuestions)
    if not result.ok:
        return 0
    return _keep_proposed(ctx, chunks, NEAR, result, language, want, refusals, key,
                          {"source": "near", "attempt": len(attempts) + 1})


def _near_sources(ctx: RunContext, facts: list[dict]) -> list[dict]:
    """Facts with an answer code can choose (specific statements), not stale, one per chunk,
    round-robin over documents in seeded order."""
    by_doc: dict[str, dict[str, dict]] = defaultdict(dict)
    for f in sorted(facts, key=lambda f: f["id"]):
        if f["id"] not in ctx.stale and assess(f, ctx.common).answer:
            by_doc[f["document_id"]].setdefault(f["chunk_id"], f)
    queues = [list(by_doc[d].values()) for d in sorted(by_doc)]
    rng = random.Random(ctx.options.seed)
    rng.shuffle(queues)
    out: list[dict] = []
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


async def _from_topics(ctx: RunContext, chunks: list[dict], want: int,
                       refusals: dict[str, str]) -> int:
    topics = outline(chunks)
    attempts = [i for i in cstore.done_infos(ctx.store, STAGE) if i.get("source") == "topics"]
    if len(attempts) >= MAX_TOPIC_ATTEMPTS:
        return 0  # the model has had its tries; a rerun does not pay for more
    key = stable_id(STAGE, "topics", len(attempts) + 1, topics, ctx.prompts[TOPICS].version)
    language = majority_language(chunks)
    asked = [c["question"] for c in cstore.load_candidates(ctx.store) if c["type"] == "unanswerable"]
    asked += [q for i in attempts for q in i.get("proposals") or []]  # screened out ones too
    avoid = [{"question": q} for q in dict.fromkeys(asked)]
    result = await ctx.call(TOPICS, {
        "topics": topics, "avoid": avoid, "count": min(MAX_PER_CALL, 2 * want + 1),
        "language": language_name(language),
    }, ProposedQuestions)
    if not result.ok:
        return 0
    return _keep_proposed(ctx, chunks, TOPICS, result, language, want, refusals, key,
                          {"source": "topics", "attempt": len(attempts) + 1})


def _keep_proposed(ctx: RunContext, chunks: list[dict], prompt_name: str, result,
                   language: str, want: int, refusals: dict[str, str], key: str,
                   info: dict) -> int:
    """Screen proposed questions, write up to `want` candidates with the ledger row (which
    keeps every proposal, so a later attempt can list them as already asked)."""
    asked = [c["question"] for c in cstore.load_candidates(ctx.store) if c["type"] == "unanswerable"]
    docs = {c["document_id"] for c in chunks}
    rows, seen, screened = [], {q.casefold() for q in asked}, Counter()
    for raw in result.value.questions:
        question = clean_question(raw)
        if question.casefold() in seen or len(rows) >= want:
            continue
        seen.add(question.casefold())
        why = screen(ctx.store, question, language)
        if why is None and not absent_terms(ctx.store, content_words(question)):
            why = "every term occurs in the knowledge base"
        if why:
            screened[why] += 1
            continue
        near = [h for h in search_chunks(ctx.store, question, k=3) if h["document_id"] in docs]
        rows.append(_candidate(ctx, prompt_name, question, language,
                               near[0]["document_id"] if near else sorted(docs)[0],
                               result.model, refusals))
    cstore.record_candidates(ctx.store, rows, stage=STAGE, key=key, info={
        **info, "proposed": len(result.value.questions), "generated": len(rows),
        "proposals": [clean_question(q) for q in result.value.questions],
        "screened": dict(screened)})
    return len(rows)


def _candidate(ctx: RunContext, prompt_name: str, question: str, language: str,
               document_id: str, model: str | None, refusals: dict[str, str]) -> dict:
    prompt = ctx.prompts[prompt_name]
    return make_candidate(
        ctype="unanswerable", question=question, answer=sentence_for(refusals, language),
        facts=[], language=language, model=model or ctx.model("generator", prompt_name),
        seed_fact_id=None, document_id=document_id, key=("u", question.casefold()),
        prompts={prompt.name: prompt.version})
