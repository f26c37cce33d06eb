"""Does the reference answer answer the question? Code checks of form, no model involved.

The failure classes these catch were read on public knowledge bases (issue 12):

- `adds_information` -- a tautology: "What is an occasional side project?" -> "An occasional
  side project, free or paid." The answer must carry content terms (or numbers) the question
  does not hold, and they must be most of the answer.
- `not_sentence_copy` -- a vague question answered by restating the whole evidence sentence
  ("What is the purpose of the welcome kit?" -> the sentence). A single-hop answer is a part of
  its statement, not all of it; yes/no answers, and statements too short to split, are exempt.
- `fits_question` -- the kind of answer the question word asks for: "how many/much" a number
  or amount, "how long" a duration, "when" a time, "who" not a bare number, "why/purpose" not a
  bare value, a plain "how" more than one word unless it is code ("¿Cómo se fusionan los
  archivos?" -> "JSON." is not a way), a yes/no question an answer that starts with yes or no
  (and only it); and never a fragment of one character ("D:\\" cut out of "D:\\ or any other
  drive"), a placeholder ("xx") or a template with a part left out ("verify=<...>",
  "proxies=...": every such answer on the public KBs was labelled wrong), nor links alone
  ("[[Gestionar sitios]]": a pointer, not an answer), nor an Obsidian block id ("Sídney,
  Australia ^sync-geo-regions"), nor an answer cut off on a word that
  needs another ("at least £1,000 per") whatever the question; a question asking
  for a file gets a file name ("publish: true" is a property).
- `who_is_someone` -- a "who" answered with where or with what something is done ("Who books
  bank holidays?" -> "BreatheHR", from "... as annual leave in BreatheHR"), read from the word
  before the answer in its evidence.
- `standalone` -- the question must not point at a document ("this section", "the text
  above", "esta página", "the two methods" it never names): a user of the RAG system never
  sees one; nor ask what the asker did
  or sees ("What command did you run ...?", "Do you have any specific questions about ...?"),
  which no document says; nor ask for nothing in particular ("¿Qué es importante sobre
  CloudFlare?", "Can you tell me about ...?"): any sentence about the subject answers it.
- `one_question` -- not two questions joined ("What are some transport configurations, and how
  do they affect the application?"): a reference answers one.
- `not_an_example` -- a question equal or near-equal (token Jaccard >= 0.7) to a question of
  a prompt's worked example is the model copying the prompt, whatever words the knowledge base
  happens to contain (seen: "How much does a pass cost?" on two KBs with no passes).

Question words are listed for English, Spanish, French, German, Portuguese and Italian; for
other languages the form checks pass (the round trip still runs).
"""

from __future__ import annotations

import re

from builder.text.language import HAN, HANGUL, KANA
from builder.text.markdown import BLOCK_ID, MD_LINK, WIKI_LINK

from builder.generate.roundtrip import polarity
from builder.generate.terms import dates, key_terms, numbers, tokens

# (pattern at the question's start or after an opening mark, kind of answer expected)
_ASKS = [
    (r"how (many|much)|cu[aá]nt[oa]s?|combien|wie (viele?|viel)|quant[oa]s?|quant[ei]", "amount"),
    (r"how long|for how long|how often|cu[aá]nto tiempo|combien de temps|wie lange|quanto tempo",
     "duration"),
    (r"when|what time|what date|by when|cu[aá]ndo|quand|wann|quando", "time"),
    (r"who|whom|qui[eé]n(es)?|qui|wer|wem|quem|chi", "who"),
    (r"why|what is the purpose|what's the purpose|por qu[eé]|para qu[eé]|pourquoi|warum|wozu|"
     r"porque|perch[eé]", "reason"),
    # plain "how" (after the how-many/long/often kinds above): a way of doing something
    (r"how (do|does|did|can|could|should|would|is|are|was|were|to)|c[oó]mo|comment|wie|como",
     "manner"),
]
_ASK_RES = [(re.compile(rf"^\W*(?:{p})\b", re.I), kind) for p, kind in _ASKS]
_YES_NO = re.compile(
    r"^\W*(is|are|was|were|do|does|did|can|could|will|would|should|has|have|had|may|must|"
    r"est-ce|peut-on|puis-je|ist|sind|kann|können|darf|muss|gibt es|hat|haben)\b", re.I)
