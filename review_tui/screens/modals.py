"""Small dialogs: bulk confirmation, reject reason picker, tag entry, filter editor, agreement.

Every dialog's content sits in a scroll container no taller than the screen, so on a small
terminal (80x24) it scrolls instead of being cut off. Labels that come from the database (tags,
document titles, types, annotator names) are shown as `Text` after `visible()`, never as
markup strings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from builder.store import Store
from builder.store.review_queue import DUPLICATES, PART_FILTERS, SORTS, CandidateFilter
from builder.vocabulary import DIFFICULTIES, REJECT_REASONS, STATUSES, VERDICTS
from builder.text.terminal import visible

REASON_LABELS = {
    "wrong_answer": "wrong answer",
    "not_grounded": "not grounded in the sources",
    "ambiguous": "ambiguous question",
    "duplicate": "duplicate",
    "trivial": "trivial",
    "other": "other (note required)",
}


def items(n: int) -> str:
    """'1 item', '100,000 items'."""
    return f"{n:,} item{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class BulkChoice:
    """The answer to a bulk confirmation: overwrite=True includes already-decided items."""

    overwrite: bool


class BulkConfirmScreen(ModalScreen[BulkChoice | None]):
    """Confirm a bulk action. By default it applies to the items nobody decided yet; when the
    filter also holds decided items the dialog says how many and whose, and overwriting them
    takes its own key (o). Dismisses None unless the user says yes."""

    BINDINGS = [
        Binding("y", "answer(False)", "Undecided only", id="confirm.yes"),
        Binding("o", "answer(True)", "Overwrite too", id="confirm.overwrite"),
        Binding("n,escape", "cancel", "No", id="confirm.no"),
    ]

    def __init__(self, question: str, filter_text: str, preview: dict):
        super().__init__()
        self.question = question
        """What y does, with `{n}` where the count goes: "Accept {n}?"."""
        self.filter_text = filter_text
        self.preview = preview

    def compose(self) -> ComposeResult:
        p = self.preview
        applies, overwrite = p.get("applies", p["open"]), p.get("applies_overwrite", p["matching"])
        text = Text(self.question.format(n=items(applies)) + "\n", "bold")
        text.append(f"{items(p['matching'])} match ")
        text.append(visible(self.filter_text, multiline=False) + "\n\n")
        text.append(f"y applies to the {applies:,} not decided yet.\n")
        if p.get("not_ready"):
            text.append(f"{items(p['not_ready'])} from production left out: not ready to "
                        f"accept (no reference or no chunks marked).\n", "yellow")
        if p["decided"]:
            whose = ", ".join(f"{visible(a, multiline=False)} {n:,}" for a, n in p["by"].items())
            text.append(f"{p['decided']:,} already decided", "bold yellow")
            text.append(f" (by {whose})" if whose else "", "yellow")
            text.append(f": o overwrites them too, as your final decision ({overwrite:,} in "
                        f"all).\n", "yellow")
        text.append("u undoes the whole batch.", "dim")
        with VerticalScroll(classes="dialog"):
            yield Static(text, classes="dialog-title")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"Yes, {applies:,} (y)", variant="primary", id="yes")
                if p["decided"]:
                    yield Button(f"Overwrite, {overwrite:,} (o)", variant="warning",
                                 id="overwrite")
                yield Button("Cancel (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_answer(self, overwrite: bool) -> None:
        if overwrite and not self.preview["decided"]:
            return
        self.dismiss(BulkChoice(overwrite))

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "no":
            self.dismiss(None)
        else:
            self.action_answer(event.button.id == "overwrite")


@dataclass(frozen=True)
class Rejection:
    reason: str
    note: str | None


class RejectScreen(ModalScreen[Rejection | None]):
    """Pick a reason (1-6 or arrows + enter), optionally type a note; 'other' needs one."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="reject.cancel"),
        *(Binding(str(i), f"pick({i - 1})", show=False, id=f"reject.reason_{i}")
          for i in range(1, len(REJECT_REASONS) + 1)),
    ]

    def __init__(self, title: str = "Reject: why?"):
        super().__init__()
        self.title_text = title

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog"):
            yield Static(Text(self.title_text, "bold"), classes="dialog-title")
            yield OptionList(*(Option(Text(f"{i}  {REASON_LABELS[r]}"), id=r)
                               for i, r in enumerate(REJECT_REASONS, 1)), id="reasons")
            yield Input(placeholder="note (optional; required for other) — enter to confirm",
                        id="note")
            yield Static(Text("", "red"), id="reject-error")

    def on_mount(self) -> None:
        options = self.query_one("#reasons", OptionList)
        options.highlighted = 0
        options.focus()

    def _reason(self) -> str:
        index = self.query_one("#reasons", OptionList).highlighted or 0
        return REJECT_REASONS[index]

    def _finish(self) -> None:
        note = self.query_one("#note", Input).value.strip() or None
        reason = self._reason()
        if reason == "other" and not note:
            self.query_one("#reject-error", Static).update(Text("Reason 'other' needs a note.",
                                                                "red"))
            self.query_one("#note", Input).focus()
            return
        self.dismiss(Rejection(reason, note))

    def action_pick(self, index: int) -> None:
        self.query_one("#reasons", OptionList).highlighted = index
        self._finish()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._finish()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._finish()

    def action_cancel(self) -> None:
        self.dismiss(None)


