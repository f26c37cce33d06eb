"""Which statements are worth a single-hop question, and the answer code picks for them."""

import pytest

from builder.generate.worth import assess, common_terms


def fact(text, evidence=None, title=None):
    return {"text": text, "evidence": evidence or text, "title": title}


@pytest.mark.parametrize("text,kind,answer", [
    ("We offer 25 days of holiday plus bank holidays each calendar year.", "value", "25 days"),
    ("The lump sum is the equivalent of three times your basic salary.", "definition",
     "the equivalent of three times your basic salary"),
    ("Request your holiday through BreatheHR and wait for approval.", "name", "BreatheHR"),
    ("TOIL should be agreed with your delivery lead ahead of doing the extra work.", "rule", None),
    ("La licencia Catalyst es una compra única que te da acceso anticipado a versiones beta.",
     "definition", "una compra única que te da acceso anticipado a versiones beta"),
])
def test_specific_statements_are_worthy_with_the_answer_code_picks(text, kind, answer):
    w = assess(fact(text))
    assert w.worthy and w.kind == kind and w.answer == answer


def test_a_labelled_rubric_item_is_answered_by_its_description():
    w = assess(fact("Adopts: actively learns and adopts the technology and tools defined by the team",
                    "**Adopts**: actively learns and adopts the technology and tools defined by the team"))
    assert w.worthy and w.kind == "label"
    assert w.answer == "actively learns and adopts the technology and tools defined by the team"


@pytest.mark.parametrize("text,evidence,reason", [
    ("This page lists some common problems you could encounter.", None, "about the document"),
    ("Here's a guide that covers how we can support your home working.", None, "about the document"),
    ("It is safe to upload large files this way.", None, "needs the sentence before"),
    ("The health and wellbeing of our employees is a priority.", None, "nothing specific"),
    ("See the payments guide.", "See [the payments guide](https://x.test/payments).", "document"),
    ("Haz clic en Cambio.", None, "too short"),
    ("If you are required to complete jury service, dxw will pay your normal salary less "
     "£64.95 per day.", None, "a deduction"),
])
def test_statements_with_nothing_specific_to_ask_are_not_worthy(text, evidence, reason):
    w = assess(fact(text, evidence))
    assert not w.worthy and reason in w.reason


def test_a_name_used_everywhere_is_never_the_answer():
    chunks = [{"text": f"httpx page {i} about clients"} for i in range(10)]
    common = common_terms(chunks)
    assert "httpx" in common
    w = assess(fact("By default the client created by `httpx` reads the proxy settings.",
                    "By default the client created by `httpx` reads the proxy settings."), common)
    assert w.answer != "httpx"


def test_a_capitalised_first_word_is_not_part_of_a_name():
    # after a lead-in, "Reinicia Obsidian para aplicar los cambios" was asked for as the name
    # of a settings profile; the name is "Obsidian" (common in that KB: nothing to ask)
    text = "Para crear un nuevo perfil de ajustes: Reinicia Obsidian para aplicar los cambios."
    assert assess(fact(text)).answer == "Obsidian"
    assert not assess(fact(text), frozenset({"obsidian"})).worthy
    w = assess(fact("Request your holiday through BreatheHR and wait for approval."))
    assert w.answer == "BreatheHR"


def test_a_step_of_a_numbered_procedure_is_not_worth_a_question():
    step = fact("Configure httpx to use the certificates stored in client.pem.",
                "Configure `httpx` to use the certificates stored in `client.pem`.")
    assert assess(step).worthy  # on its own, a name to ask for
    w = assess({**step, "step": True})
    assert not w.worthy and "step" in w.reason


def test_a_further_reading_label_is_not_answered_by_its_links():
    # a labelled entry whose description is only links points at other pages
    text = "[!abstract] Lectura adicional: [[Gestionar sitios]], [[Personalizar tu sitio]]"
    w = assess(fact(text, "[!abstract] **Lectura adicional**: [[Gestionar sitios]], "
                          "[[Personalizar tu sitio]]"))
    assert not w.answer
    kept = assess(fact("Scope: owns a whole subsystem and its roadmap",
                       "**Scope**: owns a whole subsystem and its roadmap"))
    assert kept.kind == "label"
