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

from builder.store.review_ready import reference_answer
from builder.text.terminal import visible
from review_tui.safe_text import safe_text
from review_tui.widgets.candidate_list import STATUS_GLYPH

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


DECISION_STYLE = {"accept": ("✓ accept", "green"), "reject": ("✗ reject", "red"),
                  "skip": ("» skip", "yellow")}


def render_decisions(c: dict, annotator: str | None = None) -> Text:
    """Every annotator's current decision on the candidate, one line each, side by side in
    columns (who, decision, reason, note, when); final decisions marked. Empty Text if none."""
    out = Text()
    decisions = c.get("decisions") or []
    if not decisions:
        return out
    needed = "" if not c.get("conflict") else "  — they disagree: an adjudicator decides"
    out.append("\nDecisions", H)
    out.append(needed + "\n", "bold red" if needed else "")
    width = min(16, max(len(visible(d["annotator"], multiline=False)) for d in decisions))
    for d in decisions:
        who = visible(d["annotator"], multiline=False)[:16]
        out.append(f"{who:<{width}}  ", "bold" if d["annotator"] == annotator else "")
        label, style = DECISION_STYLE.get(d["decision"], (d["decision"], ""))
        out.append(f"{visible(label, multiline=False):<9}", style)
        if d.get("final"):
            out.append(" FINAL", "bold magenta")
        if d.get("reason"):
            out.append(f" ({visible(d['reason'], multiline=False)})", "red")
        if d.get("note"):
            out.append(" — ")
            out.append(visible(d["note"], multiline=False))
        out.append(f"  {visible((d.get('at') or '')[:16], multiline=False)}", DIM)
        out.append("\n")
    return out


CLIP_LINES = 15
CLIP_CHARS = 1500
"""A question or answer longer than this shows its start and how much is left (w shows all):
a 10,000-line answer laid out in full took ~2 s on every move."""
SOURCE_CLIP_LINES = 200
SOURCE_CLIP_CHARS = 20_000
SNIPPET_CONTEXT = 60
"""Characters of the chunk shown either side of an evidence quote in the Evidence section."""


def clipped(text: str, max_lines: int = CLIP_LINES, max_chars: int = CLIP_CHARS
            ) -> tuple[str, int]:
    """(the start of `text` to show, how many lines were left out: 0 when all of it shows).
    Only the shown part is ever scanned past its limits' worth of characters."""
    head = text[:max_chars]
    lines = head.split("\n")
    if len(lines) > max_lines:
        head = "\n".join(lines[:max_lines])
    elif len(text) <= max_chars:
        return text, 0
    total = text.count("\n") + (0 if text.endswith("\n") else 1)
    return head, max(1, total - (head.count("\n") + 1))


def clipped_text(text: str, style: str = "") -> Text:
    """`text` made safe and clipped (see `clipped`), with a line saying what is left out."""
    shown, left = clipped(text)
    out = safe_text(shown, style)
    if left:
        out.append(f"\n… {left:,} more line{'s' if left > 1 else ''} (w shows all)",
                   "bold yellow")
    return out


def render_candidate(c: dict, pending_status: str | None = None,
                     annotator: str | None = None) -> Text:
    """The detail view of one candidate (as returned by `get_candidate`): a one-line state,
    then what a reviewer judges, most important first and compact, so that on an 80x24
    terminal the question, the answer, the evidence and the verification fit without
    scrolling for a typical item. The full sources and every check follow (`render_sources`)."""
    out = Text()

    def line(label: str, value: str | None, style: str = "") -> None:
        out.append(f"{label}: ", LABEL)
        out.append(visible(value or "-", multiline=False), style)
        out.append("\n")

    def edited_field(title: str, original: str, edit: str | None) -> None:
        out.append(title, H)
        if edit is None:
            out.append("\n")
            out.append_text(clipped_text(original))
        else:
            out.append("  (edited)\n", "italic")
            out.append_text(clipped_text(edit))
            out.append("\n")
            out.append("original: ", DIM + " italic")
            out.append_text(clipped_text(original, DIM))
        out.append("\n")

    status = pending_status or c["status"]
    out.append(visible(c["id"], multiline=False), DIM)
    out.append(" · ")
    out.append(status, {"accepted": "green", "rejected": "red", "skipped": "yellow"}
               .get(status, "cyan"))
    if pending_status and pending_status != c["status"]:
        out.append(" (saving…)", DIM)
    for original, edit in ((c["type"], c.get("edit_type")),
                           (c.get("difficulty"), c.get("edit_difficulty"))):
        out.append(" · ")
        if edit:
            out.append(visible(edit, multiline=False))
            out.append(f" (generated: {visible(original, multiline=False)})", DIM)
        else:
            out.append(visible(original or "-", multiline=False))
    out.append(" · verdict ")
    out.append(visible(c.get("verdict") or "-", multiline=False))
    if c.get("reviewer"):
        out.append(f" · by {visible(c['reviewer'], multiline=False)}", DIM)
        out.append(f" at {visible((c.get('reviewed_at') or '')[:16], multiline=False)}", DIM)
    out.append("\n")
    if c.get("adjudicated_by"):
        line("final decision by", c["adjudicated_by"], "magenta")
    if c.get("duplicate_of"):
        line("duplicate of", c["duplicate_of"], "yellow")
    if c.get("tags"):
        line("tags", " ".join(f"#{t}" for t in c["tags"]), "magenta")
    if c.get("reject_reason"):
        line("rejected as", c["reject_reason"] + (f" — {c['reject_note']}"
                                                  if c.get("reject_note") else ""), "red")
    others = [a for a in c.get("held_by") or [] if a != annotator]
    if others:
        line("being reviewed by", ", ".join(others), "yellow")
    out.append_text(render_decisions(c, annotator))

    edited_field("Question", c["question"], c.get("edit_question"))
    if c.get("provenance") is not None and not reference_answer(c["answer"],
                                                                c.get("edit_answer")).strip():
        out.append("Reference answer", H)
        out.append("\nnone yet: write it (e); a bad production answer is never a reference\n",
                   "bold red")
    else:
        edited_field("Reference answer", c["answer"], c.get("edit_answer"))
    if c.get("provenance") is not None:
        out.append_text(render_provenance(c))
    out.append_text(render_parts(c))
    out.append_text(render_evidence(c))
    out.append_text(render_verification(c))
    return out


