"""Run golden's staged requests on a Ray cluster with Ray Data LLM, and write the results in
the OpenAI Batch API output format that `golden batch import` reads.

    golden generate --n 5000 --model Qwen/Qwen2.5-7B-Instruct --batch jobs/
    python examples/ray_batch.py jobs/requests-r001-Qwen_Qwen2.5-7B-Instruct-1.jsonl \\
        --engine http --url http://vllm-host:8000/v1/chat/completions
    golden batch import jobs/ && golden generate --n 5000 --model ... --batch jobs/

It needs Ray Data with its LLM module on the machine that runs it (not golden itself):
`pip install "ray[data]" aiohttp pydantic` for the HTTP engine, `pip install "ray[llm]"` (which
brings vLLM) for the vLLM engine. Two engines, both through `ray.data.llm.build_processor`:

- `--engine http` (`HttpRequestProcessorConfig`): each request's `body` is POSTed as it is
  to `--url`, any OpenAI-compatible server (vLLM, llama.cpp, SGLang, OpenAI itself); the
  `Authorization` header comes from $OPENAI_API_KEY when set. Ray retries 429/408/5xx-gateway
  answers `--retries` times; a request still failing after that stops the Ray job (rerun it:
  golden only imports what the results file holds). Other error answers become error lines
  that golden stages again.
- `--engine vllm` (`vLLMEngineProcessorConfig`): vLLM runs inside the Ray workers on their
  GPUs (`--model-source`, `--tp`). The chat template is applied from the request's messages;
  the request's JSON schema becomes vLLM's structured output; a reply that used all of
  `max_tokens` is reported as cut off (finish_reason "length"), as the server would.

Every line of the request file gets exactly one result line, `custom_id` kept, so golden joins
them whatever order Ray finishes them in. The results file is written to a temporary name and
renamed when complete.
"""

from __future__ import annotations

import argparse
import json
import os
import uuid
from pathlib import Path


def _http_processor(args):
    from ray.data.llm import HttpRequestProcessorConfig, build_processor

    headers = {}
    if os.environ.get("OPENAI_API_KEY"):
        headers["Authorization"] = f"Bearer {os.environ['OPENAI_API_KEY']}"
    config = HttpRequestProcessorConfig(url=args.url, headers=headers,
                                        concurrency=args.concurrency, batch_size=args.batch_size,
                                        max_retries=args.retries, qps=args.qps)

    def preprocess(row: dict) -> dict:
        request = json.loads(row["text"])
        return {"custom_id": request["custom_id"], "payload": request["body"]}

    def postprocess(row: dict) -> dict:
        reply = row["http_response"]
        if isinstance(reply, dict) and "choices" in reply:
            line = {"response": {"status_code": 200, "request_id": reply.get("id"), "body": reply},
                    "error": None}
        else:  # an error answer (its HTTP status is not passed on by Ray)
            error = reply.get("error") if isinstance(reply, dict) else None
            line = {"response": None, "error": error or {"message": json.dumps(reply)[:500]}}
        return {"line": json.dumps({"id": f"ray-{uuid.uuid4().hex}", "custom_id": row["custom_id"],
                                    **line}, ensure_ascii=False)}

    return build_processor(config, preprocess=preprocess, postprocess=postprocess)


def _vllm_processor(args):
    from ray.data.llm import vLLMEngineProcessorConfig, build_processor

    config = vLLMEngineProcessorConfig(
        model_source=args.model_source, concurrency=args.concurrency, batch_size=args.batch_size,
        engine_kwargs={"tensor_parallel_size": args.tp, "max_model_len": args.max_model_len},
        apply_chat_template=True, tokenize=True, detokenize=True)

    def preprocess(row: dict) -> dict:
        request = json.loads(row["text"])
        body = request["body"]
        sampling = {"temperature": body.get("temperature", 1.0),
                    "max_tokens": body.get("max_tokens", 1024)}
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            sampling["structured_outputs"] = {"json": fmt["json_schema"]["schema"]}
        elif fmt.get("type") == "json_object":
            sampling["structured_outputs"] = {"json_object": True}
        return {"custom_id": request["custom_id"], "messages": body["messages"],
                "sampling_params": sampling, "model": body.get("model")}

    def postprocess(row: dict) -> dict:
        limit = row["sampling_params"]["max_tokens"]
        used = int(row.get("num_generated_tokens") or 0)
        body = {"id": f"ray-{uuid.uuid4().hex}", "object": "chat.completion",
                "model": row.get("model"),
                "choices": [{"index": 0, "finish_reason": "length" if used >= limit else "stop",
                             "message": {"role": "assistant", "content": row["generated_text"]}}],
                "usage": {"prompt_tokens": int(row.get("num_input_tokens") or 0),
                          "completion_tokens": used}}
        return {"line": json.dumps({"id": body["id"], "custom_id": row["custom_id"],
                                    "response": {"status_code": 200, "request_id": body["id"],
                                                 "body": body}, "error": None},
                                   ensure_ascii=False)}

    return build_processor(config, preprocess=preprocess, postprocess=postprocess)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("requests", type=Path, help="a request file golden staged (requests-*.jsonl)")
    ap.add_argument("--out", type=Path, default=None,
                    help="results file [REQUESTS with .results.jsonl]")
    ap.add_argument("--engine", choices=["http", "vllm"], default="http")
    ap.add_argument("--url", help="http: the server's chat completions URL")
    ap.add_argument("--model-source", help="vllm: the model to load (must be what the "
                                           "requests name)")
    ap.add_argument("--tp", type=int, default=1, help="vllm: tensor parallel size")
    ap.add_argument("--max-model-len", type=int, default=8192)
    ap.add_argument("--concurrency", type=int, default=1, help="workers (http) or engine replicas")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--retries", type=int, default=3, help="http: retries of 429/408/502-504")
    ap.add_argument("--qps", type=int, default=None, help="http: requests per second cap")
    args = ap.parse_args()
    if args.engine == "http" and not args.url:
        ap.error("--engine http needs --url")
    if args.engine == "vllm" and not args.model_source:
        ap.error("--engine vllm needs --model-source")

    import ray

    out = args.out or args.requests.with_name(args.requests.name.removesuffix(".jsonl")
                                              + ".results.jsonl")
    processor = _http_processor(args) if args.engine == "http" else _vllm_processor(args)
    dataset = processor(ray.data.read_text(str(args.requests.resolve())))
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    written = 0
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            for row in dataset.iter_rows():
                handle.write(row["line"] + "\n")
                written += 1
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    print(f"{written} results in {out}; next: golden batch import {out}")


if __name__ == "__main__":
    main()
