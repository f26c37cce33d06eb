"""Generation: answer-first, checked by round trips, harder items composed from verified parts.

In the order a run uses them:

1. `spans.py` (code): the answers worth asking about -- values, names, table cells -- chosen in
   each statement (`statements.py` cuts chunks into statements), plus parallel spans and bridges;
2. `pipeline.py`: waves of question writing (`question.prompt`) and code checks (`form.py`);
3. `reader.py`: the retrieval round trip (BM25 over the whole KB, then `reader.prompt`,
   compared by code);
4. `compose.py`: comparative, reasoning, ambiguous, multi-hop and unanswerable items built from
   verified single-hop items, answers computed by code;
5. `dedup.py`, `difficulty.py`: duplicates and measured difficulty over the pool.

`runner.py` is the run around them (plan, budget stop, settle, summary); `plan.py` parses the
mix; `progress.py` is the one progress display; `summary.py` renders the end-of-run table;
`commands.py` is `golden generate`. All SQL is in `builder.store.candidates`.
"""
