"""API keys echoed back by a server never come out of reactloop (issue 10).

Some proxies answer errors with a body that quotes the request's ``Authorization`` header.
A real loopback server does that here, to the real SDKs of all three adapters and to the CLI,
and the key must appear nowhere: not in the result, its error (or the error's traceback),
retry events, ``RunResult.to_json()``, logs, or the CLI's stderr and ``--json`` output.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from reactloop import Agent, Event, Model, RetryPolicy, RunState

CREDENTIAL_HEADERS = ("authorization", "x-api-key", "x-goog-api-key")


class EchoServer:
    """Answers each POST with the next queued status and an error body quoting the request's
    credentials back: as JSON (the provider's error shape) or, for 5xx, as plain text."""

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.seen: list[str] = []  # credential header values received
        self.lock = threading.Lock()
        echo = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                creds = {k: v for k, v in self.headers.items() if k.lower() in CREDENTIAL_HEADERS}
                with echo.lock:
                    echo.seen.extend(creds.values())
                    status = echo.statuses.pop(0) if echo.statuses else 599
                body, kind = echo.body(status, creds)
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @staticmethod
    def body(status: int, creds: dict[str, str]) -> tuple[bytes, str]:
        # the bare value too, so only knowing the key (not its header) can redact it
        raw = " ".join(v.removeprefix("Bearer ") for v in creds.values())
        if status >= 500:
            lines = [f"upstream failed for {raw}", *(f"{k}: {v}" for k, v in creds.items())]
            return "\n".join(lines).encode(), "text/plain"
        error = {"code": status, "status": "UNAUTHENTICATED", "type": "authentication_error",
                 "message": f"invalid credentials {raw}; request headers: {creds}"}
        return json.dumps({"type": "error", "error": error}).encode(), "application/json"


@pytest.fixture(scope="module")
def echo_server() -> Iterator[EchoServer]:
    server = EchoServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        server.thread.join()


@pytest.fixture
def echo(echo_server: EchoServer) -> EchoServer:
    echo_server.statuses.clear()
    echo_server.seen.clear()
    return echo_server


def _fresh_key() -> str:
    # no provider's key shape: only registering the key itself can hide it
    return "zq" + secrets.token_hex(16)


FAST = RetryPolicy(max_retries=2, base_delay=0.0, jitter=0)


def _openai(key: str, url: str) -> Model:
    pytest.importorskip("openai")
    from reactloop.models.openai import OpenAIModel

    return OpenAIModel("gpt-4o-mini", api_key=key, base_url=f"{url}/v1", retry=FAST)


def _anthropic(key: str, url: str) -> Model:
    pytest.importorskip("anthropic")
    from reactloop.models.anthropic import AnthropicModel

    return AnthropicModel("claude-haiku-4-5", api_key=key, base_url=url, retry=FAST)


def _gemini(key: str, url: str) -> Model:
    pytest.importorskip("google.genai")
    from reactloop.models.gemini import GeminiModel

    return GeminiModel("gemini-2.5-flash", api_key=key, base_url=url, retry=FAST)


@pytest.mark.parametrize("build", [_openai, _anthropic, _gemini])
def test_echoed_key_appears_nowhere(echo: EchoServer, caplog: pytest.LogCaptureFixture,
                                    build: Callable[[str, str], Model]) -> None:
    caplog.set_level(logging.DEBUG, logger="reactloop")
    key = _fresh_key()
    echo.statuses += [500, 401]  # a retried server error, then a fatal auth error
    agent = Agent(model=build(key, echo.url))

    async def collect() -> list[Event]:
        return [e async for e in agent.stream("hi")]

    events = asyncio.run(collect())
    result = events[-1].result  # type: ignore[attr-defined]
    assert any(key in seen for seen in echo.seen)  # the key really went out and came back
    assert result.state is RunState.ERROR
    assert getattr(result.error, "status_code", None) == 401
    retries = [e for e in events if e.type == "retry"]
    assert len(retries) == 1 and "[REDACTED]" in retries[0].error  # type: ignore[attr-defined]
    assert "[REDACTED]" in str(result.error)
    assert any("provider call failed" in r.getMessage() for r in caplog.records)
    places = {
        "output": result.output,
        "error": str(result.error),
        "error repr": repr(result.error),
        "traceback": "".join(traceback.format_exception(result.error)),
        "to_json": result.to_json(),
        "events": json.dumps([e.to_dict() for e in events], default=str),
        "logs": caplog.text,
    }
    leaks = [name for name, text in places.items() if key in text]
    assert leaks == []


@pytest.mark.parametrize("as_json", [False, True])
def test_cli_never_prints_an_echoed_key(echo: EchoServer, as_json: bool) -> None:
    pytest.importorskip("openai")
    key = _fresh_key()
    echo.statuses.append(401)
    env = {**os.environ, "OPENAI_API_KEY": key}
    args = [sys.executable, "-m", "reactloop", "run", "--model", "openai:x", "--base-url",
            f"{echo.url}/v1", "--no-demo-tools", *(["--json"] if as_json else []), "hi"]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert any(key in seen for seen in echo.seen)
    assert proc.returncode == 1, proc.stderr
    assert key not in proc.stdout and key not in proc.stderr
    assert "Traceback" not in proc.stderr
    if as_json:
        data = json.loads(proc.stdout)
        assert data["state"] == "error" and "[REDACTED]" in data["error"]
    else:
        assert "HTTP 401" in proc.stderr and "[REDACTED]" in proc.stderr
