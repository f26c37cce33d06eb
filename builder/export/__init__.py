"""Export reviewed candidates as golden JSONL (native, seed, ragas, deepeval), split and balanced.

Public entry point: `export_dataset(store, ExportOptions(...)) -> ExportResult`.

The names are loaded on first use (PEP 562), so importing `builder.export.atomic` (the
all-or-nothing file writer `golden score` also uses) does not load the store and the export
pipeline with it.
"""

from __future__ import annotations

__all__ = ["ExportOptions", "ExportResult", "export_dataset"]


def __getattr__(name: str):
    if name in ("ExportResult", "export_dataset"):
        from builder.export import dataset

        return getattr(dataset, name)
    if name == "ExportOptions":
        from builder.export.options import ExportOptions

        return ExportOptions
    raise AttributeError(f"module 'builder.export' has no attribute {name!r}")
