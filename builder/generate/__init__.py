"""Generation pipeline: facts -> questions -> evolutions -> verification -> dedup -> difficulty.

Entry points: `builder.generate.runner.run_generate(store, llm, options) -> GenerateSummary`
(and `arun_generate` inside an event loop), `builder.generate.summary.render_summary(summary,
console)`, and the `golden generate` command in `commands.py`. One module per stage; all SQL is
in `builder.store.candidates`; prompts are `prompts/{facts,questions,evolve_*,verify_*}.prompt`.
"""
