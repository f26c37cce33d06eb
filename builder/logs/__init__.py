"""Production logs: the online-evaluation loop.

In run order: `importer` (files -> scrubbed records, via `records` for golden's own lines and
`spans` for OpenTelemetry traces; `scrub` replaces personal data first), `evaluate` (a
deterministic sample judged with `builder.score.judge`, reported with `builder.score`'s
renderers, plus `trends`), `attribution` (bad cases and their likely cause), `promote` (bad
cases and thumbs-up answers -> `production` candidates for review). `commands` holds the
`golden logs` click group. All SQL is in `builder/store/logs.py` and `production.py`.
"""
