"""No knowledge-base or product name in golden's own code, prompts or word lists: a rule tuned
for one knowledge base must not name it (bench/quality/kbs.toml: "a rule that would only help
a test KB is not written"), and an example in a prompt is copied by models into other KBs'
items. Names come from the benchmark's KB list (ids, repository owners and names, products)
and the bundled sample's fictional brand; generic words among them are left out."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Words of the KB list that are ordinary English, not names.
GENERIC = {"handbook", "playbook", "encode", "publications", "website", "portfolio", "docs"}
PRODUCTS = {"37signals", "basecamp", "httpx", "obsidian", "caddy", "sourcegraph", "madaster",
            "owasp", "asvs", "spearbit", "trail of bits", "démarches simplifiées",
            "demarches simplifiees", "beta.gouv", "etalab", "vitejs", "northwind", "trail club",
            "contao"}


def kb_names() -> set[str]:
    kbs = tomllib.loads((ROOT / "bench" / "quality" / "kbs.toml").read_text(encoding="utf-8"))
    names = set(PRODUCTS)
    for kb_id, kb in kbs.items():
        names.add(kb_id)
        for source in kb.get("source", []):
            owner, repo = source["repo"].split("/")
            names |= {owner, repo}
    return {n.lower() for n in names} - GENERIC


def name_pattern(names: set[str]) -> re.Pattern:
    """Any of `names` as a whole word, case-insensitive; a space matches any run of spaces, "_"
    or "-" ("Trail of Bits", "trail_of_bits")."""
    words = (re.escape(n).replace(r"\ ", r"[\s_-]+") for n in sorted(names, key=len, reverse=True))
    return re.compile(r"(?<![\w.-])(" + "|".join(words) + r")(?![\w-])", re.IGNORECASE)


def checked_files() -> list[Path]:
    return [*sorted((ROOT / "builder").rglob("*.py")), *sorted((ROOT / "prompts").rglob("*")),
            *sorted((ROOT / "builder" / "text" / "lexicon").glob("*.toml"))]


def test_the_names_list_is_read_from_the_benchmark():
    names = kb_names()
    assert {"httpx", "obsidianmd", "obsidian-es", "caddyserver", "spearbit", "owasp", "contao",
            "cms-de"} <= names
    assert "handbook" not in names


def test_no_knowledge_base_or_product_name_in_builder_prompts_or_lexicon():
    pattern = name_pattern(kb_names())
    found = []
    for path in checked_files():
        if not path.is_file() or path.suffix == ".pyc":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in pattern.finditer(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {m.group(0)}")
    assert not found, "\n".join(found)


def test_the_check_finds_a_name_it_should():
    pattern = name_pattern(kb_names())
    assert pattern.search("# tuned on the Obsidian help") and pattern.search("see HTTPX docs")
    assert pattern.search("a Trail_of_Bits report")
    assert not pattern.search("httpx2.Response") and not pattern.search("the staff handbook")
