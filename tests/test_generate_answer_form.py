"""Form checks: does the reference answer answer the question it belongs to?"""

import pytest

from builder.generate import answer_form as af


@pytest.mark.parametrize("question,answer,ok", [
    ("How many days of holiday do staff get?", "25 days", True),
    ("How many days of holiday do staff get?", "Plenty, agreed with your manager", False),
    ("How long is the probation period?", "six months", True),
    ("When are expenses paid?", "At the end of each month", True),
    ("When are expenses paid?", "through BreatheHR", False),
    ("Who approves holiday requests?", "your line manager", True),
    ("What is the purpose of a holiday?", "25 days", False),
    ("Can I carry over unused holiday?", "Yes, up to 5 days", True),
    ("Can I carry over unused holiday?", "up to 5 days", False),
    ("Which tool is used to book holiday?", "Yes", False),
    ("¿Cuántos GB incluye Sync Plus?", "10 GB", True),
    ("¿Cuándo se renueva la licencia?", "cada año", True),
    # plain "how" asks for a way: one word names none, code or steps do
    ("¿Cómo se fusionan los archivos en conflictos de ajustes?", "JSON.", False),
    ("How do I enable HTTP/2?", "2 dependencies", False),
    ("How do I disable environment variables?", "httpx.Client(trust_env=False)", True),
    ("¿Cómo cambio el ID del sitio?", "Haz clic en Cambiar sitio", True),
    ("How long is the loan?", "21 days", True),  # "how long" stays a duration question
    # a one-character fragment is no answer, whatever the question; a one-letter name is
    ("¿En qué ubicaciones puedes almacenar tus bóvedas?", "D:\\", False),
    ("Which plan includes phone support?", "B", True),
    ("What does the Basic plan cost?", "$5", True),
    # a placeholder of the source is no value ("sync-xx.obsidian.md")
    ("¿Cuál es el número que representa un acceso a Sync?", "xx", False),
    ("What should you pass?", "<...>", False),
    # a template with a part left out is no value either; a call with all its arguments is
    ("What should you pass when instantiating a Client?", "verify=<...>", False),
    ("What parameter does requests.Session.request() allow?", "proxies=...", False),
    ("How do I disable environment variables?", 'httpx.get("<url>", trust_env=False)', False),
    ("Which argument sets the encoding?", "encoding=\"utf-8\"", True),
    # links alone point at pages; a question for a file wants a file name
    ("¿Qué se debe leer para crear un sitio?", "[[Gestionar sitios]], [[Personalizar tu sitio]]", False),
    ("Where is the changelog?", "[the changelog](https://example.org/changes)", False),
    ("¿Cuál es el nombre del archivo que anula las carpetas excluidas?", "publish: true", False),
    ("¿Cuál es el nombre del archivo que establece el favicon?", "favicon-32x32.png", True),
    ("What file contains credentials for specified hosts?", ".netrc", True),
    ("Which file do you add to hide media from the gallery?", "`.nomedia`", True),
    ("How do I stream a response?", "client.stream('GET', url)", True),
    ("Which size fits?", "XXL", True),
    # an answer cut off on a word that needs the next one; a capitalised label is whole
    ("What is the minimum nursery fee?", "at least £1,000 per", False),
    ("What error do you see?", "errors along the lines of", False),
    ("¿Qué plan incluye el historial?", "el plan Plus y", False),
    ("En qué sección de la factura editas la dirección?", "Bill To", True),
    ("What is the fee?", "£1,000 per month", True),
])
def test_the_answer_is_of_the_kind_the_question_asks_for(question, answer, ok):
    assert af.fits_question(question, answer)[0] is ok


@pytest.mark.parametrize("question,answer,ok", [
    ("What is an occasional side project?", "An occasional side project, free or paid.", False),
    ("How can you support Obsidian?", "You can support Obsidian.", False),
    ("Which tool is used to request holiday?", "BreatheHR", True),
    ("Can you carry over holiday?", "Yes", True),
])
def test_the_answer_adds_what_the_question_does_not_say(question, answer, ok):
    assert af.adds_information(question, answer)[0] is ok


