"""The portable review log file: JSONL, one review_log row per line, keyed by its stable `uid`.

    {"uid": "9f2c...", "candidate_id": "c-1a2b", "annotator": "alice",
     "at": "2025-01-01T10:00:00.000000+00:00", "action": "reject", "final": false,
     "reason": "wrong_answer", "note": "the fee is $5", "edits": null, "edits_before": null,
     "tag": null, "undoes": null, "batch_id": null}

`golden review export-log FILE` writes every row of the database (a file written under a
temporary name and renamed: all or nothing); `golden review import-log FILE` validates the
whole file first (one line naming file and line for the first bad row, nothing written), then
appends what is new (builder/store/review_sync.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from builder.errors import InputError
from builder.text.jsonl import jsonl_rows, read_input_text
from builder.vocabulary import DIFFICULTIES, REJECT_REASONS, TYPES

Action = Literal["accept", "reject", "skip", "edit", "tag", "untag", "undo"]


class LogRecord(BaseModel):
    """One review_log row as exported."""

    model_config = ConfigDict(extra="forbid")

    uid: str = Field(min_length=8, max_length=64, pattern=r"^[0-9A-Za-z_-]+$")
    candidate_id: str = Field(min_length=1)
    annotator: str = Field(min_length=1, max_length=200)
    at: str = Field(pattern=r"^\d{4}-\d\d-\d\dT")
    action: Action
    final: bool = False
    reason: str | None = None
    note: str | None = None
    edits: dict[Literal["question", "answer", "type", "difficulty"], str | None] | None = None
    edits_before: dict[Literal["question", "answer", "type", "difficulty"],
                       str | None] | None = None
    tag: str | None = None
    undoes: str | None = None
    batch_id: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> "LogRecord":
        if not self.annotator.isprintable():
            raise ValueError("annotator: control characters are not allowed")
        if self.action == "reject" and self.reason not in REJECT_REASONS:
            raise ValueError(f"reason must be one of {', '.join(REJECT_REASONS)}")
        if self.action == "undo" and not self.undoes:
            raise ValueError("an undo row needs `undoes` (the uid of the row it undoes)")
        if self.action == "edit":
            if not self.edits:
                raise ValueError("an edit row needs `edits`")
            if (self.edits.get("type") or TYPES[0]) not in TYPES:
                raise ValueError(f"edits.type must be one of {', '.join(TYPES)}")
            if (self.edits.get("difficulty") or DIFFICULTIES[0]) not in DIFFICULTIES:
                raise ValueError(f"edits.difficulty must be one of {', '.join(DIFFICULTIES)}")
        if self.action in ("tag", "untag") and not self.tag:
            raise ValueError("a tag row needs `tag`")
        return self


def read_log_file(path: str | Path) -> tuple[list[dict], list[int]]:
    """The records of a log file and their line numbers; InputError (file:line) on the first
    line that is not a valid record, or a uid repeated with different content."""
    spath = str(path)
    text = read_input_text(path)
    records: list[dict] = []
    lines: list[int] = []
    seen: dict[str, dict] = {}
    for n, raw in jsonl_rows(text, spath):
        try:
            record = LogRecord.model_validate(raw).model_dump()
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err["loc"]) or "row"
            raise InputError(f"{where}: {err['msg']}", path=spath, line=n) from None
        if record["uid"] in seen:
            if seen[record["uid"]] != record:
                raise InputError(f"uid {record['uid']} appears twice with different content",
                                 path=spath, line=n)
            continue
        seen[record["uid"]] = record
        records.append(record)
        lines.append(n)
    return records, lines


def record_line(record: dict) -> bytes:
    """One JSONL line of the file (keys in the model's order)."""
    return (json.dumps(LogRecord.model_validate(record).model_dump(), ensure_ascii=False)
            + "\n").encode("utf-8")
