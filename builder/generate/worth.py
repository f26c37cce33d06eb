"""Which statements are worth a single-hop question, and which phrase of each is the answer.

Not every sentence of a knowledge base is a fact worth asking about. Measured on three public
knowledge bases (an HR handbook, a library's documentation, a Spanish product manual): of 48
verified items of the earlier pipeline, 3 were correct, and most of the rest came from
statements with nothing specific to ask ("The health and wellbeing of our employees is a
priority.", "This page lists some common problems ...", "Here's a guide that covers ...") or
from answers the model chose as "the whole sentence". So code decides, before any call:

- **worthy**: the statement says something specific and checkable: a value (number, price,
  duration, date, time), a named thing (a product, tool, setting, code name), a defined term
  with content beyond the term, or a rule (a modal or condition: must, can, only, within, if).
  Not worthy: statements about the document itself ("this page", "see", "for more
  information"), statements that open with a pronoun that needs the previous sentence
  ("It", "This", "They"), link-only or mostly-link statements, and statements with none of the
  specific kinds above. Each rejection keeps its reason (the summary counts them).
- **answer**: the phrase the question must ask for, chosen by code when it can be: the value
  (`terms.answer_target`), the description of a labelled list item ("**Adopts**: actively
  learns ..." -> "actively learns ..."), the complement of a definition ("X is a one-time
  purchase that ..." -> "a one-time purchase that ..."), a code name (`httpx.Client`), or a
  named thing that is not the statement's own subject. When none applies the question writer
  chooses, and the checks hold its choice to a short phrase of the statement.
- **priority**: code-chosen answers first (values, then labels, definitions and names), then
  statements whose answer the model must choose.

Languages: the cue words below cover English, Spanish, French, German, Portuguese and
Italian; Chinese and Japanese statements rely on values and names. Data, not prose: extend
the lists for another language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from builder.generate.answer_form import only_links
from builder.generate.limits import limits
from builder.generate.terms import answer_target, dates, key_terms, numbers
from builder.text.markdown import BLOCK_ID

# Statements about the document, not about the subject.
META = re.compile(
    r"\b(this|the following|the next|the previous) (page|section|guide|document|article|chapter|"
    r"table|list|part)\b|\bhere(?:'s| is| are)\b|\bsee (?:the |our |also )?\b|"
    r"\b(for|more|further) (more |further )?(information|details)\b|\blearn more\b|\bread more\b|"
    r"\bfind out more\b|\bclick here\b|\bvisit (the|our)\b|"
    r"\b(below|above)[.:]?$|"
    r"\b(esta|este) (página|sección|guía|documento|artículo)\b|\bpara más (información|detalles)\b|"
    r"\bconsult[ae]\b|\bmás información\b|"
    r"\b(cette|ce) (page|section|guide|document|article)\b|\bpour plus d'informations\b|"
    r"\b(diese[rs]?) (seite|abschnitt|anleitung|dokument)\b|\bweitere informationen\b|"
    r"\b(esta|este) (página|seção|guia)\b|\bmais informações\b|"
    r"\b(questa|questo) (pagina|sezione|guida)\b|\bper maggiori informazioni\b", re.I)
# "For example, a site with the ID `my-site` ...": an illustration, not a fact to ask about.
EXAMPLE = re.compile(r"^\W*(for example|for instance|e\.g\.|por ejemplo|p\. ?ej\.|par exemple|"
                     r"zum beispiel|z\. ?b\.|por exemplo|ad esempio|per esempio)\b", re.I)
# A first word that needs the sentence before it to mean anything.
NEEDS_ANTECEDENT = frozenset(
    """it this that these those they them he she its their such
    esto este esta estos estas eso esa esos esas ello ellos ellas
    cela ceci ça il ils elle elles ce ces
    es dies diese dieser dieses das sie er
    isso isto esse essa eles elas
    ciò questo questa questi quelle esso essa""".split())
# Rules and conditions: a statement that says what may, must or will happen, or when.
RULE = re.compile(
    r"\b(must|may|can|cannot|can't|should|shall|will|won't|need(s)? to|required|entitled|"
    r"eligible|allowed|only|unless|if|within|before|after|until|up to|at least|at most|"
    r"maximum|minimum|default(s)?|by default|always|never|every|each)\b|"
    r"\b(debe[sn]?|puede[sn]?|podrá[sn]?|necesita[sn]?|requiere[sn]?|solo|sólo|si|antes|después|"
    r"hasta|al menos|como máximo|máximo|mínimo|por defecto|siempre|nunca|cada)\b|"
    r"\b(doit|doivent|peut|peuvent|seulement|uniquement|avant|après|jusqu'à|au moins|maximum|"
    r"minimum|par défaut|toujours|jamais|chaque)\b|"
    r"\b(muss|müssen|kann|können|darf|nur|wenn|vor|nach|bis|mindestens|höchstens|standardmäßig|"
    r"immer|nie|jede[rs]?)\b|"
    r"\b(deve|devem|pode|podem|apenas|somente|antes|depois|até|pelo menos|no máximo|padrão|"
    r"sempre|nunca|cada)\b|"
    r"\b(deve|devono|può|possono|solo|prima|dopo|fino a|almeno|al massimo|predefinito|sempre|"
    r"mai|ogni)\b", re.I)
# "X is/are/means Y" where Y is a noun phrase (it opens with an article or determiner): a
# definition whose complement can be the answer. "HTTPX is careful to ..." is not one.
DEFINITION = re.compile(
    r"^(?P<term>[^,;:]{2,60}?)\s+(?:is|are|means|refers to|stands for|es|son|significa|est|sont|"
    r"signifie|ist|sind|bedeutet|é|são|è|sono)\s+(?P<rest>(?:a|an|the|one|un|una|unos|unas|el|"
    r"la|los|las|une|le|les|des|ein|eine|einen|der|die|das|um|uma|o|os|as|uno|il|lo|gli)\s.{8,})$",
    re.I)
# A value right after one of these words is subtracted from something the statement names.
DEDUCTION = re.compile(r"\b(?:less|minus|deducted|deducting|net of|menos)\s*$", re.IGNORECASE)

LABELLED = re.compile(r"^\*\*(?P<label>[^*]{1,60})\*\*\s*[:：—–-]\s*(?P<rest>\S.*)$", re.S)
# Labels that frame a sentence rather than name a dimension ("**Resolution**: ...").
GENERIC_LABELS = frozenset(
    """note notes tip tips warning caution important info example examples description
    resolution solution summary answer question problem cause fix see also nota ejemplo
    descripción solución resumen aviso importante remarque exemple solution résumé attention
    hinweis beispiel lösung beschreibung zusammenfassung achtung wichtig dica exemplo
    descrição solução resumo atenção esempio descrizione soluzione riepilogo attenzione""".split())
CODE = re.compile(r"`([^`\n]{2,60})`")
# "`cachecontrol` or `requests-cache`": either one answers, so neither alone is the answer;
# "the `--ssl-keyfile` and `--ssl-certfile` options": both are, so one alone is half of it.
ALTERNATIVES = re.compile(
    r"`[^`\n]+`\s*(?:,|/|\bor\b|\band\b|\bo\b|\by\b|\bou\b|\bet\b|\boder\b|\bund\b|\be\b)\s*`")
_UP = "A-ZÀ-ÖØ-Þ"
# Where a sentence or a list item starts: the text before a match ends here.
SENTENCE_START = re.compile(r"(?:^|[.:;!?¿¡]|\n\s*(?:\d+[.)]|[-*+]))\s*$")
NAME = re.compile(rf"(?<![\w.])([{_UP}][\w.-]*[{_UP}][\w.-]*|[{_UP}]\w+(?:\s+[{_UP}][\w-]+)+)")
# Admonition and callout markers a docs site puts before a sentence ("!!! note", "[!tip]").
ADMONITION = re.compile(r"^\s*(?:!!!\s*\w+(?:\s+\"[^\"]*\")?|\[![\w-]+\][+-]?)\s*", re.I)
# Words a definition's term never starts with: "If HTTPX is unable ..." is a condition.
_NOT_A_TERM = frozenset(
    """if when whenever while to for in on at by with as once after before unless although because
    so then there here you we i si cuando mientras para por en con como antes después aunque
    porque quand lorsque pour avec comme avant après wenn als für mit wie vor nach se quando
    para com como antes depois per con come prima dopo""".split())
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|\[\[([^\]|]*\|)?([^\]]*)\]\]|<[a-z]+:[^>\s]+>", re.I)

MIN_WORDS_WITHOUT_VALUE = 6
MAX_ANSWER_WORDS = 20


@dataclass(frozen=True)
class Worth:
    worthy: bool
    reason: str = ""           # why not, when not worthy
    answer: str | None = None  # the answer phrase code chose, or None: the writer chooses
    kind: str = ""             # value | label | definition | code | name | rule
    priority: int = 9          # lower is asked first

    @property
    def label(self) -> str:
        return self.kind


def _plain_words(text: str) -> list[str]:
    return [w for w in re.findall(r"\w+", text, re.UNICODE)]


def _link_share(text: str, raw: str) -> float:
    """Share of the statement's plain text that is link labels ("See [the guide](...)" is all
    link; "Only 1 person can take [adoption leave](...)" is not)."""
    labels = sum(len(m.group(1) or m.group(3) or m.group(0)) for m in LINK.finditer(raw))
    return labels / max(len(text), 1)


def common_terms(chunks: list[dict], share: float = 0.15) -> frozenset[str]:
    """Key terms found in at least `share` of the chunks (the product's own name, "httpx",
    "Obsidian"): never an answer on their own, they answer nothing specific."""
    if not chunks:
        return frozenset()
    counts: dict[str, int] = {}
    for chunk in chunks:
        for term in key_terms(chunk["text"]):
            counts[term] = counts.get(term, 0) + 1
    return frozenset(t for t, n in counts.items() if n >= share * len(chunks) and n >= 3)


_IS_NUMBER = re.compile(
    r"^(?P<term>[^,;:]{3,60}?)\s+(?:is|are|was|equals|es|est|ist|é|è)\s+(?P<n>\d[\d,.]*)\s*\.?$", re.I)


def _bare_number(text: str) -> str | None:
    """The number of "The vault code is 7." / "The default limit is 100." (no unit)."""
    m = _IS_NUMBER.match(text.strip())
    return m.group("n").rstrip(".,") if m else None


def _name_of(text: str, match: re.Match) -> str | None:
    """The name a NAME match holds. A sentence's (or a list item's) first word is capitalised
    because it comes first: "Reinicia Obsidian para aplicar los cambios" after a lead-in names
    "Obsidian", not "Reinicia Obsidian" (a verb asked for as a name, seen on a Spanish KB)."""
    name = match.group(1)
    if SENTENCE_START.search(text[:match.start()]):
        rest = name.split(None, 1)
        return rest[1] if len(rest) == 2 else None
    return name


def _inside_a_name(text: str, value: str) -> bool:
    """"2 support" out of "HTTP/2 support", "3 app" out of "OAuth3 app": a number glued to a
    name is part of the name, not a value. And "8 face" out of "8 face to face counselling
    sessions": the word after the number is half of a compound, not its unit."""
    at = text.find(value)
    if at > 0 and (text[at - 1] in "/_-.#" or text[at - 1].isascii() and text[at - 1].isalpha()):
        return True
    unit = value.split()[-1] if " " in value else ""
    rest = text[at + len(value):] if at >= 0 else ""
    return bool(unit) and bool(re.match(rf"\s*(?:to|-)\s*{re.escape(unit)}\b", rest, re.I))


