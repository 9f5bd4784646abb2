"""Running the app with uvicorn (the HTTP server process of ``reactloop serve``), and saying
where it listens once it does."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

import uvicorn

if TYPE_CHECKING:
    from starlette.types import ASGIApp

__all__ = ["run_server", "url_of"]


def url_of(host: str, port: int) -> str:
    """``http://host:port/`` (IPv6 addresses in brackets)."""
    host = host.strip("[]")
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_ready: Callable[[str], None] | None) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self._on_ready is not None:
            port = self.config.port
            for server in self.servers:  # the real port when 0 asked the system for one
                for sock in server.sockets:
                    port = sock.getsockname()[1]
            self._on_ready(url_of(self.config.host, port))


def run_server(app: ASGIApp, host: str, port: int, *,
               on_ready: Callable[[str], None] | None = None) -> None:
    """Serve ``app`` on ``host:port`` until interrupted (Ctrl-C, SIGTERM)."""
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False,
        proxy_headers=False,  # never trust X-Forwarded-* from whoever connects
        server_header=False, timeout_graceful_shutdown=3, lifespan="on")
    _Server(config, on_ready).run()
