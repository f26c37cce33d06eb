"""The one language rule (builder/text/language.py): script first, then a stopword profile for
Latin text, "en" when unsure; ingest stores it and the verifier checks every language with it."""

from __future__ import annotations

import pytest

from builder.generate.form import language_problem
from builder.store import Store
from builder.text.language import detect_language, language_name

SAMPLES = {
    "en": ["Items can be returned within 45 days of purchase.",
           "How much does standard shipping cost?"],
    "es": ["Northwind acepta devoluciones dentro de los 30 días posteriores a la compra.",
           "¿Cuánto cuesta el envío estándar?"],
    "fr": ["Les retours sont acceptés dans les 30 jours suivant la date d'achat.",
           "Combien coûte la livraison standard ?"],
    "de": ["Rücksendungen werden innerhalb von 30 Tagen nach dem Kauf akzeptiert.",
           "Wie viel kostet der Standardversand?"],
    "pt": ["Aceitamos devoluções em até 30 dias após a compra.",
           "Quanto custa o envio padrão?"],
    "it": ["I resi sono accettati entro 30 giorni dalla data di acquisto.",
           "Quanto costa la spedizione standard?"],
    "nl": ["Retouren worden binnen 30 dagen na aankoop geaccepteerd.",
           "Hoeveel kost de standaardverzending?"],
    "zh": ["退货政策：自购买之日起四十五天内可以退货，需要提供收据。", "标准配送需要几天？"],
    "ja": ["返品は購入日から30日以内に受け付けます。", "返品の期限は何日ですか？"],
    "ko": ["반품은 구매일로부터 30일 이내에 가능합니다.", "반품 기한은 며칠입니까?"],
}


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_each_language_by_script_or_stopwords(language):
    for text in SAMPLES[language]:
        assert detect_language(text) == language, text


@pytest.mark.parametrize("text", [
    "", "42", "de", "Gold", "Trail Pro 2", "```\nprint(1)\n```", "la de",  # la de: es, fr, it tie
])
def test_short_or_ambiguous_text_is_english(text):
    assert detect_language(text) == "en"


@pytest.mark.parametrize("language, text", [
    # log lines full of hex addresses: 0x1f1e8e0 once read as the Portuguese words "f e e"
    ("en", "Enable debug logging to see each connection:\n\n```\nDEBUG connect_tcp.complete "
           "return_value=<SyncStream object at 0x101f1e8e0> a 0x1020f49a0 e 0x10ae0d0a0\n```\n"),
    # a config snippet's `as`, `a`, `o` are not Portuguese prose around it
    ("es", "### Caddy\n\n```plain\nhandle /notas* {\n  import a as o\n  rewrite * /serve a o\n}\n"
           "```\n\nEste extracto de configuración redirige el sitio a la bóveda publicada."),
    ("es", "Consulta `a o as e` en la documentación para un ejemplo completo."),
])
def test_code_and_numbers_do_not_vote(language, text):
    assert detect_language(text) == language


def test_a_yes_no_table_under_an_english_sentence_is_english():
    # "a", "as" and the table's "No" are Portuguese words too; they are English ones as well
    text = ("# Tester\n\nRole also known as quality engineer, requires a deep level of skill.\n\n"
            "| Level | Senior |\n| :---: | :---: |\n| 1 | No |\n| 2 | No |\n| 3 | No |\n")
    assert detect_language(text) == "en"


def test_mixed_scripts_and_long_texts():
    assert detect_language("Gold membership的价格是多少？") == "zh"  # CJK is a fifth of the letters
    assert detect_language("The Gold plan (金卡) costs $49 per year.") == "en"
    # a long document is judged on its beginning and middle, at a flat cost
    spanish = "El envío estándar tarda cinco días y cuesta seis dólares. " * 400
    assert detect_language(spanish + "Shipping is free. " * 50) == "es"


def test_language_names_for_prompts():
    assert language_name("es") == "Spanish (español)"
    assert language_name("zh-Hans") == "Chinese (simplified, 简体中文)"
    assert language_name(None) == "English" and language_name("sv") == "sv"


def test_ingest_labels_documents_and_chunks(tmp_path, golden_cli):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "devoluciones.md").write_text(
        "# Devoluciones\n\n" + SAMPLES["es"][0] + " El reembolso se hace en cinco días.\n",
        encoding="utf-8")
    (kb / "returns.md").write_text("# Returns\n\n" + SAMPLES["en"][0] + "\n", encoding="utf-8")
    (kb / "henpin.md").write_text("# 返品\n\n" + SAMPLES["ja"][0] + "\n", encoding="utf-8")
    code, _, err = golden_cli("--db", str(tmp_path / "g.db"), "ingest", str(kb))
    assert code == 0, err
    with Store(tmp_path / "g.db") as store:
        docs = {r["id"]: r["language"] for r in store.query("SELECT id, language FROM documents")}
        chunks = {r["document_id"]: r["language"]
                  for r in store.query("SELECT document_id, language FROM chunks")}
    assert docs == chunks == {"devoluciones.md": "es", "returns.md": "en", "henpin.md": "ja"}


@pytest.mark.parametrize("language, good, bad", [
    ("ja", "返品の期限は何日ですか？", "How many days do I have to return an item?"),
    ("es", "¿Cuántos días tengo para devolver un artículo?", "How many days do I have to return it?"),
    ("en", "How many days do I have to return an item?", "¿Cuántos días tengo para devolverlo?"),
])
def test_the_question_check_reads_every_language_alike(language, good, bad):
    assert language_problem(good, language) is None
    assert language_problem(bad, language).endswith(f"the passage is in {language}")
