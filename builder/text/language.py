"""The one language rule: `detect_language(text)` -> an ISO 639-1 code, used by ingest (stored
per document and chunk), by the generator (which language to write in) and by the verifier
(is the question in its chunk's language?).

golden only needs to know which language to write and check questions in, so this is a small
deterministic rule, not a statistical classifier:

1. Script. Han ideographs, kana and hangul are counted among the letters. When they are at
   least `CJK_SHARE` (a fifth) of the letters -- one CJK character carries about a word, a
   Latin word about five letters, so a fifth is roughly half the words -- the text is "ko" when
   hangul is most of them, "ja" when kana are at least a tenth of them (Chinese never writes
   kana; Japanese sentences always do), else "zh".
2. Latin script: a stopword profile. Each word that is a frequent function word of English,
   Spanish, French, German, Portuguese, Italian or Dutch (`PROFILES`) scores for every language
   listing it; a few letters only one of them uses (ñ ¿ ¡, ã õ, ß ä ö ü) score too. The best
   language wins when it scores at least `MIN_SCORE` and strictly more than any other. Code
   (fenced blocks, inline spans) and words with digits do not vote: a hex address such as
   0x1f1e8e0 reads as the Portuguese words "f e e", and `as`, `a`, `o` of a config snippet as
   Portuguese too, which made two chunks of an English software manual and two Spanish ones
   "pt".
3. Anything else -- no letters, a short or ambiguous text ("de", a product name), another
   script -- is "en", the default.

Long texts are sampled (the first 3,000 characters and 3,000 from the middle; the stopword
profile reads the first 600 of those) so the cost stays flat whatever the document's size:
ingest calls this for every chunk.
"""

from __future__ import annotations

import re
import string
from collections import Counter

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs (+ extension A, compatibility)
KANA = "\u3040-\u30ff"                            # hiragana and katakana
HANGUL = "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"  # jamo, compatibility jamo, syllables
HAN_CHAR = re.compile(f"[{HAN}]")
CJK_CHAR = re.compile(f"[{HAN}{KANA}{HANGUL}]")  # a letter of a script written without spaces

CJK_SHARE = 0.2
KANA_SHARE = 0.1
MIN_SCORE = 2
DEFAULT = "en"
_SAMPLE = 3000

_SCRIPT_CHARS = (HAN_CHAR, re.compile(f"[{KANA}]"), re.compile(f"[{HANGUL}]"))
_LETTER = re.compile(r"[^\W\d_]")

# Frequent function words and question words of each language. Data, not prose: a word shared
# by several languages scores for each of them, so only the distinctive ones decide.
PROFILES: dict[str, frozenset[str]] = {lang: frozenset(words.split()) for lang, words in {
    "en": """the a and of to in is are was were for with on that this it be by as at from or an
        you your can will not no have has what which how when where does do did if within after
        before there their they we our""",
    "es": """el la los las de del y en que es son un una por para con se al lo su sus como más
        pero está están qué cuál cuáles cuánto cuánta cuántos cuántas cuándo dónde cómo puedo
        puede hay no si desde hasta días usted""",
    "fr": """le la les de des du et en un une est sont pour dans que qui au aux avec sur par pas
        ne ce cette il vous votre quel quelle quels quelles combien quand où comment peut puis
        jours""",
    "de": """der die das den dem des und ist sind ein eine einen mit für auf von zu im nicht sie
        es wie was wann wo welche welcher welches kann können bei nach tage oder auch wird
        viel""",
    "pt": """o a os as de do da dos das e em no na nos nas um uma para com por que é são não se
        ao qual quais quanto quanta quantos quando onde como posso pode dias você""",
    "it": """il lo la i gli le di del della e è in un una per con che non sono da al alla dei
        delle si quale quali quanto quanta quando dove come posso può giorni""",
    "nl": """de het een en van in is zijn op met voor niet dat die te aan om er ook bij wat hoe
        hoeveel wanneer waar welke kan kunnen dagen je uw u worden wordt""",
}.items()}
_LANGUAGES_OF: dict[str, tuple[str, ...]] = {}  # word -> the profiles listing it
for _lang, _words in PROFILES.items():
    for _word in _words:
        _LANGUAGES_OF[_word] = (*_LANGUAGES_OF.get(_word, ()), _lang)
_LETTER_HINTS = {"ñ": "es", "¿": "es", "¡": "es", "ã": "pt", "õ": "pt", "ß": "de", "ä": "de",
                 "ö": "de", "ü": "de"}
_PROFILE_CHARS = 600  # ~100 words, ~40 of them function words: enough, and ingest stays fast
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)  # an unclosed fence runs to the end
_DIGIT = re.compile(r"\d")
_NOT_LETTERS = str.maketrans({c: " " for c in string.punctuation  # words with digits are gone
                              + "¿¡«»“”‘’„—–…·•"})

LANGUAGE_NAMES = {
    "en": "English", "es": "Spanish (español)", "fr": "French (français)",
    "de": "German (Deutsch)", "pt": "Portuguese (português)", "it": "Italian (italiano)",
    "nl": "Dutch (Nederlands)", "zh": "Chinese (simplified, 简体中文)", "ja": "Japanese (日本語)",
    "ko": "Korean (한국어)",
}


def detect_language(text: str, default: str = DEFAULT) -> str:
    """The ISO 639-1 code of `text`'s language by the rule of the module doc, `default` when
    unsure (ingest passes a chunk its document's language: an options table shows none)."""
    if len(text) > 2 * _SAMPLE:
        mid = len(text) // 2
        text = text[:_SAMPLE] + text[mid:mid + _SAMPLE]
    if not text.isascii():  # an ASCII text has no CJK letter: skip the script count
        han, kana, hangul = (len(pattern.findall(text)) for pattern in _SCRIPT_CHARS)
        cjk = han + kana + hangul
        if cjk and cjk >= CJK_SHARE * len(_LETTER.findall(text)):
            if hangul * 2 > cjk:
                return "ko"
            return "ja" if kana >= KANA_SHARE * (han + kana) else "zh"
    return _latin_language(text, default)


def _latin_language(text: str, default: str) -> str:
    lowered = _CODE.sub(" ", text)[:_PROFILE_CHARS].lower()
    prose = " ".join(word for word in lowered.split() if not _DIGIT.search(word))
    scores: Counter = Counter()
    languages_of = _LANGUAGES_OF.get
    for word in prose.translate(_NOT_LETTERS).split():  # C-speed; ingest calls this per chunk
        for lang in languages_of(word, ()):
            scores[lang] += 1
    if not lowered.isascii():
        for letter, lang in _LETTER_HINTS.items():
            if letter in lowered:
                scores[lang] += lowered.count(letter)
    ranked = scores.most_common(2)
    if not ranked or ranked[0][1] < MIN_SCORE or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
        return default
    return ranked[0][0]


def language_name(code: str | None) -> str:
    """How a prompt names the language to write in ("es" -> "Spanish (español)"); an unknown
    code is given as it is."""
    return LANGUAGE_NAMES.get((code or DEFAULT).split("-")[0], code or LANGUAGE_NAMES[DEFAULT])
