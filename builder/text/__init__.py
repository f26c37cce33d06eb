"""Text rules shared by ingest and generate, so both read text the same way: which language a
text is in (`language`) and how Markdown marks fences, headings and tables (`markdown`).

The lowest layer of golden after `errors`: it imports nothing else from golden, and the store,
ingest and generate may all import it.
"""
