"""Agreement between human 1-5 scores and the judge's, so users know how far to trust it.

Human scores come from the `calibration` table (written by the review UI) or an imported
CSV/JSONL file with `query_id`, `metric`, `score` (and optional `annotator`). Judge scores come
from a scored run's item metrics (`list_run_items`). Each human score (the latest per query,
metric and annotator) is paired with the judge's score for the same query and metric.

Figures per metric and overall: exact agreement, within-one agreement and quadratic-weighted
Cohen's kappa over the 1-5 scale. Kappa is None (not NaN) when it is undefined (every score
in one category on both sides). A warning is raised under 80% exact agreement.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from builder.errors import InputError
from builder.review.agreement import cohen_kappa
from builder.text.jsonl import jsonl_rows, read_input_text

CATEGORIES = (1, 2, 3, 4, 5)
METRICS = ("faithfulness", "correctness", "answer_relevancy")
WARN_BELOW = 0.80


class HumanScore(BaseModel):
    query_id: str = Field(min_length=1)
    metric: str
    score: int = Field(ge=1, le=5)
    annotator: str = "import"

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, value: str) -> str:
        if value not in METRICS:
            raise ValueError(f"metric must be one of {', '.join(METRICS)}")
        return value


def read_human_scores(path: str | Path) -> list[HumanScore]:
    """Load a CSV (header row) or JSONL file of human scores; InputError with file:line."""
    spath = str(path)
    p = Path(path)
    text = read_input_text(path)
    rows: list[tuple[int, Any]] = []
    if p.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        try:
            missing = {"query_id", "metric", "score"} - set(reader.fieldnames or [])
            if missing:
                raise InputError(f"CSV header needs {', '.join(sorted(missing))}", path=spath,
                                 line=1)
            rows = [(reader.line_num, row) for row in reader]
        except csv.Error as exc:
            raise InputError(f"malformed CSV ({exc})", path=spath,
                             line=reader.reader.line_num) from None
    else:
        rows = list(jsonl_rows(text, spath))
    scores = []
    for n, row in rows:
        if not isinstance(row, dict):
            raise InputError("expected an object with query_id, metric, score", path=spath, line=n)
        row = {k: v for k, v in row.items() if v not in (None, "") or k != "annotator"}
        try:
            scores.append(HumanScore.model_validate(row))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err["loc"]) or "row"
            raise InputError(f"{where}: {err['msg']}", path=spath, line=n) from None
    if not scores:
        raise InputError("no scores in the file", path=spath)
    return scores


def quadratic_kappa(pairs: Sequence[tuple[int, int]]) -> float | None:
    """Quadratic-weighted Cohen's kappa over CATEGORIES; None when undefined."""
    k = len(CATEGORIES)
    return cohen_kappa(pairs, weight=lambda a, b: (a - b) ** 2 / (k - 1) ** 2,
                       categories=CATEGORIES)


def agreement(pairs: Sequence[tuple[int, int]]) -> dict[str, Any]:
    n = len(pairs)
    if not n:
        return {"n": 0, "exact": None, "within_one": None, "kappa": None}
    return {
        "n": n,
        "exact": sum(a == b for a, b in pairs) / n,
        "within_one": sum(abs(a - b) <= 1 for a, b in pairs) / n,
        "kappa": quadratic_kappa(pairs),
    }


def calibrate(human: Iterable[Mapping[str, Any]],
              judge_items: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Pair human scores (dicts with query_id, metric, score, annotator; later rows win) with
    the judge's per-item `metrics` and compute agreement per metric and overall."""
    latest: dict[tuple[str, str, str], int] = {}
    for row in human:
        latest[(row["query_id"], row["metric"], row.get("annotator") or "?")] = int(row["score"])
    judge = {item["query_id"]: (item.get("metrics") or {}) for item in judge_items}
    pairs: dict[str, list[tuple[int, int]]] = {}
    unmatched = []
    for (qid, metric, annotator), score in latest.items():
        value = judge.get(qid, {}).get(metric)
        if value is None:
            unmatched.append({"query_id": qid, "metric": metric, "annotator": annotator})
            continue
        pairs.setdefault(metric, []).append((score, int(round(value))))
    per_metric = {m: agreement(p) for m, p in sorted(pairs.items())}
    overall = agreement([p for ps in pairs.values() for p in ps])
    warnings = []
    if overall["n"] and overall["exact"] < WARN_BELOW:
        warnings.append(f"judge and humans agree exactly on {overall['exact']:.0%} of "
                        f"{overall['n']} scores (under {WARN_BELOW:.0%}): treat judge scores "
                        "as rough signals, not gates.")
    if not overall["n"]:
        warnings.append("no human score matches a judged item of this run.")
    return {"overall": overall, "per_metric": per_metric, "unmatched": unmatched,
            "warnings": warnings}


def print_calibration(result: Mapping[str, Any], console=None) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from builder.score.cells import fmt

    console = console or Console(highlight=False)
    table = Table(title="Judge vs human agreement", title_justify="left")
    for col in ("metric", "n", "exact", "within one", "quadratic kappa"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for name, a in [*result["per_metric"].items(), ("overall", result["overall"])]:
        table.add_row(name, str(a["n"]), fmt(a["exact"]), fmt(a["within_one"]), fmt(a["kappa"]))
    console.print(table)
    if result["unmatched"]:
        console.print(Text(f"{len(result['unmatched'])} human score(s) have no judge score "
                           "in this run."))
    stored = result.get("stored_for")
    if stored:
        console.print(Text(f"stored for judge {stored['judge_model']}: reports show it beside "
                           "each judged figure, and gates need kappa >= --min-judge-kappa."))
    for w in result["warnings"]:
        console.print(Text("warning: " + w, style="yellow"))
