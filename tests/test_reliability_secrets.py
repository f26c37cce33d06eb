"""The API key never leaves the SDK's Authorization header.

With OPENAI_API_KEY set to a random `sk-test-SECRET-...` (and once passed as --api-key), every
command runs against a stub OpenAI-compatible endpoint on 127.0.0.1 -- ingest, stats,
generate, the review UI (headless), export, score with the judge, compare, calibrate,
baseline-run --answer, demo -- including failing calls whose error bodies echo the key
(401, 403, 400, 500). Then the key is searched for in the bytes of every file the commands
left (database, -wal, -shm, exports, manifests, reports, run files, logs) and in everything
they printed: it must appear nowhere. The stub checks the key did reach it, so the test is not
vacuous.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from builder.cli import golden
from builder.config import load_config
from builder.errors import InputError
from builder.llm.settings import resolve_settings
from builder.store import Store
from review_tui.app import ReviewApp

KEY = f"sk-test-SECRET-{secrets.token_hex(12)}"
# The key's distinctive tail, also searched for on its own (a partial echo is a leak too).
TAIL = KEY[-16:]

# Replies by the json_schema name the client sends (= the output model's class name).
_FIXED = {
    "EvolvedQuestion": {"question": "Which rule applies overall?", "answer": "It varies."},
    "ProposedQuestions": {"questions": ["Do you offer gift wrapping?"]},
    "InventedEntityQuestion": {"name": "Tacoma", "question": "What is the address of Tacoma?"},
    "ReaderReply": {"sentence": 0, "answer": ""},
    "Rewritten": {"question": "What is the difference between Gold and Basic?"},
    "Siblings": {"names": ["Tacoma"]},
    "ClaimVerdict": {"supported": True, "reason": "ok"},
    "Score": {"score": 4, "reason": "close to the reference"},
    "RefusalVerdict": {"refusal": False, "reason": "answers"},
    "ContextVerdict": {"useful": True, "reason": "on topic"},
    "BaselineAnswer": {"answer": "Returns are accepted within 45 days."},
}


def _reply(schema: str, messages: list[dict]) -> dict:
    user = next((m["content"] for m in messages if m["role"] == "user"), "")
    passage = re.search(r"^Passage: (.+)$", user, re.M)
    if schema == "WrittenQuestions" and passage:  # one distinct question per passage
        answer = re.search(r"^Answer: (.+?) \(", user, re.M)
        words = [w for w in passage.group(1).replace(answer.group(1) if answer else "", " ").split()
                 if w.isalpha()][:4]
        return {"question": f"What is true about {' '.join(words)}?"}
    if schema == "ReaderReply":  # an honest reader: it quotes the sentence that holds every word
        sentences = re.findall(r"^\[\d+\] (?:[^:\n]*: )?(.*)$", user, re.M)
        asked = re.search(r"^Question: (.*)", user, re.M)
        words = [w for w in re.findall(r"[A-Za-z]{4,}", asked.group(1) if asked else "")
                 if w.lower() not in {"what", "true", "about", "which", "does"}]
        for i, text in enumerate(sentences, 1):
            if words and all(w in text for w in words):
                return {"sentence": i, "answer": text}
        return {"sentence": 0, "answer": ""}
    return _FIXED[schema]


class StubEndpoint:
    """POST /v1/chat/completions on 127.0.0.1. `mode` picks the reply: "ok", or an HTTP error
    whose body echoes the key it was sent ("401", "403", "400", "500")."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.auth: list[str] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                auth = self.headers.get("authorization", "")
                stub.auth.append(auth)
                sent_key = auth.removeprefix("Bearer ")
                if stub.mode != "ok":
                    status = int(stub.mode)
                    message = {401: f"Incorrect API key provided: {sent_key}",
                               403: f"Key {sent_key} may not use this model",
                               400: f"Bad request from key {sent_key}",
                               500: f"Upstream failed for {sent_key}"}[status]
                    self._send(status, {"error": {"message": message, "type": "x",
                                                  "code": "invalid_api_key", "key": sent_key}})
                    return
                schema = body["response_format"]["json_schema"]["name"]
                content = json.dumps(_reply(schema, body["messages"]))
                self._send(200, {
                    "id": "stub", "object": "chat.completion", "created": 1,
                    "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 120, "completion_tokens": 30,
                              "total_tokens": 150},
                })

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "StubEndpoint":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


