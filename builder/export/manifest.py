"""The manifest written beside every export (`<out>.manifest.json`): what was exported, from
where, with which filters, and a hash to check the files against.

`content_sha256` is the sha256 of the bytes of all data files concatenated in the order of
`files` (for a single file, that file's own sha256); each file also carries its own hash.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

VERDICT_RULE = (
    "accepted items are exported whatever the automatic verdict (a human said yes); items of any "
    "other requested status only when their automatic verdict is not 'failed'"
)
SPLIT_RULE = (
    "stratified by difficulty x type; per stratum each split gets the floor or ceiling of its "
    "quota (largest cumulative remainder, ties to the split named first); leakage groups "
    "(same seed_fact_id, joined by every harder item with the items it was built from) are never "
    "divided: groups are placed first, largest first, where they "
    "add the least beyond the split and stratum targets, then single items are apportioned so "
    "that every split meets its overall largest-remainder target and strata deviate as little "
    "as the groups allow; achieved lists each split's size and share, deviations every stratum "
    "off target"
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExportedFile(_Model):
    split: str | None
    path: str            # file name, in the manifest's folder
    records: int
    sha256: str


class Filters(_Model):
    statuses: list[str]
    types: list[str] | None
    duplicates: str = "excluded"
    verdict: str = VERDICT_RULE


class BalanceReport(_Model):
    weights: dict[str, str]          # difficulty -> requested weight
    available: dict[str, int]
    kept: dict[str, int]
    short: list[str]                 # difficulties that limited the sub-sample
    unrated_dropped: int             # items without a difficulty (cannot be placed in the mix)


class StratumDeviation(_Model):
    difficulty: str | None
    type: str
    split: str
    target: int
    actual: int


class SplitShare(_Model):
    split: str
    target: int                      # largest_remainder(records, proportions) for this split
    records: int
    share: float                     # records / all records, rounded to 4 decimals


class Stratification(_Model):
    rule: str = SPLIT_RULE
    proportions: dict[str, str]
    groups: int                      # leakage groups of two or more items
    achieved: list[SplitShare]
    deviations: list[StratumDeviation]


class Manifest(_Model):
    golden_version: str
    created_at: str
    format: str
    dataset_version: str
    seed: int
    database: str                    # the SQLite file's name (never its folder)
    knowledge_base: list[str]        # names of the folders (or files) ingested, never paths
    filters: Filters
    split_files: str                 # how splits are written
    balance: BalanceReport | None
    stratification: Stratification | None
    records: int
    files: list[ExportedFile]
    content_sha256: str
    counts: dict[str, dict[str, dict[str, int]]]   # split ("all" unsplit) -> type -> difficulty
    documents_covered: int
    documents: list[str]
    warnings: list[str]


def manifest_json_schema() -> dict:
    """The JSON Schema of the manifest, as committed in builder/schemas/manifest.schema.json
    (a test keeps the file equal to this)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://golden.invalid/schemas/manifest.schema.json",
        **Manifest.model_json_schema(),
    }
