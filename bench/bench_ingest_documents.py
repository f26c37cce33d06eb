"""PDF and DOCX ingest against the same text as Markdown, in the same run: pages/s and peak RSS.

Builds, in a temporary folder:
- a 200-page PDF: the LibreOffice-exported handbook in tests/fixtures/documents (5 pages, with
  outline, running header and footer, subset fonts) repeated 40 times with PDFium;
- a 200-page DOCX: the python-docx handbook of tests/document_fixtures.py (one page of text,
  lists and a table every third page, with a page break after each);
- the reference for each: the same text as Markdown (the PDF's extracted text; the DOCX
  handbook's own Markdown), one file each.
Then `--runs` times (default 3), interleaved so a load change on a shared machine hits all
alike, ingests each file into a fresh database in a fresh process (read, parse, chunk, count,
write, FTS index) and records wall time and that process's peak RSS. Prints medians: pages/s
for each format, the ratio to its Markdown reference (the cost of parsing the format), and
peak RSS next to the reference's. Needs the `documents` extra.
Run by hand:  python bench/bench_ingest_documents.py [--pages 200] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one(path: str, db: str) -> dict:
    """In a fresh process: ingest one file, report seconds and peak RSS (MB)."""
    sys.path.insert(0, str(ROOT))
    from builder.ingest.pipeline import ingest_paths
    from builder.ingest.tokens import encoding
    from builder.store import Store

    encoding()  # loaded before timing, as the Markdown reference does too
    t0 = time.perf_counter()
    with Store(db) as store:
        report = ingest_paths(store, [path])
    seconds = time.perf_counter() - t0
    with Store(db) as store:
        chunks = store.query("SELECT COUNT(*) AS n FROM chunks")[0]["n"]
    return {"seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            / 1024, "documents": report.documents_added, "chunks": chunks}


def build(folder: Path, pages: int) -> dict[str, Path]:
    sys.path.insert(0, str(ROOT))
    import pypdfium2 as pdfium

    from builder.ingest.pdf_text import pdf_to_text
    from tests.document_fixtures import FIXTURES, handbook, to_markdown, write_docx

    source = pdfium.PdfDocument((FIXTURES / "handbook.pdf").read_bytes())
    pdf = pdfium.PdfDocument.new()
    while len(pdf) < pages:
        pdf.import_pages(source, list(range(min(len(source), pages - len(pdf)))))
    files = {"pdf": folder / "handbook.pdf", "pdf-as-md": folder / "handbook-pdf.md",
             "docx": folder / "handbook.docx", "docx-as-md": folder / "handbook-docx.md"}
    pdf.save(str(files["pdf"]))
    files["pdf-as-md"].write_text(pdf_to_text(files["pdf"].read_bytes(), "x").text + "\n",
                                  encoding="utf-8")
    blocks = handbook(pages=pages)
    write_docx(files["docx"], blocks)
    files["docx-as-md"].write_text(to_markdown(blocks), encoding="utf-8")
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--one", nargs=2, metavar=("FILE", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = build(folder, args.pages)
        results: dict[str, list[dict]] = {name: [] for name in files}
        for run in range(args.runs):
            for name, path in files.items():
                db = folder / f"{name}-{run}.db"
                out = subprocess.run([sys.executable, __file__, "--one", str(path), str(db)],
                                     check=True, capture_output=True, text=True)
                results[name].append(json.loads(out.stdout))
        print(f"ingest of {args.pages} pages, median of {args.runs} runs, each in a fresh "
              f"process (reference: the same text as Markdown, same run)")
        print(f"{'input':<12} {'MB':>6} {'chunks':>7} {'seconds':>8} {'pages/s':>8} "
              f"{'peak RSS MB':>12}")
        median: dict[str, dict] = {}
        for name, runs in results.items():
            seconds = statistics.median(r["seconds"] for r in runs)
            rss = statistics.median(r["rss_mb"] for r in runs)
            median[name] = {"seconds": seconds, "rss": rss}
            size = files[name].stat().st_size / 1e6
            print(f"{name:<12} {size:>6.2f} {runs[0]['chunks']:>7} {seconds:>8.2f} "
                  f"{args.pages / seconds:>8.1f} {rss:>12.0f}")
        for fmt in ("pdf", "docx"):
            ref = median[f"{fmt}-as-md"]
            got = median[fmt]
            print(f"{fmt}: {ref['seconds'] / got['seconds']:.2f}x the pages/s of the same text "
                  f"as Markdown; peak RSS {got['rss'] / ref['rss']:.2f}x")


if __name__ == "__main__":
    main()