class TagScreen(ModalScreen[str | None]):
    """Type a tag; `-tag` removes it. Dismisses the raw text (or None on escape)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="tag.cancel")]

    def __init__(self, current: list[str], known: list[str], title: str = "Tag"):
        super().__init__()
        self.current = current
        self.known = known
        self.title_text = title

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog"):
            yield Static(Text(self.title_text, "bold"), classes="dialog-title")
            info = Text("current: ", "bold")
            info.append(visible(" ".join(f"#{t}" for t in self.current) or "none",
                                multiline=False))
            info.append("\nknown: ", "bold")
            info.append(visible(" ".join(self.known[:30]) or "none", multiline=False))
            yield Static(info)
            yield Input(placeholder="tag (prefix with - to remove), enter to apply", id="tag")

    def on_mount(self) -> None:
        self.query_one("#tag", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


def _options(values, labels=None) -> list[tuple[Text, str]]:
    return [(Text(visible(str(labels[i] if labels else v), multiline=False)), str(v))
            for i, v in enumerate(values)]


class FilterScreen(ModalScreen[CandidateFilter | None]):
    """Edit every filter field at once; enter/ctrl+s applies, escape cancels."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="filter.cancel"),
        Binding("ctrl+s", "apply", "Apply", priority=True, id="filter.apply"),
    ]

    def __init__(self, current: CandidateFilter, choices: dict[str, list]):
        super().__init__()
        self.current = current
        self.choices = choices

    def compose(self) -> ComposeResult:
        c, ch = self.current, self.choices
        docs = ch.get("document", [])
        fields = [
            ("status", _options(STATUSES), c.status),
            ("type", _options(ch.get("type", [])), c.type),
            ("difficulty", _options(ch.get("difficulty") or DIFFICULTIES), c.difficulty),
            ("tag", _options(ch.get("tag", [])), c.tag),
            ("document", _options([d[0] for d in docs], [d[1] for d in docs]), c.document_id),
            ("verdict", _options(ch.get("verdict") or list(VERDICTS)),
             c.verdict),
            ("reviewer", _options(ch.get("reviewer", [])), c.reviewer),
            ("conflict", [(Text("conflicts only (adjudication)"), "yes"),
                          (Text("no conflicts"), "no")],
             None if c.conflict is None else ("yes" if c.conflict else "no")),
            ("parts", [(Text(label), value) for value, label in PART_FILTERS.items()], c.parts),
        ]
        with VerticalScroll(classes="dialog wide"):
            yield Static(Text("Filter (blank = any) — ctrl+s applies", "bold"),
                         classes="dialog-title")
            with Grid(id="filter-grid"):
                for name, options, value in fields:
                    yield Label(name)
                    known = {v for _, v in options}
                    yield Select(options, value=value if value in known else Select.NULL,
                                 allow_blank=True, id=f"f-{name}", compact=True)
                yield Label("duplicates")
                yield Select([(d, d) for d in DUPLICATES], value=c.duplicates,
                             allow_blank=False, id="f-duplicates", compact=True)
                yield Label("sort")
                yield Select([(s, s) for s in SORTS], value=c.sort, allow_blank=False,
                             id="f-sort", compact=True)
                yield Label("search")
                yield Input(value=c.text, id="f-text", compact=True)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Apply", variant="primary", id="apply")
                yield Button("Reset to queue", id="reset")
                yield Button("Cancel", id="cancel")

    def _value(self, name: str):
        value = self.query_one(f"#f-{name}", Select).value
        return None if value is Select.NULL or value == Select.NULL else value

    def action_apply(self) -> None:
        self.dismiss(replace(
            self.current, status=self._value("status"), type=self._value("type"),
            difficulty=self._value("difficulty"), tag=self._value("tag"),
            document_id=self._value("document"), verdict=self._value("verdict"),
            reviewer=self._value("reviewer"),
            conflict=None if self._value("conflict") is None else self._value("conflict") == "yes",
            parts=self._value("parts"),
            duplicates=self._value("duplicates") or "exclude",
            sort=self._value("sort") or "queue",
            text=self.query_one("#f-text", Input).value.strip()))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_apply()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "apply":
            self.action_apply()
        elif event.button.id == "reset":
            self.dismiss(CandidateFilter())
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class StatsScreen(ModalScreen[None]):
    """`golden review-stats` in a dialog: agreement per pair and overall, reject reasons,
    adjudication, and each annotator's throughput (read once, when it opens)."""

    BINDINGS = [Binding("escape,q,S", "close", "Close", id="stats.close")]

    def __init__(self, db_path: str):
        super().__init__()
        self.db_path = db_path

    def compose(self) -> ComposeResult:
        from builder.review.summary import review_summary

        with Store(self.db_path, migrate=False) as store:
            summary = review_summary(store)
        with VerticalScroll(classes="dialog wide"):
            yield Static(stats_text(summary))

    def action_close(self) -> None:
        self.dismiss(None)


