"""The client-side options every :class:`~reactloop.mcp.MCPServer` factory takes (sampling,
elicitation, roots, resources, OAuth), checked in one place."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

from reactloop.errors import UserError
from reactloop.mcp._elicitation import Elicitor
from reactloop.mcp._oauth import OAuth, oauth_option

__all__ = ["ClientOptions", "check_options"]

SAMPLING_POLICIES = ("allow", "ask", "deny")


class ClientOptions(TypedDict, total=False):
    """What reactloop does when the server asks something of the client."""

    sampling: Literal["allow", "ask", "deny"] | None
    """Answer the server's ``sampling/createMessage`` requests with a model: ``"allow"``,
    ``"ask"`` (the elicitation handler asks the user first) or ``"deny"``. Default: allow for
    stdio servers, ask for remote ones (:mod:`reactloop.mcp._sampling` argues why)."""
    sampling_model: Any
    """The model that answers (a ``Model`` or a name such as ``"openai:gpt-4o-mini"``);
    default: the model of the run whose tool call is open."""
    elicitation: Elicitor | None
    """``handler(Elicitation) -> ElicitationAnswer`` (sync or async) for the server's questions
    to the user; None: the capability is not announced."""
    roots: Sequence[str | os.PathLike[str]]
    """Directories offered as the client's roots (``roots/list``); the CLI offers the
    workspace."""
    resources: bool
    """Offer the model ``<prefix>list_resources`` and ``<prefix>read_resource`` when the
    server has resources (default True)."""
    oauth: bool | OAuth | Mapping[str, Any] | None
    """HTTP servers: sign in with OAuth through the SDK's client auth (``True``, or settings
    ``scope``, ``callback_port``, ``client_name``, ``storage``: :class:`reactloop.mcp._oauth.
    OAuth`). Log in first with ``reactloop mcp login`` or ``await server.login()``; runs use
    and refresh the stored tokens."""


def check_options(name: str, options: ClientOptions, transport: str = "http"
                  ) -> dict[str, Any]:
    """The options, checked; a :class:`UserError` names the server and the option."""
    unknown = set(options) - set(ClientOptions.__annotations__)
    if unknown:
        raise UserError(f"MCP server {name!r}: unknown option(s) {', '.join(sorted(unknown))}")
    sampling = options.get("sampling")
    if sampling is not None and sampling not in SAMPLING_POLICIES:
        raise UserError(f"MCP server {name!r}: sampling must be 'allow', 'ask' or 'deny', "
                        f"got {sampling!r}")
    elicitation = options.get("elicitation")
    if elicitation is not None and not callable(elicitation):
        raise UserError(f"MCP server {name!r}: elicitation must be a function "
                        f"(request) -> ElicitationAnswer, got {elicitation!r}")
    roots = options.get("roots", ())
    if isinstance(roots, (str, os.PathLike)) or not isinstance(roots, Sequence):
        raise UserError(f"MCP server {name!r}: roots must be a list of directories, "
                        f"got {roots!r}")
    resources = options.get("resources", True)
    if not isinstance(resources, bool):
        raise UserError(f"MCP server {name!r}: resources must be true or false, "
                        f"got {resources!r}")
    oauth = oauth_option(name, options.get("oauth"))
    if oauth is not None and transport == "stdio":
        raise UserError(f"MCP server {name!r}: oauth is for HTTP servers (MCPServer.http or "
                        ".sse); a stdio server gets its credentials from env")
    return {"sampling": sampling, "sampling_model": options.get("sampling_model"),
            "elicitation": elicitation, "roots": tuple(os.fspath(r) for r in roots),
            "resources": resources, "oauth": oauth}
