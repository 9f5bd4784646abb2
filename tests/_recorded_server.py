"""A loopback HTTP server that replays recorded provider payloads and captures requests.

Used by the Anthropic and Gemini adapter tests: the real SDK talks HTTP to 127.0.0.1 and
parses the recorded bytes, so the whole wire path is exercised without the internet.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PAYLOADS = Path(__file__).with_name("payloads")


@dataclass
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Captured:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def payload(provider: str, name: str, status: int = 200, **headers: str) -> Reply:
    """A recorded payload file as a reply (``.sse`` files are served as event streams)."""
    path = PAYLOADS / provider / name
    kind = "text/event-stream" if path.suffix == ".sse" else "application/json"
    return Reply(status, path.read_bytes(), kind, dict(headers))


class RecordedServer:
    """Serves queued replies in order; records every request in :attr:`requests`."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Captured] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode(errors="replace")
                with server._lock:
                    server.requests.append(Captured(
                        "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
                    ))
                    reply = server.replies.pop(0) if server.replies else Reply(
                        599, b'{"error": "no recorded reply left"}'
                    )
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(reply.body)))
                for key, value in reply.headers.items():
                    self.send_header(key.replace("_", "-"), value)
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


@contextmanager
def recorded_server() -> Iterator[RecordedServer]:
    server = RecordedServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
