"""`golden logs import`: production log files into the database, streamed, scrubbed, all or
nothing.

Guarantees:
- Streaming: files are read line by line (gzip-compressed ones too) and staged in batches
  (`builder.store.logs.LogStaging`); memory does not grow with the file (measured by
  `bench/bench_logs_import.py`).
- Privacy before storage: every string is scrubbed (builder/logs/scrub.py) before the record is
  staged, and so are the file names kept in `log_imports.paths` (a log file named after a
  user's e-mail address); staging refers to a file by its position in `paths`. Error messages
  name the file, line and field, never a value, nor a field name that is not one of the
  format's own (an e-mail address used as a JSON key).
- All or nothing: the first bad line (not JSON, not UTF-8, not a record or span, a field of
  the wrong type) stops the import with `path:line: reason` and the database keeps nothing of
  it; otherwise every record of every file given lands in one transaction.
- Idempotent by record id: a record already stored is left as it is (counted as unchanged, or
  as differing when the same id now carries other content); the same id twice in the input
  keeps the first.

Each line is golden's own record (`records.py`: it has a "query"), an OTLP/JSON line
("resourceSpans") or a span ("context" with a trace id): `spans.py` maps traces onto records.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from builder.errors import InputError
from builder.logs.records import parse_record, stored_row
from builder.logs.scrub import Scrubber
from builder.logs.spans import facts_of, is_otlp, is_span, spans_of_line, trace_record
from builder.store.db import Store
from builder.store.jsoncols import to_json
from builder.store.logs import RECORD_COLUMNS, RECORD_JSON, LogStaging
from builder.text.input_files import open_input, reading
from builder.text.jsonl import parse_json

BATCH = 1000
PROGRESS_EVERY_S = 10.0
_KINDS = "a golden log record (it has \"query\"), an OTLP/JSON line (\"resourceSpans\") or a " \
         "span (\"context\" with \"trace_id\")"


@dataclass
class ImportReport:
    paths: list[str]
    lines: int = 0
    records: int = 0                 # golden lines + traces assembled into records
    spans: int = 0
    duplicates: int = 0              # a record id seen twice in the input (the first is kept)
    skipped_traces: int = 0          # traces with no question (not RAG requests)
    scrubbed_records: int = 0
    scrubbed: dict[str, int] = field(default_factory=dict)
    added: int = 0
    unchanged: int = 0
    differing: int = 0
    import_id: int | None = None


def _open(path: str) -> BinaryIO:
    """The file, gunzipped when it starts with gzip's magic bytes; a missing path, a folder or
    a FIFO is refused by `open_input` (never waited on)."""
    fh = open_input(path)
    with reading(path):
        try:
            gzipped = fh.read(2) == b"\x1f\x8b"
            fh.seek(0)
        except BaseException:
            fh.close()
            raise
        if not gzipped:
            return fh
        fh.close()
        return gzip.open(path, "rb")  # type: ignore[return-value]


def _json_lines(path: str) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line; split on "\\n" only (U+2028 inside a
    JSON string is data)."""
    with _open(path) as fh:
        n = 0
        try:
            for n, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(f"not valid UTF-8 (byte {exc.start + 1})", path=path,
                                     line=n) from None
                yield n, parse_json(text, path, n, label="not JSON")
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise InputError(f"cannot read after line {n} ({exc})", path=path) from None


class _Batch:
    """Rows waiting to be staged; flushed every BATCH records."""

    def __init__(self, staging: LogStaging, report: ImportReport):
        self.staging, self.report = staging, report
        self.records: list[tuple] = []
        self.contexts: dict[str, str] = {}
        self.spans: list[tuple] = []

    def record(self, row: dict[str, Any], contexts: list[tuple[str, str]]) -> None:
        for c in RECORD_JSON:
            row[c] = to_json(row[c])
        self.records.append(tuple(row[c] for c in RECORD_COLUMNS))
        self.contexts.update(contexts)
        self.report.records += 1
        if len(self.records) >= BATCH:
            self.flush()

    def span(self, row: tuple) -> None:
        self.spans.append(row)
        self.report.spans += 1
        if len(self.spans) >= BATCH * 4:
            self.flush()

    def flush(self) -> None:
        new = self.staging.add(self.records, self.contexts.items(), self.spans)
        self.report.duplicates += len(self.records) - new
        self.records, self.contexts, self.spans = [], {}, []


