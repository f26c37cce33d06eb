"""Export reviewed candidates as golden JSONL (native, seed, ragas, deepeval), split and balanced.

Public entry point: `export_dataset(store, ExportOptions(...)) -> ExportResult`.
"""

from builder.export.dataset import ExportResult, export_dataset
from builder.export.options import ExportOptions

__all__ = ["ExportOptions", "ExportResult", "export_dataset"]
