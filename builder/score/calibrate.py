"""Agreement between human 1-5 scores and the judge's, so users know how far to trust it.

Human scores come from the `calibration` table (written by the review UI) or an imported
CSV/JSONL file with `query_id`, `metric`, `score` (and optional `annotator`). Judge scores come
from a scored run's `run_items.metrics`. Each human score (the latest per query, metric and
annotator) is paired with the judge's score for the same query and metric.

Figures per metric and overall: exact agreement, within-one agreement and quadratic-weighted
Cohen's kappa over the 1-5 scale. Kappa is None (not NaN) when it is undefined (every score
in one category on both sides). A warning is raised under 80% exact agreement.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from builder.errors import InputError

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
    if not p.is_file():
        raise InputError("file not found", path=spath)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ({exc})", path=spath) from None
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
        for n, line in enumerate(text.split("\n"), 1):  # not splitlines(): U+2028 is data
            if not line.strip():
                continue
            try:
                rows.append((n, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(f"malformed JSON ({exc.msg})", path=spath, line=n) from None
            except RecursionError:
                raise InputError("malformed JSON (nested too deeply)", path=spath,
                                 line=n) from None
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
    n = len(pairs)
    if n == 0:
        return None
    k = len(CATEGORIES)
    index = {c: i for i, c in enumerate(CATEGORIES)}
    observed = [[0.0] * k for _ in range(k)]
    hist_a = [0.0] * k
    hist_b = [0.0] * k
    for a, b in pairs:
        observed[index[a]][index[b]] += 1
        hist_a[index[a]] += 1
        hist_b[index[b]] += 1
    num = den = 0.0
    for i in range(k):
        for j in range(k):
            w = (i - j) ** 2 / (k - 1) ** 2
            num += w * observed[i][j]
            den += w * hist_a[i] * hist_b[j] / n
    if den == 0:
        return None
    return 1 - num / den


def cohen_kappa(pairs: Sequence[tuple[Any, Any]]) -> float | None:
    """Unweighted Cohen's kappa for categorical labels (e.g. hallucinated yes/no): observed
    agreement corrected for the agreement the two sides' label frequencies give by chance.
    None when undefined (no pairs, or both sides always give the same single label)."""
    n = len(pairs)
    if not n:
        return None
    observed = sum(a == b for a, b in pairs) / n
    left: dict[Any, int] = {}
    right: dict[Any, int] = {}
    for a, b in pairs:
        left[a] = left.get(a, 0) + 1
        right[b] = right.get(b, 0) + 1
    expected = sum(left[c] * right.get(c, 0) for c in left) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


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

    from builder.score.report import fmt

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
    for w in result["warnings"]:
        console.print(Text("warning: " + w, style="yellow"))
