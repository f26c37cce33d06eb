"""Benchmark: the LLM client's own overhead against a stub endpoint that answers after 200 ms.

(a) 1,000 structured calls at concurrency 32. Ideal wall time is 1000 / 32 x 0.2 s = 6.25 s;
    the target is <= 1.15x that. Also reports golden's own CPU time per call (the stub runs in
    a separate process, so its CPU is not counted).
(b) The same job again on the same database: every call is a cache hit. Target: 0 network
    calls and wall time <= 5% of the first run.

Run by hand:  /work/venv/bin/python bench/bench_llm_stub.py [--calls 1000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import socket
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

DELAY_S = 0.2


# -- the stub endpoint (stdlib asyncio, HTTP/1.1 keep-alive) --------------------------------

async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            body = json.loads(await reader.readexactly(length)) if length else {}
            await asyncio.sleep(DELAY_S)
            content = json.dumps({"facts": [body["messages"][-1]["content"][-40:]]})
            payload = json.dumps({
                "id": "x", "object": "chat.completion", "created": 0, "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 12, "total_tokens": 62},
            }).encode()
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                         b"content-length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionResetError):
        pass
    finally:
        writer.close()


def _serve(sock: socket.socket) -> None:
    async def main():
        server = await asyncio.start_server(_handle, sock=sock, backlog=512)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


# -- the job ----------------------------------------------------------------------------------

class Facts(BaseModel):
    facts: list[str]


async def _job(llm, prompt, n: int) -> list:
    return await asyncio.gather(*(llm.structured(prompt, {"chunk": f"chunk number {i}"}, Facts)
                                  for i in range(n)))


def _run(db: Path, url: str, n: int, concurrency: int) -> tuple[float, float, dict]:
    from builder.llm.prompts import parse_prompt
    from builder.llm.settings import LLMSettings, Price
    from builder.llm.setup import open_llm
    from builder.store import Store

    prompt = parse_prompt("name: facts\nversion: 1\n--- system\nExtract facts as JSON.\n"
                          "--- user\n{{chunk}}\n", "bench.prompt")
    settings = LLMSettings(base_url=url, model="stub-model", concurrency=concurrency,
                           prices={"stub-model": Price(input_per_mtok=0.1, output_per_mtok=0.4)})
    with Store(db) as store, open_llm(store, settings, job="bench") as llm:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        results = asyncio.run(_job(llm, prompt, n))
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
        return wall, cpu, llm.summary()


def _run_sdk_only(url: str, n: int, concurrency: int) -> tuple[float, float]:
    """Reference: the same requests straight through AsyncOpenAI, no golden logic at all."""
    import httpx2
    import openai

    async def job():
        sdk = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
        sem = asyncio.Semaphore(concurrency)

        async def one(i):
            async with sem:
                body = {"model": "stub-model", "max_tokens": 1024, "temperature": 0.2,
                        "messages": [{"role": "user", "content": f"chunk number {i}"}]}
                r = await sdk.post("/chat/completions", body=body, cast_to=httpx2.Response)
                return json.loads(r.content)

        await asyncio.gather(*(one(i) for i in range(n)))

    wall0, cpu0 = time.perf_counter(), time.process_time()
    asyncio.run(job())
    return time.perf_counter() - wall0, time.process_time() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)
    port = sock.getsockname()[1]
    stub = multiprocessing.get_context("fork").Process(target=_serve, args=(sock,), daemon=True)
    stub.start()
    url = f"http://127.0.0.1:{port}/v1"
    ideal = args.calls / args.concurrency * DELAY_S
    try:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "bench.db"
            _run_sdk_only(url, 50, args.concurrency)  # warm imports for both
            ref_wall, ref_cpu = _run_sdk_only(url, args.calls, args.concurrency)
            wall1, cpu1, s1 = _run(db, url, args.calls, args.concurrency)
            wall2, cpu2, s2 = _run(db, url, args.calls, args.concurrency)
    finally:
        stub.terminate()
    print(f"(a) {args.calls} calls, concurrency {args.concurrency}, stub delay {DELAY_S * 1000:.0f} ms")
    print(f"    wall {wall1:.2f} s, ideal {ideal:.2f} s, ratio {wall1 / ideal:.3f} (target <= 1.15)")
    print(f"    reference (bare AsyncOpenAI, same run): wall {ref_wall:.2f} s, CPU "
          f"{ref_cpu / args.calls * 1000:.2f} ms per call; golden / reference wall "
          f"{wall1 / ref_wall:.3f}")
    print(f"    golden CPU {cpu1:.2f} s = {cpu1 / args.calls * 1000:.2f} ms per call; "
          f"network calls {s1['network_calls']}")
    print(f"(b) re-run: wall {wall2:.3f} s = {wall2 / wall1 * 100:.2f}% of the first run "
          f"(target <= 5%); network calls {s2['network_calls']}, cached {s2['cached']}, "
          f"CPU {cpu2 / args.calls * 1000:.2f} ms per call")


if __name__ == "__main__":
    main()
