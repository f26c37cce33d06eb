"""Generation pipeline, one module per stage, in the order they run:

1. `plan.py`: mix control (type targets, difficulty steering, which chunks, per-document cap);
2. `facts.py` (LLM) or `statements.py` (code): atomic facts with verbatim evidence spans;
3. `questions.py`: single-hop questions, one fact per call;
4. `evolve.py` (+ `material.py`, which picks what each evolved question is about) and
   `unanswerable.py`: the harder kinds;
5. `verify.py`: the code checks of `checks.py` (with the whole-KB absence check of
   `absence.py`), then the LLM verifier;
6. `dedup.py`: exact and near duplicates over the whole pool;
7. `difficulty.py`: easy / medium / hard from measured signals.

`runner.py` orders them (`run_generate(store, llm, options) -> GenerateSummary`, and
`arun_generate` inside an event loop); `summary.py` renders the summary; `commands.py` is
`golden generate`. All SQL is in `builder.store.candidates`; prompts are
`prompts/{facts,questions,evolve_*,verify_*}.prompt`.
"""