_UNIT_KINDS = [
    (re.compile(r"[$€£¥]|\b(usd|eur|gbp|dollars?|euros?|pounds?)\b", re.I), "an amount of money"),
    (re.compile(r"%"), "a percentage"),
    (re.compile(r"\b\d{1,2}:\d{2}|\b(a\.m\.|p\.m\.|am|pm|noon|midnight)\b", re.I), "a time of day"),
    (re.compile(r"\b(seconds?|minutes?|hours?|days?|weeks?|months?|years?|segundos?|minutos?|"
                r"horas?|días?|semanas?|meses|mes|años?|jours?|semaines?|mois|ans?|années?|"
                r"tage?n?|wochen?|monate?n?|jahre?n?|dias?|anos?|giorni|settimane|mesi|anni)\b", re.I),
     "a duration"),
]


def answer_kind(w: Worth) -> str:
    """What the hidden answer is, in words the question writer can pick a question word from
    ("a duration" -> "how long"), without showing the answer itself."""
    if w.kind == "value" and w.answer:
        if dates(w.answer):
            return "a date"
        what = next((kind for pattern, kind in _UNIT_KINDS if pattern.search(w.answer)),
                    "a number")
        found = limits(w.answer)
        if found:  # "a minimum (a duration)": the writer asks for the limit, not the value
            bound = {"<=": "an upper limit", "<": "an upper limit", ">=": "a minimum",
                     ">": "a threshold that must be exceeded"}[found[0].op]
            if found[0].phrase.split()[0].casefold() in ("within", "dentro", "innerhalb",
                                                          "entro", "en"):
                bound = "a time limit"
            return f"{bound} ({what})"
        return what
    if w.kind == "code" and w.answer:
        return _code_kind(w.answer)
    return {"label": "a description", "definition": "a description",
            "name": "a name"}.get(w.kind, "a short phrase")


