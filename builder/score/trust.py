"""How far each judged figure can be trusted: the judge's measured agreement with human scores
(`golden calibrate`), looked up by judge model and the versions of the prompts (and code rules)
behind the figure, and the rule that keeps a CI gate off a judge nobody measured.

- Human scores exist for `faithfulness`, `correctness` and `answer_relevancy` (`CALIBRATED_BY`);
  `faithfulness_supported` and `hallucination_rate` come from the same claim verdicts as
  faithfulness and carry its calibration. Refusal rates and context relevance have no human
  scores: they always read "not calibrated".
- A calibration counts only for the exact judge model and prompt versions it was measured with:
  a new prompt version or model is a new judge.
- `check_trust`: `--fail-under`/`--fail-over` on a judged figure whose judge is not calibrated,
  or whose kappa is under `min_kappa` (default 0.4: "moderate" agreement), is an InputError
  (exit 2) naming the figure and why, before any judging; `--trust-judge` lifts it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from builder.errors import InputError
from builder.score.directions import JUDGE_METRICS

MIN_KAPPA = 0.4

# The prompts (and code rules) behind each judged figure: what its calibration is keyed by.
METRIC_PROMPTS = {
    "faithfulness": ("judge_claim", "signals"),
    "faithfulness_supported": ("judge_claim", "signals"),
    "hallucination_rate": ("judge_claim", "signals"),
    "answer_relevancy": ("judge_relevancy",), "correctness": ("judge_correctness",),
    "context_relevance": ("judge_context",), "wrong_refusal_rate": ("judge_refusal",),
    "correct_refusal_rate": ("judge_refusal",),
}
CALIBRATED_BY = {"faithfulness": "faithfulness", "faithfulness_supported": "faithfulness",
                 "hallucination_rate": "faithfulness", "correctness": "correctness",
                 "answer_relevancy": "answer_relevancy"}


def prompts_key(metric: str, versions: Mapping[str, str]) -> str:
    """`judge_claim:1 signals:1`: the versions a figure was judged with."""
    return " ".join(f"{p}:{versions.get(p, '?')}" for p in METRIC_PROMPTS[metric])


def calibration_entries(result: Mapping[str, Any], versions: Mapping[str, str]) -> list[dict]:
    """`calibrate.calibrate`'s per-metric figures as rows for the judge_calibration table."""
    return [{"metric": m, "prompts": prompts_key(m, versions), "n": a["n"], "exact": a["exact"],
             "within_one": a["within_one"], "kappa": a["kappa"]}
            for m, a in result["per_metric"].items() if m in METRIC_PROMPTS and a["n"]]


def judge_agreement(store, judge_model: str | None, versions: Mapping[str, str],
                    metrics: Iterable[str]) -> dict[str, dict | None]:
    """For each judged figure among `metrics`: its stored calibration ({n, exact, within_one,
    kappa, calibrated_by, run_id, at}) or None when not calibrated."""
    from builder.store.calibration import judge_calibration

    out: dict[str, dict | None] = {}
    for metric in metrics:
        if metric not in JUDGE_METRICS:
            continue
        human = CALIBRATED_BY.get(metric)
        row = (judge_calibration(store, judge_model, prompts_key(human, versions), human)
               if human and judge_model else None)
        out[metric] = None if row is None else {
            "n": row["n"], "exact": row["exact"], "within_one": row["within_one"],
            "kappa": row["kappa"], "calibrated_by": human, "run_id": row["run_id"],
            "at": row["at"]}
    return out


def describe(entry: Mapping[str, Any] | None) -> str:
    """'agreement 0.85, kappa 0.62 (n=40)' or 'not calibrated', for a report cell."""
    if not entry:
        return "not calibrated"
    kappa = "undefined" if entry["kappa"] is None else f"{entry['kappa']:.2f}"
    via = (f", via {entry['calibrated_by']}"
           if entry.get("calibrated_by") and entry.get("metric") != entry["calibrated_by"]
           else "")
    return f"agreement {entry['exact']:.2f}, kappa {kappa} (n={entry['n']}{via})"


def check_trust(thresholds: Iterable[Any], agreement: Mapping[str, dict | None], *,
                judge_model: str, min_kappa: float = MIN_KAPPA) -> None:
    """InputError for the first gate on a judged figure whose judge is not calibrated or whose
    kappa is under `min_kappa` (see the module docstring)."""
    for t in thresholds:
        if t.metric not in JUDGE_METRICS:
            continue
        entry = agreement.get(t.metric)
        if entry is None:
            raise InputError(
                f"{t.option} {t.metric}: the judge ({judge_model}) is not calibrated for this "
                "figure, so a gate on it measures nothing known; score human labels with "
                "`golden calibrate` first, or pass --trust-judge")
        kappa = entry["kappa"]
        if kappa is None or kappa < min_kappa:
            shown = "undefined" if kappa is None else f"{kappa:.2f}"
            raise InputError(
                f"{t.option} {t.metric}: the judge ({judge_model}) agrees with human labels at "
                f"kappa {shown} (n={entry['n']}), under {min_kappa:g} (--min-judge-kappa); "
                "pass --trust-judge to gate on it anyway")


def judge_model_name(settings) -> str:
    """The model the judge role calls, from the settings alone (no client or server started),
    named as `Judge.model` names it, so the calibration looked up is the one stored."""
    if settings.base_url is None:
        from builder.llm.local_models import resolve_local_model

        return resolve_local_model(settings.local_model).record_name
    return settings.params_for("judge").model or "?"
