"""Benchmark: the Ray Data example (examples/ray_batch.py, HTTP processor) against golden's
embedded llama.cpp server, on requests golden staged; the reference, in the same run, is the
same request bodies POSTed one after another by plain httpx to the same server.

Ray Data is not a golden dependency: give the interpreter of an environment that has it
(`pip install "ray[data]" aiohttp pydantic`) with --ray-python. Starts the real local model:
run it under the model lock.

    flock /work/notes/model.lock python bench/bench_batch_ray.py --ray-python /path/to/ray/python

Steps: ingest samples/handbook; `golden generate --n N --batch DIR` stages the first step's
requests; the embedded server starts; the reference sends every body and times it; the Ray
example runs the request file through `HttpRequestProcessorConfig` and writes results;
`golden batch import` stores them (read as the live client reads replies); the next pass
stages the next step from them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def golden(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "builder.cli", *args], capture_output=True,
                          text=True, cwd=ROOT)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ray-python", required=True, help="python of an environment with ray[data]")
    ap.add_argument("--n", type=int, default=6)
    ap.add_argument("--local-model", default="qwen-0.5b")
    a = ap.parse_args()

    import httpx2

    from builder.llm.local_models import ensure_model, resolve_local_model
    from builder.llm.local_server import LocalServer

    tmp = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    db, jobs = tmp / "g.db", tmp / "jobs"
    res = golden("--db", str(db), "ingest", str(ROOT / "samples" / "handbook"))
    assert res.returncode == 0, res.stderr
    spec = resolve_local_model(a.local_model)
    server = LocalServer(ensure_model(spec, progress=print), alias=spec.record_name,
                         progress=lambda m: None, n_ctx=spec.n_ctx)
    url = server.start()
    try:
        stage = ["--db", str(db), "generate", "--n", str(a.n), "--base-url", url,
                 "--model", spec.record_name, "--batch", str(jobs)]
        res = golden(*stage)
        assert res.returncode == 0 and "staged" in res.stderr, res.stderr
        [requests] = sorted(jobs.glob("requests-r001-*.jsonl"))
        bodies = [json.loads(x)["body"] for x in requests.read_text().splitlines()]
        print(f"staged {len(bodies)} requests ({requests.name}) for {spec.record_name}")

        started = time.perf_counter()
        with httpx2.Client(timeout=600) as http:
            for body in bodies:
                http.post(f"{url}/chat/completions", json=body).raise_for_status()
        reference = time.perf_counter() - started
        print(f"reference: httpx, one request at a time: {reference:.1f} s "
              f"({reference / len(bodies):.1f} s per request)")

        started = time.perf_counter()
        ray = subprocess.run([a.ray_python, str(ROOT / "examples" / "ray_batch.py"), str(requests),
                              "--engine", "http", "--url", f"{url}/chat/completions",
                              "--batch-size", "4"], capture_output=True, text=True)
        wall = time.perf_counter() - started
        assert ray.returncode == 0, ray.stderr[-3000:]
        results = requests.with_name(requests.name.removesuffix(".jsonl") + ".results.jsonl")
        lines = results.read_text().splitlines()
        print(f"ray_batch.py (HttpRequestProcessorConfig): {len(lines)} result lines in "
              f"{wall:.1f} s including Ray start-up = {wall / reference:.2f}x the reference")
        res = golden("--db", str(db), "batch", "import", str(results))
        assert res.returncode == 0, res.stderr
        print("import: " + res.stderr.splitlines()[0].removeprefix("golden: "))
        res = golden(*stage)
        print("next pass: " + res.stderr.strip().splitlines()[-1].removeprefix("golden: ")[:200])
    finally:
        server.stop()


if __name__ == "__main__":
    main()