CALL_KIND = "a function or method call"


def _code_kind(name: str) -> str:
    """What a code span names, from its shape alone -- only where the shape is unambiguous:
    a hint the writer cannot trust ("a parameter" for a logger's name) ends up in the question
    ("What parameter configures the network-level logger?")."""
    plain = name.strip("`\"'")
    if plain.startswith("-"):
        return "a command-line option"
    if plain.endswith(")"):
        return CALL_KIND
    return "a name written in code"


def blank(text: str, answer: str, mark: str = "[BLANK]") -> str | None:
    """`text` with every occurrence of `answer` replaced by `mark` (case-insensitive, also
    inside the statement's Markdown-free form); None when the answer is not in it."""
    # word boundaries for Latin answers only: Chinese has none ("需要5天送达" holds "5天")
    head = r"(?<![A-Za-z0-9_])" if answer[:1].isascii() and answer[:1].isalnum() else ""
    tail = r"(?![A-Za-z0-9_])" if answer[-1:].isascii() and answer[-1:].isalnum() else ""
    pattern = re.compile(head + re.escape(answer) + tail, re.I)
    if not pattern.search(text):
        return None
    return pattern.sub(mark, text)


def assess(fact: dict, common: frozenset[str] = frozenset()) -> Worth:
    """Whether `fact` (a facts row: `text`, `evidence`; the runner adds its section `title` and
    whether it is a numbered `step`, statements.step_at) is worth a single-hop question, and
    the answer code picks for it; `common` are the KB's everywhere-terms (`common_terms`).
    Deterministic."""
    text = ADMONITION.sub("", fact["text"]).strip()
    raw = ADMONITION.sub("", fact.get("evidence") or text)
    words = _plain_words(text)
    if not words:
        return Worth(False, "empty")
    if META.search(text):
        return Worth(False, "about the document, not the subject")
    if EXAMPLE.match(text):
        return Worth(False, "an example, not a rule of the subject")
    if fact.get("step"):
        # A step holds only inside its procedure, and the question writer drops the procedure
        # or turns the step around: "What name do you need to use for the certificates in
        # your httpx configuration?" -> client.pem (a local test server's), "What CSS file
        # must you rename to use a community theme?" -> publish.css (you rename the theme's
        # file TO it). Of the 18 labelled single-hop items cut from numbered steps on the
        # three public KBs of issue 12 (bench/quality/labels), 17 were wrong.
        return Worth(False, "a step of a numbered procedure")
    if _link_share(text, raw) > 0.6:
        return Worth(False, "mostly a link")
    if words[0].casefold() in NEEDS_ANTECEDENT:
        return Worth(False, f"starts with {words[0]!r}, which needs the sentence before")

    value = answer_target({**fact, "text": text}) or _bare_number(text)  # the cell record too
    if value is not None and not re.search(r"\w", value):
        return Worth(False, "its value is a symbol (a table's check mark), not words")
    if value and DEDUCTION.search(text[:max(text.find(value), 0)]):
        # "your normal salary less £64.95 per day": hidden, the value reads as the amount paid
        # (a question "How much does dxw pay per day?" got "£64.95", seen on a public handbook)
        return Worth(False, "a deduction ('less X'), which the bare value would misstate")
    if value and key_terms(value) != key_terms(text) and not _inside_a_name(text, value):
        # a limit keeps its comparator: "at least 8 weeks", not "8 weeks" -- the bare value
        # would be a wrong answer, and hiding "within 14 days" gets a question about a
        # deadline ("By when ...?"), not about a duration
        limit = next((lim for lim in limits(text) if value in lim.phrase and lim.phrase in text),
                     None)
        return Worth(True, answer=limit.phrase if limit else value, kind="value", priority=0)
    label = LABELLED.match(raw.strip())
    if label and label.group("label").strip().casefold() not in GENERIC_LABELS:
        rest = " ".join(label.group("rest").split())
        rest = BLOCK_ID.sub("", re.sub(r"\*\*|__|`", "", rest)).strip()
        if len(key_terms(rest)) >= 2 and len(rest.split()) <= MAX_ANSWER_WORDS \
                and not only_links(rest):  # "**Lectura adicional**: [[A]], [[B]]" points on
            return Worth(True, answer=rest.rstrip("."), kind="label", priority=1)
    definition = DEFINITION.match(text)
    if definition and len(definition.group("term").split()) <= 6 \
            and definition.group("term").split()[0].casefold() not in _NOT_A_TERM:
        rest = definition.group("rest").strip().rstrip(".")
        if len(key_terms(rest)) >= 3 and len(rest.split()) <= MAX_ANSWER_WORDS \
                and not key_terms(rest) <= key_terms(definition.group("term")):
            return Worth(True, answer=rest, kind="definition", priority=1)
    # A name the title holds cannot be hidden: the question could no longer say what it is
    # about ("Log TOIL" on the TOIL page), and a name everywhere answers nothing.
    title_terms = key_terms(fact.get("title") or "")
    specific = lambda phrase: bool(key_terms(phrase)) and not key_terms(phrase) <= common \
        and not key_terms(phrase) & title_terms  # noqa: E731
    code = [m.group(1) for m in CODE.finditer(raw) if specific(m.group(1))]
    if code and len(words) >= 4 and not key_terms(text) <= key_terms(code[0]) \
            and not ALTERNATIVES.search(raw):
        return Worth(True, answer=code[0], kind="code", priority=2)
    if len(words) < MIN_WORDS_WITHOUT_VALUE:
        return Worth(False, "too short to ask about without a value")
    # A name in the first part of the statement is usually its subject, not something to ask for.
    names = [_name_of(text, m) for m in NAME.finditer(text) if m.start() >= 0.4 * len(text)]
    names = [n for n in names if n and specific(n)
             and not re.fullmatch(r"[A-Z]{2,3}", n)]  # "CA certificate", "SSL context": adjectives
    if names:
        return Worth(True, answer=names[-1], kind="name", priority=2)
    if RULE.search(text) and len(key_terms(text)) >= 4:
        return Worth(True, kind="rule", priority=3)
    if numbers(text):
        return Worth(True, kind="rule", priority=3)
    return Worth(False, "states nothing specific: no value, name, definition or rule")
