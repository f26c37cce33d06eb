"""The header: two lines that never wrap (each is cut with an ellipsis instead, so neither can
push the other off screen): progress, agreement and throughput first, then the active filter,
sort and how many candidates it shows."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from builder.text.terminal import visible


def progress_text(stats: dict | None, annotator: str) -> Text:
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append("golden review", "bold")
    out.append(f" · {visible(annotator, multiline=False)} · ", "dim")
    if stats is None:
        out.append("counting…", "dim")
        return out
    out.append(f"reviewed {stats['reviewed']}/{stats['total']}", "bold")
    out.append(f" ✓{stats['accepted']}", "green")
    out.append(f" ✗{stats['rejected']}", "red")
    out.append(f" »{stats['skipped']}", "yellow")
    if stats.get("waiting"):
        out.append(f" ⧗{stats['waiting']}", "cyan")
    if stats.get("conflicts"):
        out.append(f" ⚖{stats['conflicts']} (c)", "bold magenta")
    agreement = stats.get("agreement") or {}
    if agreement.get("items"):
        alpha = agreement.get("alpha")
        out.append(" │ α ", "dim")
        out.append("-" if alpha is None else f"{alpha:.2f}", "bold")
        out.append(f" on {agreement['items']}", "dim")
    rate = (stats.get("throughput") or {}).get("per_hour")
    if rate:
        out.append(f" │ you {rate:.0f}/h", "dim")
    out.append(" │ ", "dim")
    for name, t in sorted(stats["by_type"].items()):
        out.append(f"{visible(name, multiline=False)} ")
        out.append(f"{t['reviewed']}/{t['total']}  ", "dim")
    return out


class ProgressLine(Static):
    """Progress and filter summary; updated by the screen after each refresh."""

    def show(self, stats: dict | None, annotator: str, filter_text: str, count: int | None
             ) -> None:
        text = progress_text(stats, annotator)
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append("filter: ", "bold")
        if count is not None:
            line.append(f"({count} shown) ", "bold")
        line.append(visible(filter_text, multiline=False))
        self.update(Text("\n", no_wrap=True, overflow="ellipsis").join([text, line]))