PART_STATUS = {**{s: (f"{STATUS_GLYPH[s]} {s}", style) for s, style in (
    ("accepted", "green"), ("rejected", "bold red"), ("skipped", "yellow"))}, None: ("gone", DIM)}


def render_parts(c: dict) -> Text:
    """A harder item's parts, the verified items it was built from, each with its review
    status: a composed item repeats its parts' questions and answers, so a part rejected makes
    it wrong too (filter "parts" lists every such item), and a part edited leaves it holding
    the old words. Empty Text for a single-hop item."""
    out = Text()
    parts = c.get("parts") or []
    if not parts:
        return out
    out.append("Built from", H)
    if any(p.get("status") == "rejected" for p in parts):
        out.append("  a part was rejected: this item repeats it", "bold red")
    elif any(p.get("edited") for p in parts):
        out.append("  a part was edited: this item still holds its old words", "bold yellow")
    out.append("\n")
    for p in parts:
        label, style = PART_STATUS.get(p.get("status"), ("pending", "cyan"))
        out.append(f"{label:<10} ", style)
        out.append(visible(p.get("question") or p["id"], multiline=False))
        if p.get("edited"):
            out.append("  (edited)", "italic yellow")
        out.append("\n")
    return out


def render_evidence(c: dict) -> Text:
    """Each evidence quote in a short window of its chunk (where it is: document › headings),
    the quote highlighted; the whole chunks are further down (v)."""
    out = Text()
    shown = 0
    for hop_number, hop in enumerate(c.get("sources") or [], 1):
        for chunk in hop:
            text = chunk.get("text") or ""
            spans = evidence_spans(text, chunk.get("evidence") or [])
            if not spans:
                continue
            out.append("Evidence" if not shown else "", H)
            out.append(" · " if not shown else "")
            if len(c.get("sources") or []) > 1:
                out.append(f"hop {hop_number} · ", "bold cyan")
            out.append(visible(chunk.get("document_title") or "?", multiline=False), LABEL)
            heading = chunk.get("heading_path") or []
            if isinstance(heading, list) and heading:
                out.append(" › " + " › ".join(visible(str(h), multiline=False)
                                              for h in heading), DIM)
            out.append("\n")
            for start, end in spans:
                a, b = max(0, start - SNIPPET_CONTEXT), min(len(text), end + SNIPPET_CONTEXT)
                window = text[a:b].replace("\n", " ")
                out.append("…" if a else "", DIM)
                out.append_text(highlighted(window, [(start - a, end - a)]))
                out.append("…" if b < len(text) else "", DIM)
                out.append("\n")
            shown += 1
    if not shown:
        out.append("Evidence", H)
        out.append(" none recorded (v: the sources)\n", DIM)
    return out


def _check_line(out: Text, check: dict) -> None:
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


def render_verification(c: dict) -> Text:
    """The verdicts in brief: how many checks passed, then every check that did not pass
    and every model-made check (its reason is what the reader answered); all of them, with
    reasons, are listed after the sources."""
    out = Text()
    checks = [x for x in c.get("verification") or [] if isinstance(x, dict)] if isinstance(
        c.get("verification"), list) else []
    out.append("Verification", H)
    passed = sum(1 for x in checks if x.get("passed"))
    if not checks:
        out.append(" no checks recorded\n", DIM)
    else:
        out.append(f" ✓ {passed} of {len(checks)} passed\n",
                   "green" if passed == len(checks) else "yellow")
    for check in checks:
        if not check.get("passed") or check.get("source") not in (None, "code"):
            _check_line(out, check)
    for reason in c.get("rejection_reasons") or []:
        out.append("✗ ", "red")
        out.append(visible(str(reason)))
        out.append("\n")
    return out


