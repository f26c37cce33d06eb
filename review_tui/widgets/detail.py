"""The detail pane: everything a reviewer needs to judge one candidate, as one rich `Text`.

Shows the question and reference answer (an edit beside the generated original, which is
never lost), type and difficulty, the verifier's verdicts with reasons, the review state, and
the source chunks hop by hop with document title, heading path and the evidence spans
highlighted. Every piece of stored text goes through `safe_text.visible`: shown literally.
"""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from builder.ingest.document_text import pages_label
from review_tui.safe_text import safe_text, visible

H = "bold underline"
LABEL = "bold"
DIM = "dim"
EVIDENCE = "bold black on yellow"


def evidence_spans(text: str, evidence: list[dict]) -> list[tuple[int, int]]:
    """(start, end) spans of the quotes in `text`: the stored offsets when they match the
    quote, else the first occurrence of the quote (exact, then case-insensitive). Merged."""
    spans = []
    for ev in evidence:
        quote = ev.get("quote") or ""
        start, end = ev.get("start"), ev.get("end")
        if (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)
                and (not quote or text[start:end] == quote)):
            spans.append((start, end))
            continue
        if not quote:
            continue
        at = text.find(quote)
        if at < 0:
            at = text.lower().find(quote.lower())
        if at >= 0:
            spans.append((at, at + len(quote)))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def highlighted(text: str, spans: list[tuple[int, int]]) -> Text:
    """`text` made visible, with `spans` (offsets into the raw text) highlighted."""
    out = Text()
    pos = 0
    for start, end in spans:
        out.append(visible(text[pos:start]))
        out.append(visible(text[start:end]), EVIDENCE)
        pos = end
    out.append(visible(text[pos:]))
    return out


def render_candidate(c: dict, pending_status: str | None = None) -> Text:
    """The whole detail view of one candidate (as returned by `get_candidate`)."""
    out = Text()

    def line(label: str, value: str | None, style: str = "") -> None:
        out.append(f"{label}: ", LABEL)
        out.append(visible(value or "-", multiline=False), style)
        out.append("\n")

    def edited_field(title: str, original: str, edit: str | None) -> None:
        out.append(f"\n{title}", H)
        if edit is None:
            out.append("\n")
            out.append_text(safe_text(original))
        else:
            out.append("  (edited)\n", "italic")
            out.append_text(safe_text(edit))
            out.append("\n")
            out.append("original: ", DIM + " italic")
            out.append_text(safe_text(original, DIM))
        out.append("\n")

    status = pending_status or c["status"]
    out.append(visible(c["id"], multiline=False), DIM)
    out.append("\n")
    out.append("status: ", LABEL)
    out.append(status, {"accepted": "green", "rejected": "red", "skipped": "yellow"}
               .get(status, "cyan"))
    if pending_status and pending_status != c["status"]:
        out.append(" (saving…)", DIM)
    if c.get("reviewer"):
        out.append(f"  by {visible(c['reviewer'], multiline=False)}", DIM)
        out.append(f" at {visible(c.get('reviewed_at'), multiline=False)}", DIM)
    out.append("\n")
    for label, original, edit in (("type", c["type"], c.get("edit_type")),
                                  ("difficulty", c.get("difficulty"), c.get("edit_difficulty"))):
        out.append(f"{label}: ", LABEL)
        if edit:
            out.append(visible(edit, multiline=False))
            out.append(f" (generated: {visible(original, multiline=False)})", DIM)
        else:
            out.append(visible(original or "-", multiline=False))
        out.append("   ")
    out.append("\n")
    line("verdict", c.get("verdict"))
    if c.get("duplicate_of"):
        line("duplicate of", c["duplicate_of"], "yellow")
    if c.get("tags"):
        line("tags", " ".join(f"#{t}" for t in c["tags"]), "magenta")
    if c.get("reject_reason"):
        line("rejected as", c["reject_reason"] + (f" — {c['reject_note']}"
                                                  if c.get("reject_note") else ""), "red")

    edited_field("Question", c["question"], c.get("edit_question"))
    edited_field("Reference answer", c["answer"], c.get("edit_answer"))

    out.append("\nVerification\n", H)
    checks = c.get("verification") or []
    if not checks:
        out.append("no checks recorded\n", DIM)
    for check in checks if isinstance(checks, list) else []:
        if not isinstance(check, dict):
            continue
        passed = check.get("passed")
        out.append("✓ " if passed else ("✗ " if passed is False else "? "),
                   "green" if passed else "red")
        out.append(visible(str(check.get("check", "?")), multiline=False), LABEL)
        if check.get("reason"):
            out.append(": ")
            out.append(visible(str(check["reason"])))
        extra = " · ".join(visible(str(check[k]), multiline=False)
                           for k in ("source", "model") if check.get(k))
        if extra:
            out.append(f"  ({extra})", DIM)
        out.append("\n")
    for reason in c.get("rejection_reasons") or []:
        out.append("✗ ", "red")
        out.append(visible(str(reason)))
        out.append("\n")

    out.append("\nSources\n", H)
    sources = c.get("sources") or []
    for hop_number, hop in enumerate(sources, 1):
        for chunk in hop:
            out.append(f"Hop {hop_number}" if len(sources) > 1 else "Chunk", "bold cyan")
            out.append(" · ")
            out.append(visible(chunk.get("document_title") or "?", multiline=False), LABEL)
            heading = chunk.get("heading_path") or []
            if isinstance(heading, list) and heading:
                out.append(" › " + " › ".join(visible(str(h), multiline=False)
                                              for h in heading))
            pages = chunk.get("pages") or []
            if pages:
                out.append(f" · {pages_label(pages)}", LABEL)
            out.append(f"  [{visible(chunk['id'], multiline=False)}]", DIM)
            out.append("\n")
            if chunk.get("missing"):
                out.append("(chunk not found in the knowledge base)\n", "red")
                continue
            text = chunk.get("text") or ""
            out.append_text(highlighted(text, evidence_spans(text, chunk.get("evidence", []))))
            out.append("\n\n")
    return out


class DetailPane(VerticalScroll):
    """Scrollable detail of the current candidate."""

    def compose(self):
        yield Static(Text("No candidate selected.", "dim"), id="detail-body")

    def show(self, candidate: dict | None, pending_status: str | None = None) -> None:
        body = self.query_one("#detail-body", Static)
        if candidate is None:
            body.update(Text("No candidate matches the filter. Press f to change it.", "dim"))
        else:
            body.update(render_candidate(candidate, pending_status))
        self.scroll_home(animate=False)