def import_logs(store: Store, paths: list[str], scrubber: Scrubber, *,
                progress: Callable[[str], None] | None = None) -> ImportReport:
    """Import every file in `paths` (see the module docstring); the report says what was read,
    added and scrubbed."""
    for path in paths:  # every file is checked before any work
        _open(path).close()
    report = ImportReport(paths=stored_paths(paths))
    started = last = time.monotonic()
    with LogStaging(store) as staging:
        batch = _Batch(staging, report)
        seq = 0
        for index, path in enumerate(paths):
            for n, obj in _json_lines(path):
                report.lines += 1
                if not isinstance(obj, dict):
                    raise InputError(f"not {_KINDS}: a JSON {type(obj).__name__}", path=path,
                                     line=n)
                if is_otlp(obj) or is_span(obj):
                    source = "otlp" if is_otlp(obj) else "span"
                    for span in spans_of_line(obj, path, n):
                        if not span.trace_id:
                            raise InputError("a span without a trace id", path=path, line=n)
                        seq += 1
                        facts = facts_of(span).scrubbed_json(scrubber)
                        batch.span((scrubber.pseudonym(span.trace_id), span.start_ns, seq,
                                    source, f"{index}:{n}", facts))
                elif "query" in obj:
                    before = scrubber.total
                    row, contexts = stored_row(parse_record(obj, path, n), scrubber, "golden")
                    report.scrubbed_records += scrubber.total != before
                    batch.record(row, contexts)
                else:
                    raise InputError(f"not {_KINDS}", path=path, line=n)
                now = time.monotonic()
                if progress and now - last >= PROGRESS_EVERY_S:
                    last = now
                    progress(f"read {report.lines:,} lines ({report.lines / (now - started):,.0f}"
                             f" lines/s)")
        batch.flush()
        _assemble_traces(staging, batch, scrubber, report, paths)
        batch.flush()
        report.scrubbed = dict(scrubber.counts)
        counts = staging.merge(paths=report.paths, lines=report.lines, records=report.records,
                               scrubbed=report.scrubbed)
    report.import_id = counts.import_id
    report.added, report.unchanged, report.differing = (counts.added, counts.unchanged,
                                                        counts.differing)
    return report


def stored_paths(paths: list[str]) -> list[str]:
    """The file names as `log_imports.paths` keeps them: scrubbed like a record's text (a
    Scrubber of their own, so the import report counts what the records held)."""
    scrubber = Scrubber()
    return [scrubber.text(p) for p in paths]


def _assemble_traces(staging: LogStaging, batch: _Batch, scrubber: Scrubber,
                     report: ImportReport, paths: list[str]) -> None:
    """One record per staged trace (spans.trace_record), staged like a golden line. The
    trace id was pseudonymised when staged; an error names the file and line, not the id."""
    for trace_id, spans in staging.traces():
        source, origin = spans[0][0], spans[0][1]
        index, _, line = origin.partition(":")
        path = paths[int(index)]
        facts = [json.loads(f) for _, _, f in spans]
        try:
            data = trace_record(trace_id, facts)
        except ValueError as exc:
            raise InputError(f"a trace: {exc}", path=path, line=int(line)) from None
        if data is None:
            report.skipped_traces += 1
            continue
        before = scrubber.total
        record = parse_record(data, path, int(line))
        row, contexts = stored_row(record, scrubber, source)
        report.scrubbed_records += scrubber.total != before or any(f["scrubbed"] for f in facts)
        batch.record(row, contexts)


def describe(report: ImportReport, scrubber: Scrubber) -> list[str]:
    """The import report as lines for the terminal."""
    files = f"{len(report.paths)} file{'s' if len(report.paths) != 1 else ''}"
    read = f"read {report.lines:,} lines from {files}: {report.records:,} records"
    if report.spans:
        read += f" ({report.spans:,} spans in traces"
        read += (f"; {report.skipped_traces:,} traces without a question skipped)"
                 if report.skipped_traces else ")")
    lines = [read]
    stored = f"added {report.added:,}; already imported {report.unchanged:,}"
    if report.differing:
        stored += (f"; {report.differing:,} already imported with other content "
                   "(kept as first imported)")
    if report.duplicates:
        stored += f"; {report.duplicates:,} repeated ids in the input (first kept)"
    lines.append(stored)
    lines.append(f"scrubbed before storage: {scrubber.summary(report.scrubbed_records)}")
    return lines