def render_provenance(c: dict) -> Text:
    """Where a production item came from: the log record, why it was picked, the judge's
    evidence, the answer production gave, and what its chunks must be before accepting."""
    p = c["provenance"] if isinstance(c.get("provenance"), dict) else {}
    out = Text()
    out.append("From production\n", H)
    out.append("record: ", LABEL)
    out.append(visible(str(p.get("record_id") or "?"), multiline=False))
    out.append(f"  {visible(str(p.get('at') or '')[:16], multiline=False)}", DIM)
    linked = (c.get("linked_records") or 1) - 1
    if linked > 0:
        out.append(f"  (+{linked} more record{'s' if linked > 1 else ''} asking the same)",
                   "magenta")
    out.append("\npicked as: ", LABEL)
    out.append(visible(str(p.get("picked_as") or "?"), multiline=False))
    if p.get("cause"):
        out.append(" · cause: ", LABEL)
        out.append(visible(str(p["cause"]), multiline=False), "yellow")
    signals = p.get("signals") or []
    if signals:
        out.append(" · ")
        out.append(visible(", ".join(str(x) for x in signals), multiline=False), "red")
    out.append("\n")
    for line in p.get("evidence") or []:
        out.append("  • ")
        out.append(visible(str(line)))
        out.append("\n")
    if p.get("production_answer"):
        out.append("production answered: ", LABEL)
        out.append_text(clipped_text(str(p["production_answer"]), DIM))
        out.append("\n")
    marked = c.get("edit_chunk_ids")
    if marked is None:
        suggested = [str(x) for x in p.get("useful_chunk_ids") or []]
        out.append("relevant chunks: none marked yet: mark them (m, knowledge-base search)",
                   "bold red")
        if suggested:
            out.append("; judged useful in production: ")
            out.append(visible(", ".join(suggested), multiline=False), DIM)
        out.append("\n")
    elif not marked:
        out.append("relevant chunks: none (the knowledge base does not cover it: make the "
                   "item unanswerable)\n", "yellow")
    return out


def render_sources(c: dict) -> Text:
    """The candidate's source chunks hop by hop, evidence highlighted (the chunks a reviewer
    marked, when there are some)."""
    out = Text()
    out.append("Relevant chunks (marked)\n" if isinstance(c.get("edit_chunk_ids"), list)
               else "Sources\n", H)
    sources = c.get("sources") or []
    if not sources:
        out.append("none\n", DIM)
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
                from builder.ingest.document_text import pages_label  # PDFs only: not at start

                out.append(f" · {pages_label(pages)}", LABEL)
            out.append(f"  [{visible(chunk['id'], multiline=False)}]", DIM)
            out.append("\n")
            if chunk.get("missing"):
                out.append("(chunk not found in the knowledge base)\n", "red")
                continue
            text = chunk.get("text") or ""
            shown, left = clipped(text, SOURCE_CLIP_LINES, SOURCE_CLIP_CHARS)
            out.append_text(highlighted(shown, evidence_spans(shown,
                                                              chunk.get("evidence", []))))
            if left:
                out.append(f"\n… {left:,} more lines of this chunk", "bold yellow")
            out.append("\n\n")
    checks = c.get("verification") if isinstance(c.get("verification"), list) else []
    if checks:
        out.append("All checks\n", H)
        for check in checks:
            if isinstance(check, dict):
                _check_line(out, check)
    return out


class DetailPane(VerticalScroll):
    """Scrollable detail of the current candidate: its state, text and verdicts, then its
    sources (a widget of their own, so `v` can jump to the evidence in one key)."""

    _at_evidence = False

    def compose(self):
        yield Static(Text("No candidate selected.", "dim"), id="detail-body")
        yield Static(Text(""), id="detail-sources")

    def show(self, candidate: dict | None, pending_status: str | None = None,
             annotator: str | None = None, *, adjudicating: bool = False) -> None:
        body = self.query_one("#detail-body", Static)
        sources = self.query_one("#detail-sources", Static)
        if candidate is None:
            body.update(Text("No candidate matches the filter. Press f to change it"
                             + (", or c to leave the adjudication queue." if adjudicating
                                else "."), "dim"))
            sources.update(Text(""))
        else:
            text = render_candidate(candidate, pending_status, annotator)
            if adjudicating:
                banner = Text("ADJUDICATION: your decision (a / r) is final\n",
                              "bold magenta")
                text = banner + text
            body.update(text)
            sources.update(render_sources(candidate))
        self.scroll_home(animate=False)
        self._at_evidence = False

    def waiting(self) -> None:
        """While the next item is being claimed (a few ms, longer if the database is busy)."""
        self.query_one("#detail-body", Static).update(Text("Taking the next item…", "dim"))
        self.query_one("#detail-sources", Static).update(Text(""))

    def toggle_evidence(self) -> None:
        """Scroll so the sources start at the top; if they already do, back to the top."""
        sources = self.query_one("#detail-sources", Static)
        if self.scroll_y and self._at_evidence:
            self.scroll_home(animate=False)
            self._at_evidence = False
        else:
            self.scroll_to_widget(sources, animate=False, top=True)
            self._at_evidence = True