KB = {
    "returns.md": "# Returns\n\nNorthwind accepts returns within 45 days of purchase.\n\n"
                  "A restocking fee of 5% applies to opened items.\n",
    "shipping.md": "# Shipping\n\nExpress shipping costs $15 and arrives in 2 days.\n\n"
                   "Standard shipping costs $6 and arrives in 5 days.\n",
    "members.md": "# Membership\n\nThe Gold membership costs $49 per year.\n\n"
                  "The Basic membership costs $19 per year.\n",
}


class Session:
    """Runs `golden` commands with the key in the environment and keeps everything printed."""

    def __init__(self, root: Path, url: str):
        self.root = root
        self.db = root / "g.db"
        self.env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": url, "GOLDEN_MODEL": "gpt-4o-mini"}
        self.printed: list[str] = []

    def run(self, *args, expect: int | tuple[int, ...] = 0):
        result = CliRunner().invoke(golden, ["--db", str(self.db), *map(str, args)],
                                    env=self.env, catch_exceptions=True)
        self.printed += [result.stdout, result.stderr]
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        codes = expect if isinstance(expect, tuple) else (expect,)
        assert result.exit_code in codes, (args, result.exit_code, result.output)
        return result


def leaks(root: Path, printed: list[str]) -> list[str]:
    found = []
    for p in sorted(root.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            if KEY.encode() in data or TAIL.encode() in data:
                found.append(str(p))
    for i, text in enumerate(printed):
        if KEY in text or TAIL in text:
            found.append(f"output #{i}: {text[:200]!r}")
    return found


async def _review(db: Path) -> None:
    app = ReviewApp(str(db), "ann")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await pilot.press("a", "a", "a")
        await app.writer.drain()


def test_the_key_appears_nowhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "golden.toml").write_text("[llm]\nmax_retries = 0\nconcurrency = 2\n")
    kb = tmp_path / "kb"
    kb.mkdir()
    for name, text in KB.items():
        (kb / name).write_text(text)
    with StubEndpoint() as stub:
        s = Session(tmp_path, stub.url)
        s.run("ingest", kb)
        s.run("stats")
        # keep a reader open so the -wal file is not checkpointed away before it is searched
        keep = sqlite3.connect(s.db)
        keep.execute("SELECT count(*) FROM chunks").fetchone()

        s.run("generate", "--n", "4", "--dry-run")
        s.run("generate", "--n", "4", "--types", "single_hop")
        with Store(s.db) as store:
            assert store.query("SELECT count(*) AS n FROM candidates")[0]["n"] >= 3
        for mode in ("400", "500"):  # failures are values: logged (scrubbed), run goes on
            stub.mode = mode
            s.run("generate", "--n", "8", "--types", "single_hop,reasoning", expect=(0, 1))
        for mode, words in (("401", "rejected the API key"), ("403", "access denied")):
            stub.mode = mode
            result = s.run("generate", "--n", "12", "--types", "single_hop,unanswerable",
                           "--seed", mode, expect=1)
            assert words in result.stderr.strip().splitlines()[-1]
        s.run("stats")  # lists the most frequent LLM errors
        stub.mode = "ok"

        asyncio.run(_review(s.db))

        s.run("export", "--out", "golden.jsonl", "--status", "accepted,pending")
        s.run("export", "--out", "split.jsonl", "--status", "accepted,pending", "--format",
              "ragas", "--split", "train=0.5,test=0.5")
        s.run("baseline-run", "--golden", "golden.jsonl", "--out", "run.jsonl", "--answer",
              "--api-key", KEY)
        s.run("score", "--golden", "golden.jsonl", "--run", "run.jsonl", "--out", "a.json",
              "--out", "a.html", "--out", "a.md")
        s.run("score", "--golden", "golden.jsonl", "--run", "run.jsonl", "--no-judge",
              "--name", "plain", "--out", "b.json")
        s.run("compare", "a.json", "b.json", "--out", "cmp.json", "--out", "cmp.md")
        qid = json.loads((tmp_path / "golden.jsonl").read_text().splitlines()[0])["id"]
        (tmp_path / "human.csv").write_text(f"query_id,metric,score\n{qid},correctness,4\n")
        with Store(s.db) as store:
            run_id = store.query("SELECT id FROM runs WHERE name != 'plain'")[0]["id"]
        s.run("calibrate", "--run", run_id, "--import", "human.csv", "--json")
        s.run("demo", "--kb", kb, "--n", "3")

        # the judge and the answerer against a failing endpoint (another model: no cache hits)
        stub.mode = "500"
        s.run("score", "--golden", "golden.jsonl", "--run", "run.jsonl", "--name", "fail500",
              "--out", "fail500.json", "--model", "gpt-4o")
        s.run("baseline-run", "--golden", "golden.jsonl", "--out", "fail500.jsonl", "--answer",
              "--model", "gpt-4o")
        stub.mode = "401"
        for args in (["score", "--golden", "golden.jsonl", "--run", "run.jsonl", "--name",
                      "fail401", "--model", "gpt-4o-2024-08-06"],
                     ["baseline-run", "--golden", "golden.jsonl", "--out", "fail401.jsonl",
                      "--answer", "--model", "gpt-4o-2024-08-06"]):
            result = s.run(*args, expect=1)
            assert "rejected the API key (HTTP 401)" in result.stderr.splitlines()[-1]
        assert not (tmp_path / "fail401.jsonl").exists()  # no run with every answer missing
        result = s.run("baseline-run", "--golden", "golden.jsonl", "--out", "x.jsonl",
                       "--answer", "--api-key", KEY, "--base-url", "http://127.0.0.1:9/v1",
                       "--timeout", "1", "--model", "gpt-4o-mini-2024-07-18", expect=1)
        assert "cannot reach the LLM endpoint" in result.stderr
        stub.mode = "ok"

        assert stub.auth and set(stub.auth) == {f"Bearer {KEY}"}  # the key was really used
        with Store(s.db) as store:
            errors = [r["error"] for r in store.query(
                "SELECT error FROM llm_calls WHERE error IS NOT NULL")]
        assert any("[redacted]" in e for e in errors), errors  # echoed keys were scrubbed
        wal = Path(f"{s.db}-wal")
        assert wal.exists() and wal.stat().st_size > 0
        assert leaks(tmp_path, s.printed) == []
        keep.close()
    assert leaks(tmp_path, s.printed) == []