_AMOUNT_WORDS = frozenset(
    """no none zero one two three four five six seven eight nine ten eleven twelve twenty thirty
    hundred thousand unlimited free half all every ningún ninguno ninguna uno una dos tres cuatro
    cinco seis siete ocho nueve diez ilimitado gratis gratuito mitad todos aucun un une deux trois
    quatre cinq six sept huit neuf dix illimité gratuit moitié tous kein keine eins zwei drei vier
    fünf sechs sieben acht neun zehn unbegrenzt kostenlos hälfte alle nenhum dois três quatro
    cinco ilimitado grátis metade nessuno due tre quattro cinque illimitato gratuito metà tutti""".split())
_TIME_WORDS = frozenset(
    """before after during within until by on at every each daily weekly monthly yearly annually
    once immediately when while morning afternoon evening night day days week weeks month months
    year years hour hours minute minutes today tomorrow start end first last next antes después
    durante dentro hasta cuando cada diario semanal mensual anual inmediatamente día días semana
    semanas mes meses año años hora horas avant après pendant jusqu'à chaque quotidien jour jours
    semaine mois an ans année heure heures vor nach während innerhalb bis jeden täglich
    wöchentlich monatlich jährlich tag tage woche wochen monat monate jahr jahre stunde stunden
    depois durante até cada dia dias semana mês meses ano anos prima dopo durante entro fino ogni
    giorno giorni settimana mese mesi anno anni ora ore""".split())
# How a reason or purpose starts ("to keep ...", "because ...", "so that ...").
_REASON_START = re.compile(
    r"^\W*(to|for|so|because|since|as|in order|due to|para|por|porque|pour|parce|afin|car|um|"
    r"damit|weil|da|für|per|perché|affinché)\b", re.I)
_DEICTIC = re.compile(
    r"\b(this|the above|the following|the previous|the next) (page|section|guide|document|"
    r"article|chapter|text|passage|table|list|paragraph|example)\b|\bthe text\b|\bthe document\b|"
    r"\b(this|these|those) (?!year\b|month\b|week\b|day\b|time of\b)[a-z]+|"
    r"\b(este|esta|estos|estas|ese|esa|esos|esas) [a-záéíóúñ]+|"
    r"\b(esta|este) (página|sección|guía|documento|texto|artículo)\b|\bel texto\b|"
    r"\b(ejemplo|sección|página|tabla|lista|párrafo|paso) anterior\b|\bnuestro ejemplo\b|"
    r"\bour (previous |earlier )?example\b|"
    r"\b(the )?(above[- ])?mentioned [a-z]+|"
    # a pair the question never names: "when only one of the two methods is supported"
    r"\bthe two [a-z]+s\b|\b(los|las) dos [a-záéíóúñ]+s\b|"
    r"\b[a-záéíóúñ]+ (mencionad|citad|indicad)[oa]s?( (arriba|antes|anteriormente))?\b|"
    r"\b[a-zàâçéèêëîïôûù]+ (mentionn|cit)ée?s? (ci-dessus|plus haut)\b|"
    r"\b(cette|ce) (page|section|guide|document|texte)\b|\ble texte\b|"
    r"\b(diese[rsn]?) (seite|abschnitt|anleitung|dokument|text)\b|\bder text\b|"
    r"\b(esta|este) (página|seção|guia|documento|texto)\b|"
    r"\b(questa|questo) (pagina|sezione|guida|documento|testo)\b|本文|上文|文中|该段", re.I)
EXAMPLE_SIMILARITY = 0.7
SENTENCE_COPY = 0.8        # share of the statement's terms an answer may not reach ...
SENTENCE_COPY_MIN = 8      # ... when the statement has at least this many terms ...
SAME_START = 3             # ... and the answer opens with the statement's first words


