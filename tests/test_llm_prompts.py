"""Prompt files: the framing the model reads lives in them (`--- list`), worked examples are
marked sections (`--- system example`), and one rule says which folder a file comes from."""

from __future__ import annotations

import re

import pytest

from builder.errors import InputError
from builder.generate.context import PROMPT_NAMES
from builder.llm.prompts import load_prompt, load_sentences, parse_prompt

FRAMED = """name: framed
version: 1
--- system
Check the items.
--- system example
Sample: "How long is a loan?"
--- system
Reply with JSON.
--- user
{{passages}}

{{avoid}}
--- list passages
<passage number="{{number}}">
{{text}}
</passage>
--- list avoid
Already asked:
- {{question}}
"""


def test_the_header_may_cap_the_reply_and_a_bad_cap_names_the_file():
    text = "name: roundtrip\nversion: 2\n{cap}--- system\nAnswer.\n--- user\n{{{{question}}}}\n"
    assert parse_prompt(text.format(cap="max_tokens: 256\n"), "r.prompt").max_tokens == 256
    assert parse_prompt(text.format(cap=""), "r.prompt").max_tokens is None
    for bad in ("lots", "0", "-5", "2.5"):
        with pytest.raises(InputError, match="r.prompt.*max_tokens.*positive whole number"):
            parse_prompt(text.format(cap=f"max_tokens: {bad}\n"), "r.prompt")


@pytest.mark.parametrize(("name", "cap"), [
    # one short phrase copied from a sentence: a runaway reply ('"C:\\"' escaping its closing
    # quote) must stop early, not run to the global 1024 tokens
    ("reader", 64),
    # three wordings of one question: of ~4,700 one-question replies 99% took at most 38 tokens
    ("question", 150),
    # one question (and two short names)
    ("compose_multi_hop", 120),
    ("compose_ambiguous", 100),
    # three names
    ("compose_unanswerable", 80)])
def test_the_short_reply_stages_cap_their_replies(name, cap):
    assert load_prompt(name).max_tokens == cap


def test_a_reply_of_many_questions_keeps_the_global_room():
    # a baseline answer is free text of any length: a cap would cut good replies
    assert load_prompt("baseline_answer").max_tokens is None


def test_lists_are_framed_by_the_file_and_values_stay_data():
    prompt = parse_prompt(FRAMED, "framed.prompt")
    messages = prompt.render({
        "passages": [{"text": "Loans last {{days}} days."}, {"text": "Fines: $1."}],
        "avoid": [{"question": "A?"}, {"question": "B?"}]})
    assert messages[1]["content"] == (
        '<passage number="1">\nLoans last {{days}} days.\n</passage>\n\n'
        '<passage number="2">\nFines: $1.\n</passage>\n\n'
        "Already asked:\n- A?\n- B?")
    # an empty list is nothing at all, heading included; a string is used as it is
    assert prompt.render({"passages": "as is", "avoid": []})[1]["content"] == "as is\n\n"


def test_the_example_is_part_of_the_system_message_and_found_by_its_mark():
    prompt = parse_prompt(FRAMED, "framed.prompt")
    system = prompt.render({"passages": [], "avoid": []})[0]["content"]
    assert system == 'Check the items.\nSample: "How long is a loan?"\nReply with JSON.'
    assert prompt.examples == ('Sample: "How long is a loan?"',)


def test_every_generation_prompt_marks_its_worked_example():
    for name in PROMPT_NAMES:
        assert load_prompt(name).examples, name


def test_one_folder_rule_for_prompts_and_sentence_files(tmp_path, monkeypatch):
    env, cli = tmp_path / "env", tmp_path / "cli"
    facts = open(load_prompt("question").source, encoding="utf-8").read()
    for folder, word in ((env, "env"), (cli, "cli")):
        folder.mkdir()
        (folder / "refusals.md").write_text(f"en: Not known ({word}).\n", encoding="utf-8")
        (folder / "question.prompt").write_text(re.sub(r"version: \d+", f"version: {word}", facts),
                                             encoding="utf-8")
    monkeypatch.setenv("GOLDEN_PROMPTS", str(env))
    assert load_sentences("refusals.md")["en"] == "Not known (env)."
    assert load_prompt("question").version == "env"
    # --prompts wins over GOLDEN_PROMPTS, for prompt and sentence files alike
    assert load_sentences("refusals.md", str(cli))["en"] == "Not known (cli)."
    assert load_prompt("question", str(cli)).version == "cli"
    # a file the override folder lacks comes from the bundled prompts
    assert load_sentences("refusal_phrases.md", str(cli))
    assert load_prompt("reader", str(cli)).source.endswith("reader.prompt")
    assert not load_prompt("reader", str(cli)).source.startswith(str(cli))


def test_an_override_list_must_use_fields_the_stage_passes(tmp_path):
    bundled = open(load_prompt("reader").source, encoding="utf-8").read()
    (tmp_path / "reader.prompt").write_text(
        bundled.replace("[{{number}}] {{text}}", "[{{number}}] {{text}} ({{source}})"),
        encoding="utf-8")
    with pytest.raises(InputError, match=r"reader.prompt:\d+: unknown placeholder "
                                         r"\{\{source\}\}; each of the reader "
                                         r"prompt's sentences has number, text"):
        load_prompt("reader", str(tmp_path))
    (tmp_path / "reader.prompt").write_text(
        bundled[:bundled.index("--- list sentences")], encoding="utf-8")
    with pytest.raises(InputError, match=r"\{\{sentences\}\} is a list: the prompt needs a "
                                         r"'--- list sentences' section"):
        load_prompt("reader", str(tmp_path))


@pytest.mark.parametrize("filename", ["refusals.md", "threshold_ceiling.md", "threshold_floor.md"])
def test_a_sentence_golden_writes_into_items_exists_for_every_supported_language(filename):
    """A threshold or unanswerable item in a supported language reads in that language, never
    the English fallback; a threshold sentence names the amount it asks about."""
    from builder.text.lexicon import SUPPORTED

    sentences = load_sentences(filename)
    assert set(SUPPORTED) <= set(sentences), set(SUPPORTED) - set(sentences)
    if filename.startswith("threshold_"):
        assert all(s.count("{amount}") == 1 and s.rstrip().endswith(("?", "？"))
                   for s in sentences.values())
