"""MCP client features on the command line: the servers' questions asked on the terminal,
the workspace offered as their root, resources attached as context (``run --mcp-resource``,
chat's ``/resource``) and their prompts sent as messages (chat's ``/prompt``)."""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from reactloop.errors import UserError

__all__ = ["ask_here", "attach", "configure_servers", "prompt_message", "read_resource_spec"]


def configure_servers(servers: Sequence[Any], *, workspace: Any = None) -> None:
    """Servers built from ``--mcp FILE`` (ours to set): the workspace as their root."""
    from reactloop.mcp import MCPServer

    folder = getattr(workspace, "root", workspace)
    for server in servers:
        if isinstance(server, MCPServer) and folder and not server.roots:
            server.roots = (str(Path(folder).resolve()),)


def ask_here(prompt: Callable[[str], Awaitable[str]], say: Callable[[str], None],
             before_asking: Callable[[], None]) -> None:
    """MCP servers without a handler of their own ask their questions through ``prompt``
    (the terminal form), in this context (call it in the command's main coroutine). Without
    a terminal nothing is set: the capability is not announced, and a server that asks anyway
    is told at once, never left waiting."""
    from reactloop.mcp._ask_terminal import form_elicitor
    from reactloop.mcp._elicitation import answer_of, default_elicitor

    ask = form_elicitor(prompt, say)

    async def asked(request: Any) -> Any:
        before_asking()  # the live progress line goes before a question
        return await answer_of(ask, request)

    default_elicitor.set(asked)


def _server(servers: Sequence[Any], name: str) -> Any:
    by_name = {getattr(s, "name", ""): s for s in servers}
    if name not in by_name:
        known = ", ".join(sorted(n for n in by_name if n)) or "none (give --mcp FILE)"
        raise UserError(f"no MCP server named {name!r}; the servers: {known}")
    return by_name[name]


async def read_resource_spec(servers: Sequence[Any], spec: str) -> str:
    """``SERVER:URI`` read (the server started for it, then stopped), as a context block."""
    from reactloop.errors import ToolRetry

    name, sep, uri = spec.partition(":")
    if not sep or not uri:
        raise UserError(f"--mcp-resource {spec!r}: give SERVER:URI, e.g. "
                        "docs:file:///notes.md (the server's name in the --mcp file)")
    async with _server(servers, name).open() as opened:
        try:
            text = await opened.read_resource(uri)
        except ToolRetry as exc:
            raise UserError(str(exc)) from None
    return f'<resource server="{name}" uri="{uri}">\n{text}\n</resource>'


def attach(prompt: str, blocks: Sequence[str]) -> str:
    """The prompt with resource blocks before it."""
    return "\n\n".join([*blocks, prompt]) if blocks else prompt


async def prompt_message(servers: Sequence[Any], line: str) -> str:
    """``[SERVER:]NAME [ARG=VALUE ...]`` (chat's ``/prompt``): the server's prompt, its
    messages joined as one message to send."""
    from reactloop.errors import ToolRetry

    words = shlex.split(line)
    if not words:
        raise UserError("/prompt NAME [ARG=VALUE ...] (NAME may be SERVER:NAME)")
    target, args = words[0], words[1:]
    arguments = {}
    for a in args:
        key, sep, value = a.partition("=")
        if not sep:
            raise UserError(f"/prompt: {a!r} is not ARG=VALUE")
        arguments[key] = value
    name, _, prompt = target.rpartition(":")
    candidates = [_server(servers, name)] if name else list(servers)
    for server in candidates:
        async with server.open() as opened:
            if not any(p.name == prompt for p in await opened.list_prompts()):
                continue
            try:
                messages = await opened.get_prompt(prompt, arguments)
            except ToolRetry as exc:
                raise UserError(str(exc)) from None
            return "\n\n".join(m.content for m in messages)
    raise UserError(f"no MCP server offers the prompt {prompt!r} (reactloop mcp list FILE "
                    "shows them)")