def asks_for(question: str) -> str | None:
    """"amount", "duration", "time", "who", "reason", "manner", "yes_no" or None (what/which).
    Read from the sentence that asks: "I have had the book 25 days. Am I within the loan
    period?" asks yes or no."""
    parts = [p for p in re.split(r"(?<=[.!?。！？])\s+", question.strip()) if p.strip()]
    question = parts[-1] if parts else question
    for pattern, kind in _ASK_RES:
        if pattern.search(question):
            return kind
    if _YES_NO.search(question):
        return "yes_no"
    return None


def _words(text: str) -> set[str]:
    return {t for t in tokens(text)}


_CODE = re.compile(r"[`()=\[\]{}<>/\\]|--|\w\.\w|\w_\w|[a-z][A-Z]")


_PLACEHOLDER = re.compile(r"[xX]{2,}|[.…]+|<[^>]*>|\?+|n/?a|tbd|todo", re.I)
# An elided part inside an answer: "verify=<...>", "proxies=...", 'httpx.get("<url>", ...)'.
_ELIDED = re.compile(r"\.\.\.|…|<\s*\.*\s*>|[\"'=(]<[a-z][\w-]*>")


# Links and nothing else: "[[Gestionar sitios]], [[Personalizar tu sitio]]" (a "further
# reading" note) points at pages instead of answering.
_LINK = rf"(?:{WIKI_LINK.pattern}|{MD_LINK.pattern}|https?://\S+)"
_ONLY_LINKS = re.compile(rf"\W*{_LINK}(?:[\s,;.]+(?:and |y |et |und |e )?{_LINK})*\W*", re.I)


def only_links(text: str) -> bool:
    """Whether `text` is nothing but links ("[[Gestionar sitios]], [[Personalizar tu sitio]]"):
    a pointer to other pages, which states nothing."""
    return bool(_ONLY_LINKS.fullmatch(text.strip()))


# "What is the name of the file ...?" wants a file: a name with an extension, a dotfile or a
# path ("publish: true" is a property, not a file).
_ASKS_FILE = re.compile(r"\b(name of the file|which file|what file|nombre del (archivo|fichero)|"
                        r"qu[eé] (archivo|fichero)|nom du fichier|quel fichier|welche datei|"
                        r"nome do (arquivo|ficheiro)|qual (arquivo|ficheiro)|nome del file)\b", re.I)
_FILE_NAME = re.compile(r"\w\.[A-Za-z0-9]{1,6}\b|(^|[\s`'\"])\.\w|/\w")
# An answer cut off mid-phrase ends on a word that needs one after it: "at least £1,000 per"
# (of "per month"), "... along the lines of". Lower case only: "Bill To" is a label.
_CUT_END = re.compile(r"(?:^|\s)(per|of|to|the|a|an|and|or|for|with|by|from|than|de|del|la|el|"
                      r"los|las|y|o|con|para|por|un|una|que|du|des|le|les|et|der|die|das|und)"
                      r"[\s:,;]*$")


