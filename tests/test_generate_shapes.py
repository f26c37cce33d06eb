"""Generation on knowledge bases of several shapes (issue 12), ingested as a user would, with
the scripted ideal model: every verified single-hop item asks for a phrase code chose, which
its evidence states and its question does not; rubric entries name their level; a KB with no
numbers or dates still yields items; a Spanish KB yields Spanish items labelled "es"."""

from __future__ import annotations

import pytest

from builder.generate.models import GenerateOptions
from builder.generate.runner import run_generate
from builder.generate.terms import numbers
from builder.ingest.pipeline import ingest_paths
from builder.store import Store
from builder.store.candidates import load_candidates
from tests.fakes import ScriptedLLM
from tests.support.scripted_kb import ideal

SHAPES = {
    "prose": {
        "leave.md": "# Leave\n\nWe offer 25 days of holiday plus bank holidays each year. "
                    "Requests of more than 2 days need at least 4 weeks of notice. Unused "
                    "holiday can be carried over up to a maximum of 5 days.\n\n"
                    "Jury service leave is paid in full for up to 10 working days.\n",
        "sickness.md": "# Sickness\n\nYou receive full pay for the first 20 days of sickness "
                       "absence in a rolling year. A fit note is needed after 7 calendar days "
                       "of absence.\n",
    },
    "rubric": {
        "developer.md": "# Developer\n\n## D1 - Developer 1\n\n"
                        "* **Scope**: works on well-defined tasks within one feature\n"
                        "* **Trust**: asks for review before every merge\n\n"
                        "## D2 - Developer 2\n\n"
                        "* **Scope**: delivers whole features with little guidance\n"
                        "* **Trust**: merges routine changes after one review\n\n"
                        "## D3 - Developer 3\n\n"
                        "* **Scope**: owns a whole subsystem and its roadmap\n"
                        "* **Trust**: reviews the merges of others\n",
    },
    "api": {
        "client.md": "# Client\n\nThe `timeout` parameter defaults to 5 seconds. Use the "
                     "`limits` keyword argument to control the connection pool size. Call "
                     "`response.read()` to load the body inside an event hook.\n\n"
                     "## Environment\n\nThe `NETRC` environment variable sets the path of the "
                     "credentials file.\n",
    },
    "faq": {
        "faq.md": "# FAQ\n\n## Can I get a refund?\n\nRefunds are possible within 14 days of "
                  "purchase.\n\n## Which payment methods are accepted?\n\nWe accept cards and "
                  "bank transfers. Invoices are sent by email within 2 business days.\n",
    },
    "no_numbers": {
        "values.md": "# Values\n\nA retrospective is a meeting where the team reviews how the "
                     "last sprint went. The product owner is the person who orders the "
                     "backlog. Pull requests are reviewed by a teammate through GitHub before "
                     "they are merged.\n",
    },
    "spanish": {
        "licencias.md": "# Licencias\n\nLa licencia Catalyst es una compra única que da acceso "
                        "anticipado a las versiones beta. El plan Plus conserva las notas "
                        "durante 12 meses. El reembolso se solicita en un plazo de 14 días.\n",
    },
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_yields_verified_items_that_answer_their_question(tmp_path, shape):
    kb = tmp_path / "kb"
    kb.mkdir()
    for name, text in SHAPES[shape].items():
        (kb / name).write_text(text, encoding="utf-8")
    with Store(tmp_path / "g.db") as store:
        ingest_paths(store, [str(kb)])
        run_generate(store, ScriptedLLM(ideal), GenerateOptions(n=4, types=["single_hop"]))
        cands = load_candidates(store)
        chunks = {r["id"]: r["text"] for r in store.query("SELECT id, text FROM chunks")}
    verified = [c for c in cands if c["verdict"] == "passed" and not c["duplicate_of"]]
    assert verified, [(c["question"], c["rejection_reasons"]) for c in cands]
    for c in verified:
        evidence = c["evidence"][0]["quote"]
        assert chunks[c["chunk_ids"][0]].find(evidence) >= 0
        assert c["answer"].casefold() in evidence.casefold().replace("`", "").replace("**", "")
        assert c["answer"].casefold() not in c["question"].casefold()
        assert c["answer"] != evidence  # a phrase of the statement, not the statement
    if shape == "rubric":
        for c in verified:
            level = next(n for n in ("1", "2", "3") if f"Developer {n}" in c["question"])
            assert f"Developer {level}" in c["question"]
    if shape == "no_numbers":  # names are answers too
        assert not any(numbers(c["answer"]) for c in verified)
    if shape == "spanish":
        assert all(c["language"] == "es" for c in cands)
        assert all(c["question"].startswith("¿") for c in verified)


def test_the_steps_of_a_numbered_procedure_are_not_asked_about(tmp_path):
    # the steps state values and names that would otherwise be asked about (the bulleted
    # list's items are), but a step holds only inside its procedure
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "sync.md").write_text(
        "# Sync\n\nSync keeps your notes for 12 months on the Plus plan. The Standard plan "
        "includes 1 GB of storage.\n\n## Set up a remote vault\n\n"
        "1. Open Settings and choose the `Sync` tab.\n"
        "2. Set the `interval` option to 30 seconds.\n"
        "3. Restart the app within 5 minutes of the change.\n\n"
        "## Plans\n\n- The Plus plan stores 10 GB of attachments.\n"
        "- The Standard plan stores 1 GB of attachments.\n", encoding="utf-8")
    with Store(tmp_path / "g.db") as store:
        ingest_paths(store, [str(kb)])
        summary = run_generate(store, ScriptedLLM(ideal),
                               GenerateOptions(n=8, types=["single_hop"]))
        cands = load_candidates(store)
    asked = " ".join(c["evidence"][0]["quote"] for c in cands)
    assert "Plus plan stores 10 GB" in asked or "Standard plan stores 1 GB" in asked
    assert "12 months" in asked
    for step in ("Settings", "interval", "Restart"):
        assert step not in asked
    assert summary.verified_total >= 2
