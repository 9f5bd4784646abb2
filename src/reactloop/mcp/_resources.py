"""MCP resources and prompts: read by the model (two tools per server), attached by the user
(``--mcp-resource``, ``/resource``), and prompts as messages (``/prompt``, Python).

A server that announces resources gets two more tools, named like its own
(``<prefix>list_resources`` and ``<prefix>read_resource``), unless it already has tools of
those names or ``resources=False`` is given (``"resources": false`` in the config file).
From Python, the value of ``server.open()`` has :meth:`MCPTools.list_resources`,
``read_resource``, ``list_prompts`` and ``get_prompt``.

Imported only with the SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types

from reactloop.errors import ToolRetry
from reactloop.mcp._results import describe_block

if TYPE_CHECKING:
    from reactloop.mcp._connection import Link
    from reactloop.messages import Message
    from reactloop.tools._tool import Tool

__all__ = ["PromptInfo", "ResourceInfo", "get_prompt", "list_prompts", "list_resources",
           "read_resource", "resource_tools", "subscribe_resource"]

_PAGES = 100  # a server whose cursor never ends cannot hang us


@dataclass(frozen=True)
class ResourceInfo:
    """A resource (``uri``) or a resource template (``uri`` is then the template)."""

    uri: str
    name: str
    description: str = ""
    mime_type: str | None = None
    template: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri, "name": self.name}
        if self.description:
            out["description"] = self.description
        if self.mime_type:
            out["mime_type"] = self.mime_type
        if self.template:
            out["template"] = True
        return out


@dataclass(frozen=True)
class PromptInfo:
    """A prompt a server offers: its name, description and arguments
    (``(name, description, required)``)."""

    name: str
    description: str = ""
    arguments: tuple[tuple[str, str, bool], ...] = ()


async def list_resources(link: Link) -> list[ResourceInfo]:
    """The server's resources, then its resource templates (empty when it has none)."""
    client = await link.client()
    if client.server_capabilities.resources is None:
        return []
    out: list[ResourceInfo] = []
    cursor: str | None = None
    for _ in range(_PAGES):
        page = await client.list_resources(cursor=cursor)
        out.extend(ResourceInfo(r.uri, r.name, r.description or "", r.mime_type)
                   for r in page.resources)
        if not (cursor := page.next_cursor):
            break
    for _ in range(_PAGES):
        tpage = await client.list_resource_templates(cursor=cursor)
        out.extend(ResourceInfo(t.uri_template, t.name, t.description or "", t.mime_type, True)
                   for t in tpage.resource_templates)
        if not (cursor := tpage.next_cursor):
            break
    return out


async def read_resource(link: Link, uri: str) -> str:
    """The resource's content as text (binary parts as short placeholders).

    Raises:
        ToolRetry: the server refused (an unknown URI…), with its message.
    """
    from mcp.shared.exceptions import MCPError

    client = await link.client()
    try:
        result = await client.read_resource(uri)
    except MCPError as exc:
        raise ToolRetry(f"MCP server {link.server.name!r} cannot read {uri!r}: {exc.message}"
                        ) from None
    parts = []
    for c in result.contents:
        if isinstance(c, types.TextResourceContents):
            parts.append(c.text)
        else:
            parts.append(describe_block(types.EmbeddedResource(type="resource", resource=c)))
    return "\n".join(parts)


async def subscribe_resource(link: Link, uri: str) -> None:
    """Hear about changes of ``uri``: each is a ``mcp_resource_updated`` event (``server``,
    ``uri``) until the server is closed.

    Raises:
        ToolRetry: the server does not offer subscriptions, or refused this one.
    """
    import warnings

    from mcp.shared.exceptions import MCPError
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    client = await link.client()
    caps = client.server_capabilities.resources
    if caps is None or not caps.subscribe:
        raise ToolRetry(f"MCP server {link.server.name!r} offers no resource subscriptions")
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:  # a subscriptions/listen stream
        await link.side.listen_resource(client, uri)
        return
    try:
        with warnings.catch_warnings():  # deprecated in 2026-07-28, the way of older servers
            warnings.simplefilter("ignore")
            await client.subscribe_resource(uri)
    except MCPError as exc:
        raise ToolRetry(f"MCP server {link.server.name!r} cannot subscribe to {uri!r}: "
                        f"{exc.message}") from None


async def list_prompts(link: Link) -> list[PromptInfo]:
    client = await link.client()
    if client.server_capabilities.prompts is None:
        return []
    out: list[PromptInfo] = []
    cursor: str | None = None
    for _ in range(_PAGES):
        page = await client.list_prompts(cursor=cursor)
        out.extend(PromptInfo(p.name, p.description or "", tuple(
            (a.name, a.description or "", bool(a.required)) for a in p.arguments or ()))
            for p in page.prompts)
        if not (cursor := page.next_cursor):
            break
    return out


async def get_prompt(link: Link, name: str, arguments: Mapping[str, str] | None = None
                     ) -> list[Message]:
    """The prompt's messages (user and assistant), ready to send or to start a history.

    Raises:
        ToolRetry: the server refused (unknown prompt, missing argument), with its message.
    """
    from mcp.shared.exceptions import MCPError

    from reactloop.messages import Message

    client = await link.client()
    try:
        result = await client.get_prompt(name, {k: str(v) for k, v in (arguments or {}).items()})
    except MCPError as exc:
        raise ToolRetry(f"MCP server {link.server.name!r}: prompt {name!r}: {exc.message}"
                        ) from None
    return [Message.user(describe_block(m.content)) if m.role == "user"
            else Message.assistant(describe_block(m.content)) for m in result.messages]


def resource_tools(link: Link, prefix: str, taken: set[str]) -> list[Tool]:
    """``<prefix>list_resources`` and ``<prefix>read_resource`` for the model."""
    from reactloop.tools._tool import Tool

    server = link.server.name

    async def listing() -> list[dict[str, Any]]:
        return [r.to_dict() for r in await list_resources(link)]

    async def reading(uri: str) -> str:
        return await read_resource(link, uri)

    specs: list[tuple[Callable[..., Any], str, str, dict[str, Any]]] = [
        (listing, "list_resources", f"List the resources (documents, data) of MCP server "
         f"{server!r}: uri, name, description; a template's {{placeholders}} are filled in "
         "to read it.", {"type": "object", "properties": {}}),
        (reading, "read_resource", f"Read one resource of MCP server {server!r} by its URI.",
         {"type": "object", "properties": {"uri": {
             "type": "string", "description": "the resource's URI, from list_resources"}},
          "required": ["uri"]}),
    ]
    return [Tool(fn, name=prefix + name, description=about, parameters=schema,
                 origin=f"MCP server {server!r}", repeatable=True)
            for fn, name, about, schema in specs if prefix + name not in taken]
