"""``reactloop mcp``: list the tools of configured MCP servers, log in to OAuth servers; serve
reactloop tools over MCP.

Importing this module stays cheap: the MCP SDK is imported only when a command runs.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import click

__all__ = ["mcp_group"]


@click.group("mcp")
def mcp_group() -> None:
    """Use MCP servers, or serve reactloop tools as an MCP server."""


@mcp_group.command("list")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--schema", is_flag=True, help="Also print each tool's JSON schema.")
@click.option("--include", multiple=True, metavar="PATTERN",
              help="Only these tools (name or pattern such as 'git_*'). Repeatable.")
@click.option("--exclude", multiple=True, metavar="PATTERN",
              help="Not these tools (name or pattern). Repeatable.")
def list_command(file: str, schema: bool, include: tuple[str, ...],
                 exclude: tuple[str, ...]) -> None:
    """Start each server of an mcpServers JSON FILE and print its tools.

    The 'access' column is what the server says about each tool: 'writes' (it changes
    things: readOnlyHint false or destructiveHint true), 'read-only', or '?' (not said).
    """
    from rich.console import Console

    from reactloop.errors import ReactloopError
    from reactloop.mcp import load_mcp_config

    console = Console()
    try:
        servers = load_mcp_config(file)
    except ReactloopError as exc:
        raise click.ClickException(str(exc)) from None
    if not servers:
        console.print(f"[yellow]{file} lists no (enabled) servers.[/]")
        return
    failures = asyncio.run(_list_servers(servers, console, schema, include, exclude))
    if failures:
        sys.exit(1)


async def _list_servers(servers: list[Any], console: Any, schema: bool,
                        include: tuple[str, ...], exclude: tuple[str, ...]) -> int:
    failures = 0
    for server in servers:
        failures += not await _list_one(server, console, schema, include, exclude)
    return failures


async def _list_one(server: Any, console: Any, schema: bool, include: tuple[str, ...],
                    exclude: tuple[str, ...]) -> bool:
    """Print one server's tools, resources and prompts; False (after printing why) when it
    did not start."""
    import json

    from rich.table import Table

    from reactloop.mcp import MCPServerError

    title = f"[bold]{server.name}[/]  [dim]{server.describe()}[/]"
    warnings: list[Any] = []
    try:
        async with server.open(lambda name, data: warnings.append(data)) as tools:
            skipped = [w for w in warnings if w.get("kind") == "skipped"]
            if skipped:  # an optional server that failed to start is skipped, not raised
                raise MCPServerError(skipped[0]["message"], server=server.name)
            for w in warnings:
                console.print(f"  {w.get('message')}", style="yellow", markup=False,
                              highlight=False)
            table = Table(title=title, title_justify="left", show_lines=schema)
            table.add_column("tool (as the model sees it)", style="cyan", no_wrap=True)
            table.add_column("access", no_wrap=True)
            table.add_column("description")
            from reactloop.cli._observe import tool_matches

            for t in tools:
                if (include and not any(tool_matches(p, t) for p in include)) or any(
                        tool_matches(p, t) for p in exclude):
                    continue
                text = _first_paragraph(t.description)
                if schema:
                    text += "\n" + json.dumps(t.parameters, indent=2)
                table.add_row(t.name, _access(t), text)
            console.print(table if tools else f"{title}\n  [dim](no tools)[/]")
            await _print_resources_and_prompts(tools, console)
    except MCPServerError as exc:
        console.print(title)
        console.print(f"  {exc}", style="red", markup=False, highlight=False)
        return False
    return True


async def _print_resources_and_prompts(opened: Any, console: Any) -> None:
    """The server's resources (and templates) and prompts, when it has any."""
    from rich.markup import escape

    resources = await opened.list_resources()
    if resources:
        console.print("  [bold]resources[/] (read_resource, --mcp-resource, chat's /resource)")
    for r in resources:
        about = _first_paragraph(r.description, 100)
        kind = " [dim](template)[/]" if r.template else ""
        console.print(f"    [cyan]{escape(r.uri)}[/]{kind}  {escape(r.name)}"
                      + (f" — {escape(about)}" if about else ""), highlight=False)
    prompts = await opened.list_prompts()
    if prompts:
        console.print("  [bold]prompts[/] (chat's /prompt NAME ARG=VALUE …)")
    for p in prompts:
        args = " ".join(f"{a}=…" if required else f"[{a}=…]" for a, _, required in p.arguments)
        about = _first_paragraph(p.description, 100)
        console.print(f"    [cyan]{escape(p.name)}[/] {escape(args)}"
                      + (f" — {escape(about)}" if about else ""), highlight=False)


def _access(tool: Any) -> str:
    writes = getattr(tool, "writes", None)
    if writes:
        return "[bold red]writes[/]" + (" (destructive)" if tool.destructive else "")
    return "read-only" if writes is False else "[dim]?[/]"