def test_restating_a_long_statement_is_not_an_answer():
    statement = ("TOIL should be agreed with your delivery lead or line manager ahead of doing "
                 "the extra work.")
    assert not af.not_sentence_copy("How do you calculate TOIL?", statement, statement)[0]
    assert af.not_sentence_copy("Who agrees TOIL?", "your delivery lead or line manager", statement)[0]
    assert af.not_sentence_copy("Must TOIL be agreed in advance?", "Yes. " + statement, statement)[0]


def test_questions_that_point_at_a_document_are_not_standalone():
    assert not af.standalone("What is the main focus of this section of the Playbook?")[0]
    assert not af.standalone("¿Qué explica esta página?")[0]
    assert af.standalone("What does section 4 of the contract cover?")[0]
    # "the locations mentioned": mentioned where? (an unanswerable item, Obsidian's help)
    assert not af.standalone("¿Cuándo se sincroniza tu bóveda en las ubicaciones mencionadas?")[0]
    assert not af.standalone("When is the vault synced in the mentioned locations?")[0]
    assert af.standalone("¿Qué plan menciona el límite de 10 GB?")[0]
    # a pair it never names (httpx's docs: "override the method and raise RuntimeError")
    assert not af.standalone("What should you raise when only one of the two methods is supported?")[0]
    assert not af.standalone("¿Qué describen los dos enfoques de sincronización?")[0]
    assert af.standalone("What is the difference between Sync Standard and Sync Plus?")[0]
    # what the asker did or sees is in no document; what the asker must do is
    assert not af.standalone("What command did you run to set the SSL_CERT_DIR variable?")[0]
    assert not af.standalone("What is the error message you are seeing with an HTTPS proxy?")[0]
    assert not af.standalone("¿Qué error estás viendo al sincronizar?")[0]
    assert not af.standalone("¿Cuál es el nombre de la imagen en nuestro ejemplo anterior?")[0]
    assert not af.standalone("What is the image called in our example?")[0]
    assert not af.standalone("Do you have any specific questions about resource limits?")[0]
    assert af.standalone("Do you have job openings at Northwind?")[0]
    assert af.standalone("How much do you have to pay for shipping?")[0]


@pytest.mark.parametrize("question", [
    "¿Qué es importante sobre CloudFlare?",               # passed the verifier, Obsidian's help
    "Can you tell me about the stream_id response extension in HTTP/2?",   # and on httpx's docs
    "What should I know about parental leave?",
    "¿Qué debo saber sobre la sincronización?",
    "Was ist wichtig bei der Rückgabe?",
])
def test_a_question_that_asks_for_nothing_in_particular_is_rejected(question):
    ok, why = af.standalone(question)
    assert not ok and why.startswith("asks for nothing in particular")


@pytest.mark.parametrize("question", [
    "What is important to bring to the first day?",        # asks for a thing to bring
    "What do I need to know before I can book leave?",
    "Which provider is officially supported for custom domains?",
    "¿Qué proveedor es el único oficialmente soportado?",
])
def test_a_specific_question_near_those_words_is_not(question):
    assert af.standalone(question)[0]


def test_two_questions_joined_are_not_one():
    assert not af.one_question("What are some common transport configurations for the Client, "
                               "and how do they affect the application?")[0]
    assert not af.one_question("¿Qué es Obsidian Sync y cómo se configura?")[0]
    assert af.one_question("What happens to returns and refunds after 30 days?")[0]
    assert not af.one_question("How do I enable HTTP/2 and which package does it need?")[0]
    assert af.one_question("Who approves holiday and expense requests?")[0]
    assert af.standalone("What command do you run to rebuild the certificate index?")[0]
    assert af.standalone("Did you know that Sync keeps a version history?")[0]


def test_a_prompt_example_question_is_recognised_whatever_the_kb():
    prompt = ('Example reply: {"question": "How much does a pass cost?", "answer": "It depends"}\n'
              "Question: How much does a library card cost a visitor?\n")
    examples = af.example_questions(prompt)
    assert "How much does a pass cost?" in examples
    assert not af.not_an_example("How much does a pass cost?", examples)[0]
    assert not af.not_an_example("How much does the pass cost?", examples)[0]
    assert af.not_an_example("How much does the Gold membership cost per year?", examples)[0]


