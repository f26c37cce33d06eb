"""Ingest: knowledge-base files -> documents and chunks in the store.

`discover` finds the files, `loaders` reads and checks them (`html_text` for HTML pages),
`blocks` splits Markdown/text into blocks, `chunker` packs blocks into token-bounded chunks
(`tokens` counts with the shipped o200k_base encoding), `language` tags each chunk, and
`pipeline.ingest_paths` ties them together and writes through `builder.store.documents`.
`commands` holds the `golden ingest` and `golden stats` commands.
"""