def fits_question(question: str, answer: str) -> tuple[bool, str]:
    if _PLACEHOLDER.fullmatch(answer.strip().strip("`'\"")):
        return False, f"the answer {answer.strip()!r} is a placeholder, not a value"
    if _ELIDED.search(answer):
        return False, f"the answer {answer.strip()!r} leaves a part out: a template, not the value"
    if not numbers(answer) and len(re.sub(r"[\W_]", "", answer)) < 2 and re.search(r"[^\w\s.]", answer):
        return False, f"the answer {answer.strip()!r} is a fragment, not a value or a name"
    if m := _CUT_END.search(answer.strip().rstrip(".")):
        return False, f"the answer is cut off: it ends on {m.group(1)!r}"
    if m := BLOCK_ID.search(answer):
        return False, f"the answer carries the block id {m.group(0).strip()!r}: markup, not content"
    if only_links(answer):
        return False, "the answer only points at other pages (links), it states nothing"
    if _ASKS_FILE.search(question) and not _FILE_NAME.search(answer):
        return False, f"asks for a file; {answer.strip()[:40]!r} names none"
    kind = asks_for(question)
    pol = polarity(answer)
    if kind == "yes_no":
        return (pol is not None, "" if pol is not None else "a yes/no question answered without yes or no")
    # "No refund is given" can answer "What happens if ...?"; "Yes" and a bare "No" cannot.
    if pol is True or pol is False and len(key_terms(strip_polarity(answer))) < 2:
        return False, "a yes/no answer to a question that is not yes/no"
    words = _words(answer)
    has_number = bool(numbers(answer))
    if kind == "amount":
        ok = has_number or bool(words & _AMOUNT_WORDS)
        return ok, "" if ok else "asks how many/much; the answer states no amount"
    if kind == "duration":
        ok = has_number or bool(words & _TIME_WORDS) or bool(words & _AMOUNT_WORDS)
        return ok, "" if ok else "asks how long/often; the answer states no duration"
    if kind == "time":
        ok = has_number or bool(dates(answer)) or bool(words & _TIME_WORDS)
        return ok, "" if ok else "asks when; the answer states no time"
    if kind == "who":
        ok = bool(key_terms(answer) - set(numbers(answer)))
        return ok, "" if ok else "asks who; the answer is a bare value"
    if kind == "reason":
        ok = bool(_REASON_START.match(answer))
        return ok, "" if ok else "asks why/for what purpose; the answer gives no reason or purpose"
    if kind == "manner":  # "How are settings conflicts merged?" -> "JSON." names a thing, not a way
        ok = len(key_terms(answer) - numbers(answer)) >= 2 or bool(_CODE.search(answer))
        return ok, "" if ok else "asks how; a single word names no way of doing it"
    return True, ""


# Scripts written without spaces between words (Han, kana, hangul from text/language.py, the
# rest of the CJK blocks, Thai, Lao, Myanmar, Khmer, halfwidth kana): there every answer sits
# inside a run of letters, so being inside one means nothing.
UNSPACED = re.compile(f"[{HAN}{KANA}{HANGUL}\u2e80-\u33ff\u0e00-\u0eff\u1000-\u109f"
                       f"\u1780-\u17ff\uff66-\uff9f]")


def _in_word(char: str) -> bool:
    return char.isalnum() and not UNSPACED.match(char)


def cut_inside_word(answer: str, evidence: str) -> str | None:
    """The longer word the answer is cut out of, when every place the evidence holds the answer
    is inside one ("8 face" of "8 face-to-face", "Dig" of "Digest"); None when the answer
    stands whole somewhere, or is not quoted at all."""
    core = answer.strip()
    if not core or not _in_word(core[0]) or not _in_word(core[-1]):
        return None
    inside = None
    for m in re.finditer(re.escape(core), evidence, re.I):
        before = evidence[m.start() - 1] if m.start() else " "
        after = evidence[m.end():m.end() + 2]
        if not (_in_word(before) or _in_word(after[:1]) or re.match(r"-\w", after)):
            return None
        start = re.search(r"[\w-]*$", evidence[:m.start()]).start()
        inside = evidence[start:m.end() + re.match(r"[\w-]*", evidence[m.end():]).end()]
    return inside


_PLACE_OR_TOOL = frozenset("in on into onto via using through en mediante dans sur über im".split())
_ARTICLES = frozenset("the a an your our their his her its el la los las un una tu su sus nuestro "
                      "nuestra le les ton votre der die das dein ihr".split())


def who_is_someone(question: str, answer: str, evidence: str) -> tuple[bool, str] | None:
    """A "who" question answered with where or with what something is done is a mismatch:
    "Who will book bank holidays as annual leave?" -> "BreatheHR", from "The People team will
    book them ... in BreatheHR". Read from the word before the answer in its evidence."""
    if asks_for(question) != "who":
        return None
    at = evidence.casefold().find(answer.strip().casefold())
    if at < 0:
        return None
    before = [w for w in tokens(evidence[:at])[-3:]]
    while before and before[-1] in _ARTICLES:
        before.pop()
    if before and before[-1] in _PLACE_OR_TOOL:
        return False, f"asks who; the evidence says {before[-1]!r} {answer.strip()!r}: a place or a tool"
    return True, ""


