"""Numeric limits a statement sets ("up to a maximum of 5 days", "at least 4 weeks' notice",
"after 7 calendar days"), and scenarios on either side of them, decided by code.

Reasoning items are built on these (material.pick_reasoning): code reads the limit, picks a
value for the user's situation a little past it or a little inside it, and knows whether the
statement's rule covers that situation; the model only phrases the yes/no question, and the
reference answer is "Yes"/"No" followed by the statement, written by code. Measured with the
embedded models, a model that writes the outcome itself contradicts its evidence ("No: that
can be done on a personal device" where the text says "only on a work device"); a comparison
done by code cannot.

Comparators are listed for English, Spanish, French, German, Portuguese and Italian. `within`,
`up to`, `at most` are upper bounds (value <= limit), `at least` a lower bound (>=), `more
than`/`after`/`over` strict lower bounds (>), `less than`/`under`/`before` strict upper ones.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

_NUMBER = r"(?P<n>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
_UNIT = (r"(?P<unit>%|(?:(?:calendar|working|business|consecutive)\s+)?[^\W\d_]+"
         r"(?:\s+(?:hábiles|laborables|naturales|ouvrés|ouvrables))?)")
_COMPARATORS = {
    "<=": r"up to(?: a maximum of)?|a maximum of|maximum of|at most|no more than|not more than|"
          r"within|hasta(?: un máximo de)?|un máximo de|como máximo|dentro de|en un plazo de|"
          r"jusqu'à|au maximum|"
          r"au plus|dans un délai de|bis zu|höchstens|maximal|innerhalb von|até|no máximo|"
          r"dentro de|fino a|al massimo|entro",
    "<": r"less than|fewer than|under|before|menos de|antes de|moins de|avant|weniger als|vor|"
         r"meno di|prima di",
    ">=": r"at least|a minimum of|minimum of|no less than|not less than|al menos|como mínimo|"
          r"un mínimo de|au moins|au minimum|mindestens|pelo menos|no mínimo|almeno|"
          r"come minimo",
    ">": r"more than|over|after|longer than|más de|después de|plus de|après|mehr als|nach|"
         r"mais de|depois de|più di|dopo",
}
_LIMIT = re.compile(
    r"\b(?P<cmp>" + "|".join(f"(?P<c{i}>{p})" for i, p in enumerate(_COMPARATORS.values()))
    + r")\s+(?:(?:a|an|the|un|una|los|las|le|la|les|der|die|das|den|o|os|il|i)\s+)?"
    + r"(?:(?:first|next|last|primer|primeros|primeras|premiers|premières|ersten|primeiros|"
    + r"primi)\s+)?" + r"(?:(?P<cur>[$€£¥])\s?" + _NUMBER.replace("?P<n>", "?P<m>") + r"|"
    + _NUMBER + r"\s?" + _UNIT + r")", re.I)
_OPS = list(_COMPARATORS)


@dataclass(frozen=True)
class Limit:
    """One numeric limit of a statement."""

    op: str          # "<=", "<", ">=", ">"
    value: Decimal
    unit: str        # "days", "weeks", "%", "$" ...
    phrase: str      # the words that set it, as written ("up to a maximum of 5 days")

    def holds(self, x: Decimal) -> bool:
        """Whether a situation with value `x` is within the limit's rule."""
        return {"<=": x <= self.value, "<": x < self.value, ">=": x >= self.value,
                ">": x > self.value}[self.op]

    def say(self, x: Decimal) -> str:
        """`x` in the limit's unit, as a user would say it ("7 days", "$40", "15%")."""
        number = format(x.normalize(), "f") if x == x.to_integral() else str(x)
        if self.unit == "%":
            return f"{number}%"
        if self.unit in "$€£¥":
            return f"{self.unit}{number}"
        unit = self.unit
        if x == 1 and unit.endswith("s") and len(unit) > 3:
            unit = unit[:-1]  # "1 days" -> "1 day" (English; other languages keep theirs)
        return f"{number} {unit}"


def limits(text: str) -> list[Limit]:
    """The numeric limits `text` states, in order."""
    out = []
    for m in _LIMIT.finditer(text):
        op = next(_OPS[i] for i in range(len(_OPS)) if m.group(f"c{i}"))
        try:
            value = Decimal((m.group("n") or m.group("m")).replace(",", ""))
        except InvalidOperation:
            continue
        unit = m.group("cur") or m.group("unit")
        out.append(Limit(op, value, unit, m.group(0)))
    return out


def scenario(limit: Limit, seed: object) -> tuple[Decimal, bool]:
    """A situation value near the limit and whether the rule covers it: seeded, so the same
    fact always gets the same scenario; inside and outside in about equal numbers."""
    rng = random.Random(str(seed))
    step = max(Decimal(1), (limit.value * Decimal("0.4")).to_integral())
    inside = rng.random() < 0.5
    upper = limit.op in ("<=", "<")
    value = limit.value - step if inside == upper else limit.value + step
    if value <= 0:  # "up to 1 day": a value inside is not a situation anyone describes
        value, inside = limit.value + step, not upper
    return value, limit.holds(value)