def _first_paragraph(text: str, limit: int = 300) -> str:
    first = text.strip().split("\n\n", 1)[0].replace("\n", " ")
    return first if len(first) <= limit else first[: limit - 1] + "…"


@mcp_group.command("login")
@click.argument("target", metavar="NAME|URL")
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False),
              help="The mcpServers JSON file that names the server (NAME); without it, "
              "TARGET is the server's URL.")
@click.option("--sse", is_flag=True, help="With a URL: the server speaks the older HTTP+SSE "
              "transport.")
@click.option("--port", type=click.IntRange(1, 65535), default=None,
              help="The loopback port of the redirect (default: the registered one, else any "
              "free port).")
@click.option("--no-browser", is_flag=True, help="Only print the URL; do not open a browser.")
@click.option("--timeout", type=click.FloatRange(min=1), default=300.0, show_default=True,
              help="Seconds to wait for the redirect.")
def login_command(target: str, config_file: str | None, sse: bool, port: int | None,
                  no_browser: bool, timeout: float) -> None:
    """Log in to an OAuth MCP server ahead of a run and store its tokens.

    Prints the authorization URL (and opens a browser when one is available), listens on a
    loopback port for the redirect, and stores the tokens beside `reactloop keys` (never
    printed; `reactloop keys list` names them, `reactloop keys delete mcp:NAME` removes them).
    Runs then use the tokens and refresh them when they expire.
    """
    from reactloop.cli._console import fail
    from reactloop.errors import ReactloopError

    try:
        server = _login_server(target, config_file, sse, port)
        count = asyncio.run(server.login(open_browser=not no_browser, within=timeout))
    except ReactloopError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail("login cancelled", 130)
    from reactloop.mcp._oauth import tokens_path

    click.echo(f"logged in to MCP server {server.name!r} ({count} tools); tokens stored in "
               f"{tokens_path()}", err=True)


def _login_server(target: str, config_file: str | None, sse: bool, port: int | None) -> Any:
    """The server to log in to: NAME in the config file, or a URL (OAuth on)."""
    from dataclasses import replace

    from reactloop.errors import UserError
    from reactloop.mcp import MCPServer, load_mcp_config
    from reactloop.mcp._errors import require_sdk

    require_sdk()
    if config_file is None:
        if not target.startswith(("http://", "https://")):
            raise UserError(f"{target!r} is not a URL: give the server's URL, or its name "
                            "with --config FILE")
        server = (MCPServer.sse if sse else MCPServer.http)(target, oauth=True)
    else:
        by_name = {s.name: s for s in load_mcp_config(config_file)}
        if target not in by_name:
            known = ", ".join(sorted(by_name)) or "none"
            raise UserError(f"no MCP server named {target!r} in {config_file}; the servers: "
                            f"{known}")
        server = by_name[target]
        if server.oauth is None:
            raise UserError(f"MCP server {target!r} in {config_file} does not use OAuth: add "
                            '"oauth": true to its entry')
    if port is not None and server.oauth is not None:
        server.oauth = replace(server.oauth, callback_port=port)
    return server


@mcp_group.command("serve")
@click.option(
    "--tools",
    "tool_specs",
    multiple=True,
    metavar="MODULE:ATTR",
    help="A Tool, a function or a list of them to expose (repeatable).",
)
@click.option(
    "--agent",
    "agent_spec",
    metavar="MODULE:ATTR",
    help="An Agent to expose as one tool, run_agent(task).",
)
@click.option("--name", default="reactloop", show_default=True, help="The server's name.")
@click.option("--approve-all", is_flag=True,
              help="Run calls that need approval (requires_approval, Agent(approve=...)) "
              "without asking; by default they are refused with an error.")
def serve_command(tool_specs: tuple[str, ...], agent_spec: str | None, name: str,
                  approve_all: bool) -> None:
    """Serve reactloop tools (and optionally an agent) as an MCP server over stdio.

    For example, in an MCP client's config:
    {"command": "reactloop", "args": ["mcp", "serve", "--tools", "mytools:TOOLS"]}
    """
    from reactloop.cli._load import load_object
    from reactloop.errors import ReactloopError
    from reactloop.mcp._errors import require_sdk

    if not tool_specs and not agent_spec:
        raise click.UsageError("give --tools MODULE:ATTR (repeatable) and/or --agent MODULE:ATTR")
    try:
        require_sdk()
        from reactloop.mcp._serve import agent_tool, collect_tools, serve_stdio

        tools = [t for spec in tool_specs for t in collect_tools(load_object(spec, "--tools"))]
        if agent_spec:
            tools.append(agent_tool(load_object(agent_spec, "--agent"), approve_all=approve_all))
        asyncio.run(serve_stdio(tools, name=name, approve_all=approve_all))
    except ReactloopError as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:
        pass
