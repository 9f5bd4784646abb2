"""What the MCP modules share without importing each other: the error and the view of a
server's configuration that a connection reads."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from reactloop.errors import ReactloopError, UserError

if TYPE_CHECKING:
    from reactloop.mcp._elicitation import Elicitor

__all__ = ["INSTALL_HINT", "MCPServerError", "ServerConfig", "require_sdk"]

INSTALL_HINT = "pip install 'reactloop[mcp]'"


class MCPServerError(ReactloopError):
    """An MCP server failed to start or to complete the MCP handshake.

    The message names the server and, for stdio servers, ends with the tail of its stderr.
    """

    def __init__(
        self, message: str, *, server: str, reason: str = "", stderr_tail: str = ""
    ) -> None:
        super().__init__(message)
        self.server = server
        self.reason = reason or message
        """Why, without the server's name and stderr."""
        self.stderr_tail = stderr_tail


def require_sdk() -> None:
    """Raise :class:`UserError` unless the ``mcp`` SDK (version 2 or later) is importable."""
    if importlib.util.find_spec("mcp") is None:
        raise UserError(f"MCP servers need the official MCP SDK: {INSTALL_HINT}")
    try:  # the version from the package metadata: importing mcp here would cost ~0.5 s
        major = int(importlib.metadata.version("mcp").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return
    if major < 2:
        raise UserError(f"MCP servers need version 2 or later of the MCP SDK: {INSTALL_HINT} -U")


class ServerConfig(Protocol):
    """What a connection needs from an :class:`~reactloop.mcp.MCPServer` (a protocol, so the
    connection module does not import the server module that imports it)."""

    @property
    def transport(self) -> Literal["stdio", "http", "sse"]: ...
    @property
    def name(self) -> str: ...
    @property
    def command(self) -> str: ...
    @property
    def args(self) -> Sequence[str]: ...
    @property
    def env(self) -> dict[str, str] | None: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def url(self) -> str: ...
    @property
    def headers(self) -> dict[str, str] | None: ...
    @property
    def timeout(self) -> float: ...
    @property
    def startup_timeout(self) -> float: ...
    @property
    def sampling(self) -> Literal["allow", "ask", "deny"] | None: ...
    @property
    def sampling_model(self) -> Any: ...
    @property
    def elicitation(self) -> Elicitor | None: ...
    @property
    def roots(self) -> Sequence[str]: ...

    def describe(self) -> str: ...
