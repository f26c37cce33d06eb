"""The CI gate: `--fail-under METRIC=X` for higher-is-better figures, `--fail-over METRIC=X` for
lower-is-better ones (`directions`).

Guarantees, checked before any scoring starts (exit 2, one line):
- the option must match the metric's direction: `--fail-under hallucination_rate=0.1` is a
  usage error naming `--fail-over hallucination_rate=0.1`, and the reverse;
- the value is a finite number (NaN and infinities are refused), optionally a percentage
  (`15%` = 0.15);
- the metric is known for the cutoffs given, and judge metrics need the judge.

After scoring, `gate_failures` lists every threshold that failed, including a figure the run
did not produce (a gate on a missing figure fails: it never passes silently). The gate works
over any mapping of figures (a report's `summary` plus its `operations`), so other commands
can gate their own records with the same rules.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import click

from builder.errors import InputError, JobError
from builder.score.directions import JUDGE_METRICS, known_metrics, lower_is_better, value_range

UNDER, OVER = "--fail-under", "--fail-over"


def report_and_gate_options(under_help: str, over_help: str):
    """`--out` (report files), the two gate options and the judge-trust ones (`trust`), shared
    by every command that reports figures and can fail a CI job on them (`golden score`,
    `golden logs evaluate`)."""
    options = [
        click.option("--out", "outs", multiple=True, type=click.Path(dir_okay=False),
                     help="Write the report: .json, .md or .html (repeatable)."),
        click.option(UNDER, "fail_under", multiple=True, metavar="METRIC=VALUE", help=under_help),
        click.option(OVER, "fail_over", multiple=True, metavar="METRIC=VALUE", help=over_help),
        click.option("--trust-judge", is_flag=True,
                     help="Allow a gate on a judged figure whose judge is not calibrated "
                          "(`golden calibrate`) or agrees with humans under --min-judge-kappa."),
        click.option("--min-judge-kappa", type=click.FloatRange(-1.0, 1.0), default=0.4,
                     show_default=True,
                     help="The judge's kappa against human labels a gate on a judged figure "
                          "needs."),
    ]

    def decorate(f):
        for option in reversed(options):
            f = option(f)
        return f
    return decorate


@dataclass(frozen=True)
class Threshold:
    metric: str
    option: str       # UNDER (fails when the figure is below value) or OVER (above)
    value: float

    def fails(self, figure: float) -> bool:
        return figure < self.value if self.option == UNDER else figure > self.value

    def describe(self, figure: float | None) -> str:
        if figure is None:
            return f"{self.metric} not computed (threshold {self.value:g})"
        sign = "<" if self.option == UNDER else ">"
        return f"{self.metric} {figure:.4f} {sign} {self.value:g}"


def parse_value(text: str, spec: str, option: str) -> float:
    """A finite float; `15%` means 0.15."""
    raw = text.strip()
    scale = 1.0
    if raw.endswith("%"):
        raw, scale = raw[:-1].strip(), 0.01
    try:
        value = float(raw) * scale
    except ValueError:
        raise InputError(f"{option}: {text!r} is not a number (in {spec!r})") from None
    if not math.isfinite(value):
        raise InputError(f"{option}: {text.strip()!r} is not a finite number (in {spec!r}); "
                         "a gate on NaN or infinity would never fail")
    return value


def parse_thresholds(under: Iterable[str], over: Iterable[str] = (), *,
                     known: Sequence[str], judge: bool) -> list[Threshold]:
    """`--fail-under`/`--fail-over` specs -> thresholds, in the order given (under first).
    `known` is every metric the command can produce; judge metrics need `judge`."""
    out: list[Threshold] = []
    for option, specs in ((UNDER, under), (OVER, over)):
        for spec in specs:
            name, sep, value = spec.partition("=")
            name = name.strip()
            if not sep or not name:
                raise InputError(f"{option} expects METRIC=VALUE, got {spec!r}")
            if name not in known:
                raise InputError(_unknown(option, name, known))
            wanted = OVER if lower_is_better(name) else UNDER
            if option != wanted:
                better = "lower" if wanted == OVER else "higher"
                raise InputError(f"{option} {spec.strip()}: {better} is better for {name}; "
                                 f"use {wanted} {name}={value.strip()}")
            if name in JUDGE_METRICS and not judge:
                raise InputError(f"{option}: {name} needs the judge (JSONL runs with answers, "
                                 "without --no-judge)")
            number = parse_value(value, spec, option)
            low, high = value_range(name)
            if not low <= number <= high:
                shown = (f"runs from {low:g} to {high:g}" if high != math.inf
                         else f"is {low:g} or more")
                never = "pass" if _never_passes(option, number, low, high) else "fail"
                raise InputError(f"{option} {spec.strip()}: {name} {shown}, so this gate "
                                 f"would never {never}")
            out.append(Threshold(name, option, number))
    return out


def _never_passes(option: str, value: float, low: float, high: float) -> bool:
    return value > high if option == UNDER else value < low


def _unknown(option: str, name: str, known: Sequence[str]) -> str:
    """Name --k when the metric is one of golden's at a cutoff this run does not compute."""
    family, at, cutoff = name.partition("@")
    families = {m.partition("@")[0] for m in known if "@" in m}
    if at and family in families and cutoff.isdigit():
        ks = sorted({int(m.partition("@")[2]) for m in known if "@" in m} | {int(cutoff)})
        return (f"{option}: {name} needs the cutoff {cutoff} in --k (this run computes "
                f"@{', @'.join(str(k) for k in ks if k != int(cutoff))}); add "
                f"--k {','.join(map(str, ks))}")
    return f"{option}: unknown metric {name!r} (known: {', '.join(known)})"


def gate_failures(figures: Mapping[str, float], thresholds: Iterable[Threshold]) -> list[str]:
    """Every failed threshold, described; a figure that is missing (or not a finite number)
    fails its threshold."""
    failures = []
    for t in thresholds:
        figure = figures.get(t.metric)
        if not isinstance(figure, (int, float)) or not math.isfinite(figure):
            failures.append(t.describe(None))
        elif t.fails(figure):
            failures.append(t.describe(figure))
    return failures


def check_gate(figures: Mapping[str, float], thresholds: Sequence[Threshold]) -> None:
    """Raise JobError (exit 1) naming every failed threshold."""
    failures = gate_failures(figures, thresholds)
    if failures:
        raise JobError("gate failed: " + "; ".join(failures))


def report_figures(report: Mapping) -> dict[str, float]:
    """What a report's gate reads: the summary means plus the operations figures."""
    return {**report.get("operations", {}), **report["summary"]}


__all__ = ["Threshold", "UNDER", "OVER", "parse_thresholds", "gate_failures", "check_gate",
           "report_figures", "known_metrics"]