_IDENTIFIER = re.compile(r"^[`'\"]?(?=\S*(?:[._()/\-]|[a-z][A-Z]|[A-Z]{2}))\S+?[`'\"]?$")


def adds_information(question: str, answer: str) -> tuple[bool, str]:
    """Most of the answer must be new against the question: content terms or numbers. A code
    name counts whole: "NETRC" is new to "Which variable sets the path of the .netrc file?",
    although its one word is not."""
    if _IDENTIFIER.match(answer.strip()):
        name = answer.strip().strip("`'\"").casefold()
        new = name not in question.casefold()
        return new, "" if new else "the question contains its answer"
    if polarity(answer) is not None:
        return True, ""  # yes or no is what a yes/no question asks; the rest is the reason
    a_terms = key_terms(answer)
    a_nums = numbers(answer)
    if not a_terms and not a_nums:
        return False, "empty answer"
    q_terms = key_terms(question)
    new = (a_terms - q_terms) | (a_nums - numbers(question))
    share = len(new) / max(len(a_terms | a_nums), 1)
    if not new:
        return False, "the answer only repeats the question"
    if share < 0.5 and len(new) < 3:
        return False, f"only {share:.0%} of the answer is not in the question"
    return True, ""


def strip_polarity(answer: str) -> str:
    if polarity(answer) is None:
        return answer
    m = re.match(r"^\W*\w+\W*", answer)
    return answer[m.end():] if m else answer


def not_sentence_copy(question: str, answer: str, statement: str) -> tuple[bool, str]:
    """A restatement covers most of its statement AND starts where the statement starts, with
    its subject ("What is the purpose of the welcome kit?" -> "The welcome kit is sent ...");
    a definition's complement or a labelled item's description covers most of its sentence too
    but leaves the subject out ("What is HTTP/2?" -> "a major new iteration of the HTTP
    protocol ..."), and is an answer."""
    if asks_for(question) == "yes_no" or polarity(answer) is not None:
        return True, ""
    s_terms = key_terms(statement)
    if len(s_terms) < SENTENCE_COPY_MIN:
        return True, ""
    covered = len(key_terms(answer) & s_terms) / len(s_terms)
    same_start = tokens(answer)[:SAME_START] == tokens(statement)[:SAME_START]
    if covered >= SENTENCE_COPY and same_start:
        return False, f"the answer restates {covered:.0%} of its statement instead of answering"
    return True, ""


# What the asker did or sees: only the asker knows ("What command did you run to set
# SSL_CERT_DIR?", "What is the error message you are seeing?", both read on the httpx docs).
_ASKERS_OWN = re.compile(
    r"\b(did|have|had) you (run|use|do|see|get|type|try|set|install|choose|enter)\b|"
    r"\byou (are|were) (seeing|getting|running|using)\b|"
    r"\bdo you (have (any )?(specific |other |further |more )?questions|have a (good )?understanding|"
    r"know|understand)\b|"
    r"\b(hiciste|ejecutaste|usaste|viste|has (visto|hecho|ejecutado|usado))\b|\best[áa]s viendo\b", re.I)