def test_settings_and_errors_never_show_the_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = resolve_settings({"api_key": None}, {"OPENAI_API_KEY": KEY}, load_config())
    assert settings.api_key.get_secret_value() == KEY
    for text in (repr(settings), str(settings), settings.model_dump_json(),
                 json.dumps(settings.model_dump(mode="json")), repr(settings.model_dump())):
        assert KEY not in text and TAIL not in text
    # a key in golden.toml is refused without being echoed
    (tmp_path / "golden.toml").write_text(f'[llm]\nmodel = "m"\napi_key = "{KEY}"\n')
    with pytest.raises(InputError) as info:
        resolve_settings({}, {}, load_config())
    assert KEY not in str(info.value) and "golden.toml:3" in str(info.value)
    # ... also when it is misplaced under a table that does not allow it
    (tmp_path / "golden.toml").write_text(f'[llm.roles.judge]\napi_key = "{KEY}"\n')
    with pytest.raises(InputError) as info:
        resolve_settings({}, {}, load_config())
    assert KEY not in str(info.value)
    # and a bad option value next to --api-key does not print the key
    result = CliRunner().invoke(golden, ["--db", str(tmp_path / "g.db"), "generate",
                                         "--api-key", KEY, "--temperature", "hot"])
    assert result.exit_code == 2 and KEY not in result.output
