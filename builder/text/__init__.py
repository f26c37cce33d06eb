"""Text rules shared by every area, so all of golden reads text the same way, one module per
concern:

- `language`: which language a text is in; `lexicon`: the words golden knows per language;
- `sentences`: where a sentence ends; `markdown`: Markdown's blocks, list items, headings and
  inline markup; `values`: amounts, percentages, durations, dates and counts in text;
- `locate`: a quoted span inside a chunk; `bm25`: ranking texts for a query;
- `terminal`: untrusted text made safe to print;
- `input_files`, `jsonl`: opening and parsing the files a user hands golden.

The lowest layer of golden above `errors`: it imports nothing else from golden (an
import-linter contract keeps it so), and every other area may import it.
"""