def test_function_words_of_other_languages_are_not_content():
    from builder.generate.terms import key_terms
    assert key_terms("el tamaño de la bóveda") == {"tamaño", "bóveda"}
    assert key_terms("la taille du coffre dans les paramètres") == {"taille", "coffre", "paramètres"}
    # an English content word that is a function word elsewhere stays ("sea", "son", "MIT")
    assert key_terms("the sea and the MIT licence") == {"sea", "mit", "licence"}
    # a Spanish tautology no longer hides behind "de", "la", "con"
    assert not af.adds_information("¿Qué es Obsidian Sync?", "Obsidian Sync de la cuenta con Obsidian")[0]


def test_who_is_answered_by_someone_not_by_a_place_or_tool():
    evidence = ("The People team will book any bank holidays that fall on a working day as annual "
                "leave in BreatheHR on your behalf.")
    question = "Who will book bank holidays as annual leave?"
    assert af.who_is_someone(question, "BreatheHR", evidence)[0] is False
    assert af.who_is_someone(question, "The People team", evidence)[0] is True
    assert af.who_is_someone("Who approves TOIL?", "your line manager",
                             "TOIL is approved by your line manager.")[0] is True
    assert af.who_is_someone("¿Quién revisa la solicitud?", "Soporte",
                             "Envía la solicitud en Soporte.")[0] is False
    assert af.who_is_someone("Which tool books leave?", "BreatheHR", evidence) is None


def test_an_obsidian_block_id_is_not_part_of_a_statement_or_an_answer():
    from builder.generate.statements import plain
    from builder.generate.worth import assess
    assert plain("**Oceanía**: Sídney, Australia ^sync-geo-regions") == "Oceanía: Sídney, Australia"
    assert plain("Costs 3 ^ 2 units") == "Costs 3 ^ 2 units"  # not a block id
    worth = assess({"text": "Oceanía: Sídney, Australia",
                    "evidence": "**Oceanía**: Sídney, Australia ^sync-geo-regions"})
    assert worth.answer == "Sídney, Australia"
    # on a line of its own under a quote, as Obsidian's help writes it
    assert plain("**Oceanía**: Sídney, Australia\n^sync-geo-regions") == "Oceanía: Sídney, Australia"
    worth = assess({"text": "Oceanía: Sídney, Australia",
                    "evidence": "**Oceanía**: Sídney, Australia\n^sync-geo-regions"})
    assert worth.answer == "Sídney, Australia"
    # an answer that copied it anyway is rejected
    ok, why = af.fits_question("¿En qué lugar de Oceanía se alojan los servidores de Obsidian Sync?",
                               "Sídney, Australia ^sync-geo-regions")
    assert not ok and "^sync-geo-regions" in why
    assert af.fits_question("¿Dónde se alojan?", "Sídney, Australia")[0]


@pytest.mark.parametrize("answer,evidence,inside", [
    ("8 face", "You can have up to 8 face-to-face sessions a year.", "8 face-to-face"),
    ("1 b", "Puedes tener 1 bóveda remota.", "1 bóveda"),
    ("Dig", "HTTPX supports Digest auth.", "Digest"),
    # whole somewhere in the evidence: not cut
    ("face", "Meet face-to-face, or face the music.", None),
    ("25 days", "Staff get 25 days a year.", None),
    ("30%", "a 30% discount", None),
    ("£1,000", "at least £1,000 per month", None),
    ("Sync Plus", "Sync Plus-only features", "Sync Plus-only"),
    ("not quoted", "The evidence says something else.", None),
    # scripts without spaces between words put every answer inside a run of letters
    ("5天", "标准配送需要5天送达。", None),
    ("6美元", "标准配送的运费为6美元。", None),
])
def test_an_answer_cut_out_of_a_longer_word_is_found(answer, evidence, inside):
    assert af.cut_inside_word(answer, evidence) == inside


def test_the_evidence_check_rejects_an_answer_cut_out_of_a_word():
    from builder.generate.checks import Subject, answer_in_evidence

    def verdict(answer):
        cand = {"question": "¿Cuántas bóvedas remotas puedo tener?", "answer": answer,
                "evidence": [{"quote": "Con Sync Standard puedes tener 1 bóveda remota."}]}
        return answer_in_evidence(Subject(None, cand, [], {}))

    ok, reason = verdict("1 b")
    assert not ok and "1 bóveda" in reason
    assert verdict("1 bóveda")[0] is True
