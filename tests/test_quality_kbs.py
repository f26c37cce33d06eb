"""The quality benchmark's KB list keeps the promises its header makes: a test set of at least
six KBs in at least three languages, no repository shared between the two sets (a test KB from
a development KB's repository would have been half read), no reserved repository, and every
source pinned to a full commit. A KB moved from test to dev must be replaced, and this is where
forgetting to do so shows."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

KBS = Path(__file__).resolve().parent.parent / "bench" / "quality" / "kbs.toml"
RESERVED = {"basecamp/handbook", "IBM/mt-rag-benchmark", "vitejs/docs-es",
            "etalab/guides.etalab.gouv.fr", "kubernetes/sig-security"}


def _kbs() -> dict:
    return tomllib.loads(KBS.read_text(encoding="utf-8"))


def test_the_test_set_has_six_kbs_in_three_languages():
    test = {k: kb for k, kb in _kbs().items() if kb["split"] == "test"}
    assert len(test) >= 6
    assert len({kb["language"] for kb in test.values()}) >= 3


def test_no_repository_serves_both_sets_and_none_is_reserved():
    repos: dict[str, set[str]] = {"dev": set(), "test": set()}
    for kb in _kbs().values():
        assert kb["split"] in repos
        for source in kb["source"]:
            repos[kb["split"]].add(source["repo"])
            assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]), source
    assert not repos["dev"] & repos["test"]
    assert not (repos["dev"] | repos["test"]) & RESERVED
