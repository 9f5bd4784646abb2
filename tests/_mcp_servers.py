"""The real MCP servers of the client-feature tests: the reference server
(``@modelcontextprotocol/server-everything``, from tests/mcp_npm, installed by ``npm ci``)
and tests/mcp_features_server.py (FastMCP), over stdio, SSE and streamable HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from conftest import free_port, require
from reactloop.mcp import MCPServer

NPM_DIR = Path(__file__).resolve().parent / "mcp_npm"
EVERYTHING = NPM_DIR / "node_modules" / ".bin" / "mcp-server-everything"
INSPECTOR = NPM_DIR / "node_modules" / ".bin" / "mcp-inspector-cli"
FEATURES = str(Path(__file__).with_name("mcp_features_server.py"))
NPM_HINT = "the npm test servers: cd tests/mcp_npm && npm ci (scripts/test_setup.py does it)"


def everything(**options: Any) -> MCPServer:
    """The reference server over stdio."""
    require(EVERYTHING.exists(), NPM_HINT)
    return MCPServer.stdio(str(EVERYTHING), ["stdio"], name="everything", **options)


def features(**options: Any) -> MCPServer:
    """tests/mcp_features_server.py over stdio."""
    return MCPServer.stdio(sys.executable, [FEATURES], name="features", **options)


def wait_listening(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"{what} did not start on port {port}") from None
            time.sleep(0.05)  # polling for a condition, not waiting a fixed time


@contextmanager
def served(command: list[str], env: dict[str, str] | None = None,
           port: int | None = None) -> Iterator[int]:
    """Run an HTTP MCP server (``{port}`` in ``command`` is replaced); yield its port."""
    port = port or free_port()
    args = [a.replace("{port}", str(port)) for a in command]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, proc, " ".join(args))
        yield port
    finally:
        proc.kill()
        proc.wait()


class Events:
    """An ``emit`` that records custom events."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any]] = []

    def __call__(self, name: str, data: Any = None) -> None:
        self.items.append((name, data))

    def named(self, name: str) -> list[Any]:
        return [d for n, d in self.items if n == name]
