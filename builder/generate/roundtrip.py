"""Round-trip consistency: answer the finished question again, independently, and keep the item
only when code finds that answer agrees with the reference (Alberti et al., ACL 2019,
"Synthetic QA Corpora Generation with Roundtrip Consistency").

Why not ask a verifier "is this answer supported?": small models say yes to nearly everything
(measured with the embedded 0.5B and 1.5B: 0-2 of 15 planted false claims caught, and every bad
item of a 19-item run on a public handbook passed). Asked instead to *answer* the question from
passages, without seeing the reference, the same model gives a short answer that code compares
with the reference (`answers_match`: numbers, yes/no polarity, token recall/F1). A question that
is vague, asks for something the reference does not give, or has a wrong reference rarely gets
the same answer back.

One prompt (`roundtrip.prompt`, role "verifier"), four uses:
- `roundtrip`: from the cited chunk(s) only; the answer must agree with the reference;
- `unique`: with the answer hidden (`masked`) in the cited window, plus the top-k other chunks
  of the WHOLE knowledge base; a grounded answer that disagrees with the reference means the
  question does not pin its subject down (another value of the same chunk, another level of a
  rubric, another plan answers it);
- `absent` (unanswerable items): from the top-k chunks of the whole knowledge base; a grounded
  answer means the knowledge base does answer it;
- `alone` (multi-hop items): from each cited chunk alone; agreement means one hop suffices.

"Grounded" is decided by code: the reply's answer must occur in the passage it names (tolerant
match) or have all its numbers and 80% of its content terms there. An answer the passages do
not contain is the model's own knowledge or invention and counts as "not found".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from builder.generate.models import RoundTripReply
from builder.generate.spans import locate_span
from builder.generate.terms import key_terms, numbers, spelled_numbers

PROMPT = "roundtrip"

# The first word of a yes/no answer, per language (casefolded, accents kept; Spanish "si"
# without its accent means "if", so it is not here).
_YES = frozenset("yes yeah sí oui ja sim sì да はい 是 是的 对 可以 能".split())
_NO = frozenset("no non nein não nao нет いいえ 否 不 不是 不能 不可以".split())
_FIRST_WORD = re.compile(r"^\W*(\w+)", re.UNICODE)
_CJK_LEAD = re.compile(r"^\W*(是的|不是|不能|不可以|可以|是|否|不|能|对)")

MIN_RECALL = 0.75   # share of the reference's content terms the round-trip answer holds
MIN_F1 = 0.5        # or token F1 over content terms (the round-trip answer may be shorter)
GROUNDED_TERMS = 0.8


@dataclass
class Answer:
    """One round-trip answer as code judged it."""

    status: str                 # "ok" or the failed call's status
    found: bool = False         # a grounded answer from one of the passages
    text: str = ""
    chunk_id: str | None = None
    model: str | None = None
    ungrounded: str = ""        # an answer the passages do not contain (recorded, never used)


def polarity(text: str) -> bool | None:
    """True for an answer that starts with "yes" (in any of the languages above), False for
    "no", None for any other answer."""
    m = _CJK_LEAD.match(text) or _FIRST_WORD.match(text)
    word = m.group(1).casefold() if m else ""
    if word in _YES:
        return True
    if word in _NO:
        return False
    return None


def _core(text: str) -> str:
    """The answer without its yes/no lead ("Yes, within 30 days" -> "within 30 days")."""
    if polarity(text) is None:
        return text
    m = _CJK_LEAD.match(text) or _FIRST_WORD.match(text)
    return text[m.end():].lstrip(" ,.:;-—–!")


def answers_match(reference: str, got: str, question: str = "") -> tuple[bool, str]:
    """Whether a round-trip answer agrees with the reference, and why not.

    - yes/no: when both start with yes or no, they agree when they start the same way (what
      the reason says is the reference's own: its statement);
    - numbers: every number the reference states must be in the answer (in digits, or as a
      small number in words: "five seconds" for "after 5 seconds"), and an answer whose
      numbers are all different states another value;
    - content terms, not counting those the question already holds (they carry no answer:
      "What impact does a developer make?" -> "makes an impact on the whole team" and "makes
      an impact on one subsystem" share only the question's words): the answer holds >= 75% of
      the reference's terms (it may say more: a small model copies the clause around the
      answer), or token F1 >= 0.5 (it may say less). A reference with no term beyond the
      question's matches nothing: it is a tautology.
    """
    if not got.strip():
        return False, "no answer"
    ref_pol, got_pol = polarity(reference), polarity(got)
    if ref_pol is not None and got_pol is not None:
        if ref_pol != got_pol:
            return False, f"answers {'yes' if got_pol else 'no'}, the reference {'yes' if ref_pol else 'no'}"
        return True, ""  # a yes/no question: the same yes or no is the same answer
    ref, ans = _core(reference), _core(got)
    # "five seconds" states the "5 seconds" of its reference
    ref_nums, got_nums = numbers(ref), numbers(ans) | spelled_numbers(ans)
    if ref_nums and not ref_nums <= got_nums:
        if got_nums:
            return False, f"states {', '.join(sorted(got_nums))}, the reference {', '.join(sorted(ref_nums))}"
        return False, "does not state the reference's value"
    asked = key_terms(question)
    r_all = key_terms(ref)
    r_terms, g_terms = r_all - asked, (key_terms(ans) | spelled_numbers(ans)) - asked
    if r_all and not r_terms and not ref_nums - numbers(question):
        return False, "the reference only repeats the question"
    if not r_terms:  # "Yes." / "No." / a bare number: polarity and numbers decided it
        agree = ref_pol is not None and ref_pol == got_pol or bool(ref_nums)
        return (agree, "" if agree else "nothing to compare")
    shared = r_terms & g_terms
    recall = len(shared) / len(r_terms)
    precision = len(shared) / len(g_terms) if g_terms else 0.0
    f1 = 2 * precision * recall / (precision + recall) if shared else 0.0
    if recall >= MIN_RECALL or f1 >= MIN_F1:
        return True, ""
    return False, f"shares {recall:.0%} of the reference's terms (F1 {f1:.2f})"


def grounded_in(answer: str, passages: list[dict], preferred: int = 0) -> int | None:
    """Index of the passage that states `answer` (the one the reply named first), or None.

    States = the answer text occurs in it (tolerant of case, spacing and punctuation), or all the
    answer's numbers and 80% of its content terms do. The yes/no lead is not looked for."""
    core = _core(answer).strip() or answer.strip()
    order = list(range(len(passages)))
    if 1 <= preferred <= len(passages):
        order.remove(preferred - 1)
        order.insert(0, preferred - 1)
    terms, nums = key_terms(core), numbers(core)
    for i in order:
        text = passages[i]["text"]
        if locate_span(text, core, min_chars=2) is not None:  # "5天", "$6": short but exact
            return i
        if terms and nums <= numbers(text):
            have = key_terms(text)
            if len(terms & have) / len(terms) >= GROUNDED_TERMS:
                return i
    if polarity(answer) is not None and not key_terms(core) and 1 <= preferred <= len(passages):
        return preferred - 1  # a bare "Yes"/"No": nothing to look for, trust the passage named
    return None


WINDOW = 1000  # characters of a chunk the reader sees, around what the question is about


def window(text: str, centre: int, size: int = WINDOW) -> str:
    """About `size` characters of `text` around offset `centre`, cut at line or sentence
    boundaries. Prompt tokens are what a round trip costs on a small local model (a 1.5B reads
    ~170 tokens/s on one core), and the reader needs the place the answer is, not the chunk."""
    if len(text) <= size:
        return text
    start = max(0, min(centre - size // 2, len(text) - size))
    end = start + size
    cut = max(text.rfind("\n", 0, start + 1), text.rfind(". ", 0, start + 1))
    start = cut + 1 if cut >= 0 and start - cut < 200 else start
    stop = [i for i in (text.find("\n", end), text.find(". ", end)) if i >= 0]
    end = min(stop) + 1 if stop and min(stop) - end < 200 else end
    return text[start:end].strip()


def focused(chunk: dict, question: str, evidence: str | None = None) -> dict:
    """The chunk as the reader sees it: the window around its evidence (cited chunks) or
    around the sentence that shares the most terms with the question (other chunks)."""
    text = chunk["text"]
    centre = -1
    if evidence:
        span = locate_span(text, evidence)
        centre = (span[0] + span[1]) // 2 if span else -1
    if centre < 0:
        want = key_terms(question)
        best = (-1, 0)
        for m in re.finditer(r"[^.\n]+[.\n]?", text):
            score = len(key_terms(m.group(0)) & want)
            if score > best[0]:
                best = (score, (m.start() + m.end()) // 2)
        centre = best[1]
    return {**chunk, "text": window(text, centre)}


MASK = "___"


def masked(chunk: dict, answer: str) -> dict:
    """The chunk with every occurrence of `answer` hidden (case-insensitive), for asking the
    question again without its answer."""
    core = answer.strip()
    if not core:
        return chunk
    return {**chunk, "text": re.sub(re.escape(core), MASK, chunk["text"], flags=re.I)}


async def ask(ctx, question: str, chunks: list[dict]) -> Answer:
    """One answering call over `chunks` (in that order; pass them through `focused` first),
    judged by code against the same texts. No chunks: not found, no call."""
    if not chunks:
        return Answer(status="ok")
    res = await ctx.call(PROMPT, {"passages": [{"text": c["text"]} for c in chunks],
                                  "question": question}, RoundTripReply, role="verifier")
    model = res.model or ctx.model("verifier", PROMPT)
    if not res.ok:
        return Answer(status=res.status, model=model)
    reply = res.value
    text = " ".join(reply.answer.split())
    if not any(ch.isalnum() for ch in text) or MASK in text:
        # nothing, or the hidden answer's placeholder read back, whole or in part ("__")
        return Answer(status="ok", model=model)
    at = grounded_in(text, chunks, reply.passage)
    if at is None:
        return Answer(status="ok", model=model, ungrounded=text)
    return Answer(status="ok", found=True, text=text, chunk_id=chunks[at]["id"], model=model)

