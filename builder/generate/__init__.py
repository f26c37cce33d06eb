"""Generation: answer-first, checked by round trips, harder items composed from verified parts.

One module per stage, in the order a run uses them:

1. `spans.py` (code): the answers worth asking about -- values, names, table cells -- chosen in
   each statement, ordered for asking with the halves of harder items side by side;
2. `questions.py`: a question written for each span (`question.prompt`), checked by code
   (`form.py`) before any model reads it;
3. `roundtrip.py`: the retrieval round trip (BM25 over the whole KB, then the reader, compared by
   code);
4. `compose.py`: comparative, reasoning, ambiguous, multi-hop and unanswerable items built from
   verified single-hop items, answers computed by code;
5. `dedup.py`, `difficulty.py`: duplicates and measured difficulty over the pool.

Stages never import each other (an import-linter contract in pyproject.toml): they meet in
`pipeline.py`, the waves that order spans, questions, round trips and compositions, and in
`runner.py`, the run around them (plan, budget stop, settle, summary). `plan.py` parses the mix;
`progress.py` is the one progress display; `summary.py` renders the end-of-run table;
`commands.py` is `golden generate`.

What the stages share sits below them, each module named for what it is: `answers.py` (Span,
and the pairs and bridges harder items are built from), `statements.py` (a chunk cut into
statements), `knowledge.py` (the knowledge base as BM25 and sentence scoring see it),
`rivals.py` (sentences that compete with an answer's own), `reader.py` (the reader call and
code's reading of its reply), `form.py` (a question's form checks), `candidate.py` (candidate
rows and their ids), `context.py` (the run's context and `run_units`), `terms.py` (word terms,
numbers, dates), `models.py` (the prompts' reply models and the run's options). All SQL is in
`builder.store.candidates`.
"""