# A question that asks for nothing in particular: any sentence about its subject answers it, so
# no one reference can ("¿Qué es importante sobre CloudFlare?", "Can you tell me about the
# stream_id extension?", both passed the verifier on the public KBs).
_OPEN_ASK = re.compile(
    r"\bwhat('s| is| are) (most |particularly )?(important|notable|noteworthy|significant|special|"
    r"interesting|key|worth knowing) (to know )?(about|regarding|concerning)\b|"
    r"\bwhat (should|do|does|must|would) (i|you|we|one|users?) (need to |have to )?know about\b|"
    r"\b(can|could|would) you (tell|explain to) (me|us) (about|more)\b|\btell (me|us) (about|more)\b|"
    r"\bwhat (is|are|was|were) (said|mentioned|stated|noted|written) (about|regarding)\b|"
    r"\bqu[eé] (es|son) (lo )?(m[aá]s )?(importante|relevante|destacable|notable|interesante) "
    r"(sobre|de|acerca de|respecto a)\b|"
    r"\bqu[eé] (debo|debes|debe|hay que|se debe|necesito|necesitas) saber (sobre|de|acerca)\b|"
    r"\bqu[eé] se dice (sobre|de|acerca)\b|\bh[aá]blame (de|sobre)\b|"
    r"\b(puedes|podr[ií]as|puede) (decirme|contarme|explicarme) (sobre|acerca|algo)\b|"
    r"\bqu'est-ce qui est (important|notable|int[eé]ressant)\b|"
    r"\bque (faut-il|dois-je|doit-on) savoir (sur|de|à propos)\b|\bparle[sz]?-moi de\b|"
    r"\bwas ist (wichtig|bemerkenswert|besonders) (an|bei|über)\b|"
    r"\bwas (sollte|muss) (ich|man) über\b|"
    r"\bo que [eé] (importante|relevante) (sobre|em|no|na)\b|"
    r"\bo que (devo|preciso) saber (sobre|de)\b|"
    r"\bcosa [eè] (importante|rilevante) (su|di|in)\b|\bcosa (devo|bisogna) sapere su\b", re.I)


# A second question joined to the first: "What are some common transport configurations, and
# how do they affect the application?" has no one reference answer.
_SECOND_QUESTION = re.compile(
    r"[,;]? (and|or|y|o|et|ou|und|oder|e) (how|what|why|which|when|where|who|c[oó]mo|qu[eé]|"
    r"por qu[eé]|cu[aá]l(es)?|cu[aá]ndo|d[oó]nde|qui[eé]n|comment|pourquoi|quand|o[uù]|wie|was|"
    r"warum|wann|wo|wer|come|perch[eé]|quando|dove|chi|onde|quem)\b (\w+ )?(is|are|do|does|did|can|"
    r"should|will|would|es|son|se|puedo|puede|est|sont|ist|sind|è|sono)\b", re.I)


def one_question(question: str) -> tuple[bool, str]:
    """One question, not two joined by "and how ..." (each would need its own answer)."""
    m = _SECOND_QUESTION.search(question)
    return (m is None, f"asks two questions: {m.group(0).strip()!r}" if m else "")


def standalone(question: str) -> tuple[bool, str]:
    """A question a user asks the RAG system about the knowledge base: it does not point at a
    document (`_DEICTIC`), nor ask what the asker did or sees, which no document says, nor ask
    for nothing in particular (`_OPEN_ASK`), which no one reference answers."""
    if m := _DEICTIC.search(question):
        return False, f"points at a document: {m.group(0)!r}"
    if m := _ASKERS_OWN.search(question):
        return False, f"asks what the asker did or sees: {m.group(0)!r}"
    if m := _OPEN_ASK.search(question):
        return False, f"asks for nothing in particular: {m.group(0)!r}"
    return True, ""


def _token_set(text: str) -> set[str]:
    return {t for t in tokens(text) if t}


def example_questions(prompt_text: str) -> list[str]:
    """The questions inside a prompt's worked examples: JSON `"question": "..."` values,
    `Question: ...` lines and quoted questions ending in '?'."""
    found = re.findall(r'"question"\s*:\s*"([^"]+)"', prompt_text)
    found += re.findall(r"^Question:\s*(.+\?)\s*$", prompt_text, re.M)
    found += re.findall(r'"([^"\n]{8,}\?)"', prompt_text)
    return list(dict.fromkeys(q.strip() for q in found))


def not_an_example(question: str, examples: list[str]) -> tuple[bool, str]:
    mine = _token_set(question)
    for ex in examples:
        theirs = _token_set(ex)
        if mine and theirs and len(mine & theirs) / len(mine | theirs) >= EXAMPLE_SIMILARITY:
            return False, f"copies the prompt's example question {ex!r}"
    return True, ""
