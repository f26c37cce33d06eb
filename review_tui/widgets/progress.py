"""The header line: progress over the current filter (reviewed / total, accepted, rejected,
per type) and the filter itself."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from review_tui.safe_text import visible


def progress_text(stats: dict | None, annotator: str) -> Text:
    out = Text()
    out.append("golden review", "bold")
    out.append(f" · {visible(annotator, multiline=False)} · ", "dim")
    if stats is None:
        out.append("counting…", "dim")
        return out
    out.append(f"reviewed {stats['reviewed']}/{stats['total']}", "bold")
    out.append(f"  ✓ {stats['accepted']}", "green")
    out.append(f"  ✗ {stats['rejected']}", "red")
    out.append(f"  » {stats['skipped']}", "yellow")
    out.append("  │ ", "dim")
    for name, t in sorted(stats["by_type"].items()):
        out.append(f"{visible(name, multiline=False)} ")
        out.append(f"{t['reviewed']}/{t['total']}  ", "dim")
    return out


class ProgressLine(Static):
    """Progress and filter summary; updated by the screen after each refresh."""

    def show(self, stats: dict | None, annotator: str, filter_text: str, count: int | None
             ) -> None:
        text = progress_text(stats, annotator)
        text.append("\n")
        text.append("filter: ", "bold")
        text.append(visible(filter_text, multiline=False))
        if count is not None:
            text.append(f"  ({count} shown)", "dim")
        self.update(text)
