"""Running staged request files through the scripted model, as a batch engine would, and
driving a `--batch` job to its end (tests/test_llm_batch*.py, tests/test_generate_batch.py).

`run_file` plays `vllm run-batch -i FILE -o OUT` (shape "vllm": one file, input order) or the
OpenAI Batch API's download (shape "openai": shuffled output, a separate error file), both
through `StubEndpoint.run_batch` (the stub's scripted model and faults). `drive` repeats
"run the command; run the new request files; import the results" until the command stops
staging, and returns the number of passes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.stub_endpoint import StubEndpoint

_STAGED = re.compile(r"golden: (staged \d+ requests|nothing new to stage)")


def write_jsonl(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines),
                    encoding="utf-8")
    return path


def run_file(stub: StubEndpoint, request_file: Path, *, shape: str = "vllm") -> list[Path]:
    """Results of one request file, written beside it; returns the files to import."""
    lines = request_file.read_text(encoding="utf-8").splitlines()
    outputs, errors = stub.run_batch(lines, shape=shape)
    stem = request_file.name.removesuffix(".jsonl")
    written = [write_jsonl(request_file.with_name(f"{stem}.results.jsonl"), outputs)]
    if errors:
        written.append(write_jsonl(request_file.with_name(f"{stem}.errors.jsonl"), errors))
    return written


def new_request_files(batch_dir: Path, seen: set[str]) -> list[Path]:
    files = sorted(p for p in batch_dir.glob("requests-*.jsonl")
                   if not p.name.endswith((".results.jsonl", ".errors.jsonl")) and p.name not in seen)
    seen.update(p.name for p in files)
    return files


def drive(golden_cli, command: list[str], batch_dir: Path, stub: StubEndpoint, *,
          shape: str = "vllm", max_passes: int = 60) -> tuple[int, str]:
    """Run `command` (a golden command line with `--batch batch_dir`) until it stops staging;
    each time, run its new request files through the stub and import the results. Returns
    (passes, the last pass's stdout)."""
    seen: set[str] = set()
    for passes in range(1, max_passes + 1):
        code, out, err = golden_cli(*command)
        assert code == 0, err
        if not _STAGED.search(err):
            return passes, out
        files = new_request_files(batch_dir, seen)
        assert files, f"a pass staged nothing new and nothing finished: {err}"
        results = [r for f in files for r in run_file(stub, f, shape=shape)]
        code, _, err = golden_cli("--db", command[command.index("--db") + 1], "batch", "import",
                                  *map(str, results))
        assert code == 0, err
    raise AssertionError(f"still staging after {max_passes} passes")
