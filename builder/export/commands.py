"""`golden export`: a thin shell over `builder.export.export_dataset`."""

from __future__ import annotations

from pathlib import Path

import click

from builder.export.dataset import export_dataset
from builder.export.formats import FORMATS
from builder.export.options import (
    ExportOptions, check_format, parse_balance, parse_split, parse_statuses, parse_types,
)


@click.command("export")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Output JSONL file (with --split: the base name of the split files).")
@click.option("--format", "fmt", default="native", show_default=True,
              help="Record format: " + ", ".join(FORMATS) + ".")
@click.option("--status", "statuses", multiple=True,
              help="Review statuses to export (repeatable or comma list) [default: accepted].")
@click.option("--split", "split", default=None,
              help="Splits and proportions summing to 1, e.g. train=0.6,dev=0.2,test=0.2.")
@click.option("--balance", "balance", default=None,
              help="Sub-sample to a difficulty mix, easy:medium:hard weights, e.g. "
                   "difficulty=40:30:30.")
@click.option("--types", "types", multiple=True,
              help="Only these question types (repeatable or comma list).")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seed for the split and the --balance sample.")
@click.option("--dataset-version", default=None,
              help="Written into every native record [default: a fingerprint of the selection].")
@click.pass_obj
def export(obj, out: Path, fmt: str, statuses: tuple[str, ...], split: str | None,
           balance: str | None, types: tuple[str, ...], seed: int,
           dataset_version: str | None) -> None:
    """Export reviewed questions as JSONL, with a manifest beside it.

    \b
    Selection: accepted candidates by default (--status widens it), reviewer edits
    applied, duplicates always left out. A human accept wins over the automatic
    verdict; items of other statuses are taken only if their verdict is not 'failed'.

    \b
    Splits: with --split, one file per split named after --out with the split name
    before the suffix (golden.jsonl -> golden.train.jsonl ...); --out itself is not
    written. Native records also carry a 'split' field. Splits are stratified by
    difficulty x type (largest-remainder rounding) and a question's evolved variants
    (same seed_fact_id) and a harder item and the items it was built from always land
    in the same split; strata that grouping kept off
    their exact target are listed in the manifest.

    \b
    Every export writes <out>.manifest.json: counts per split x type x difficulty,
    documents covered, filters, seed, golden version, the database path and the
    sha256 of the exported bytes. Same database + same options -> identical files.
    Nothing is written if the export fails.
    """
    check_format(fmt)
    options = ExportOptions(
        out=out, format=fmt,
        statuses=parse_statuses(statuses) if statuses else ("accepted",),
        types=parse_types(types) if types else None,
        split=parse_split(split) if split is not None else None,
        balance=parse_balance(balance) if balance is not None else None,
        seed=seed, dataset_version=dataset_version,
    )
    with obj.open_store() as store:
        result = export_dataset(store, options)
    for warning in result.warnings:
        click.echo(f"golden: warning: {warning}", err=True)
    shares = ({a.split: a for a in result.manifest.stratification.achieved}
              if result.manifest.stratification else {})
    for f in result.files:
        label = f" ({f.split})" if f.split else ""
        share = shares.get(f.split)
        if share is not None:
            label += f", {share.share:.1%} of the records, target {share.target}"
        click.echo(f"wrote {f.records} records{label} to {out.parent / f.path}")
    click.echo(f"manifest: {result.manifest_path}")
