"""Prompt templates, one `<stage>.prompt` file per stage; shipped as `builder.prompts`.

See builder/llm/prompts.py for the file format. This file only makes the folder importable so
`importlib.resources` finds the templates inside an installed wheel.
"""
