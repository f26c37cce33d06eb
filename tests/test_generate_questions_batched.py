"""One question call writes for several spans: each span gets the wordings written for it, a
reply missing a passage's list stores nothing (its spans are asked again), and a retry shown
its partner's question is asked alone."""

from __future__ import annotations

from builder.generate import questions
from builder.generate.models import GenerateOptions
from builder.generate.runner import run_generate
from builder.llm.prompts import load_prompt
from builder.store.candidates import load_candidates

from tests.fakes import ScriptedLLM
from tests.support.scripted_kb import ANSWERS, ideal, with_overrides
from tests.test_generate_pipeline import _fails_first_unless_shown_a_partner


def run(store, llm, **kw):
    return run_generate(store, llm, GenerateOptions(**{"n": 10, **kw}))


def test_a_call_asks_for_several_spans_and_each_keeps_its_own_wordings(kb_store):
    llm = ScriptedLLM(ideal)
    run(kb_store, llm, types=["single_hop"])
    asked = [v for name, v, _ in llm.calls if name == "question"]
    assert max(llm.batches) == questions.BATCH and all(b <= questions.BATCH for b in llm.batches)
    assert len(llm.batches) < len(asked)  # fewer calls than spans asked
    singles = [c for c in load_candidates(kb_store) if c["type"] == "single_hop"]
    assert len(singles) == len(asked)
    for c in singles:
        # the ideal writer registers each question with the answer and passage it wrote it for:
        # a wording given to the wrong span would carry another span's answer
        answer, needs = ANSWERS[c["question"]]
        assert answer == c["answer"] and needs[0] in c["evidence"][0]["quote"]


class ShortReplies(ScriptedLLM):
    """The ideal writer, but its reply covers only the first passage of each call."""

    def _per_passage(self, prompt, variables, role):
        return {"passage_1": super()._per_passage(prompt, variables, role)["passage_1"]}


def test_a_reply_missing_a_passage_stores_nothing_and_the_spans_are_asked_again(kb_store):
    short = ShortReplies(ideal)
    summary = run(kb_store, short, types=["single_hop"], n=4)
    several = [b for b in short.batches if b > 1]
    assert several and summary.llm_failures >= len(several)
    assert len(load_candidates(kb_store)) == len(short.batches) - len(several)
    lost = {(v["passage"], v["answer"]) for v in _passages_of_calls(short, several=True)}
    # the next run asks those spans again
    again = ScriptedLLM(ideal)
    run(kb_store, again, types=["single_hop"], n=12)
    assert lost <= {(v["passage"], v["answer"]) for name, v, _ in again.calls
                    if name == "question"}


def _passages_of_calls(llm, several: bool):
    """The recorded variables of the passages of the question calls that held several."""
    asked = [v for name, v, _ in llm.calls if name == "question"]
    out, at = [], 0
    for size in llm.batches:
        if size > 1 or not several:
            out += asked[at:at + size]
        at += size
    return out


def test_a_retry_shown_its_partners_question_is_asked_alone(kb_store):
    asked: list[str] = []
    llm = ScriptedLLM(with_overrides(
        question=_fails_first_unless_shown_a_partner("$19 per year", asked)))
    run(kb_store, llm)
    assert len(asked) == 2 and asked[1]  # asked again, shown a partner
    calls = [v for name, v, _ in llm.calls if name == "question"]
    at = next(i for i, v in enumerate(calls) if v["partner"])
    sizes = [size for size in llm.batches for _ in range(size)]
    assert sizes[at] == 1  # the retry's call holds that one passage


def test_the_prompt_writes_each_passage_with_its_own_hint_line():
    prompt = load_prompt("question")
    one = {"language": "English", "title": "Plans", "passage": "Gold costs $49.",
           "answer": "$49", "kind": "an amount of money", "mention": [{"text": "Gold"}]}
    two = {**one, "passage": "Basic costs $19.", "answer": "$19", "mention": []}
    user = prompt.render({"partner": [], "passages": [one, two]})[-1]["content"]
    first, second = user.split("Passage 2")
    assert "Passage 1" in first and "Gold costs $49." in first
    assert "must contain the words: Gold" in first and "must contain" not in second
    assert "Basic costs $19." in second and "Answer: $19 (an amount of money)" in second