def stats_text(summary: dict) -> Text:
    def fmt(value, pct=False) -> str:
        return "-" if value is None else (f"{value:.0%}" if pct else f"{value:.2f}")

    agree, out = summary["agreement"], Text()
    out.append("Agreement (esc closes)\n", "bold underline")
    overlap = summary["overlap"]
    out.append(f"overlap: {overlap['k']} annotators on {overlap['share']:.0%} of the items\n"
               if overlap["k"] > 1 else "overlap: off (golden review --overlap 2)\n", "dim")
    overall = agree["overall"]
    out.append(f"Krippendorff's alpha {fmt(overall['alpha'])} over {overall['items']} items "
               f"decided by 2+ annotators ({overall['values']} decisions)\n")
    for p in agree["pairs"]:
        out.append(f"  {visible(p['a'], multiline=False)} × {visible(p['b'], multiline=False)}"
                   f": {p['n']} items, agree {fmt(p['observed'], True)}, Cohen's kappa "
                   f"{fmt(p['kappa'])}\n")
    r = agree["reasons"]
    out.append(f"reject reasons: {r['n']} rejected by both, same reason "
               f"{fmt(r['observed'], True)}, kappa {fmt(r['kappa'])}\n")
    adj = summary["adjudication"]
    out.append(f"adjudication: {adj['open']} waiting, {adj['settled']} settled\n\n")
    out.append("Annotators\n", "bold underline")
    for name, a in summary["annotators"].items():
        rate = "-" if a["per_hour"] is None else f"{a['per_hour']:.0f}/h"
        out.append(f"  {visible(name, multiline=False)}: ✓{a['accept']} ✗{a['reject']} "
                   f"»{a['skip']} final {a['final']} · {a['active_seconds'] / 60:.0f} min "
                   f"active · {rate}\n")
    return out
