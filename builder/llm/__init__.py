"""LLM layer: one client over the openai SDK, structured outputs, cache/log, cost, local server."""
