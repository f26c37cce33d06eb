"""When a candidate may be accepted: the one rule, used by the store's check before an accept
(`review_log.check_accept`), by bulk accepts in SQL (registered on every connection as
`golden_accept_problem`, see `register`) and by the review screen before it sends anything.

A `production` item (a real user question promoted from logs) is accepted only with a reference
answer and its relevant chunks marked by a reviewer: none at all only when it was made an
unanswerable item (the knowledge base does not cover it). An edited answer that is blank counts
as no edit (as `review_log` stores it: the generated original stands), so an answer "edited to
''" means the same thing to the screen, the store and the SQL.
"""

from __future__ import annotations

import sqlite3

from builder.store.jsoncols import from_json
from builder.vocabulary import PRODUCTION

SQL_FUNCTION = "golden_accept_problem"
NO_ANSWER, NO_MARKS, NONE_MARKED = "no_answer", "no_marks", "none_marked"
MESSAGES = {
    NO_ANSWER: "a production item needs a reference answer before it is accepted: write it "
               "(edit)",
    NO_MARKS: "a production item needs its relevant chunks marked before it is accepted: mark "
              "them in the knowledge-base search",
    NONE_MARKED: "no relevant chunk is marked: mark at least one, or make the item "
                 "unanswerable (type) when the knowledge base does not cover it",
}


def reference_answer(answer: str | None, edit_answer: str | None) -> str:
    """The answer an accepted item carries: the reviewer's edit unless it is blank."""
    return edit_answer if edit_answer is not None and edit_answer.strip() else (answer or "")


def accept_problem(kind: str | None, answer: str | None, edit_answer: str | None,
                   edit_chunk_ids: str | list | None, edit_type: str | None) -> str | None:
    """Why the candidate cannot be accepted yet (NO_ANSWER, NO_MARKS, NONE_MARKED), or None.
    `edit_chunk_ids` as stored (JSON text) or decoded (a list; None while unmarked)."""
    if kind != PRODUCTION:
        return None
    if not reference_answer(answer, edit_answer).strip():
        return NO_ANSWER
    marked = from_json(edit_chunk_ids) if isinstance(edit_chunk_ids, str) else edit_chunk_ids
    if marked is None:
        return NO_MARKS
    if not marked and (edit_type or kind) != "unanswerable":
        return NONE_MARKED
    return None


NOT_READY_SQL = (f"(c.type = '{PRODUCTION}' AND {SQL_FUNCTION}(c.type, c.answer, c.edit_answer,"
                 " c.edit_chunk_ids, c.edit_type) IS NOT NULL)")
"""A candidate that cannot be accepted yet, in SQL: `accept_problem` itself."""


def register(conn: sqlite3.Connection) -> None:
    conn.create_function(SQL_FUNCTION, 5, accept_problem, deterministic=True)
