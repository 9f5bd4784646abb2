"""The reverse direction: reactloop tools (and optionally a whole agent) as an MCP server.

Built on the SDK's low-level server so the schemas clients see are exactly the ones reactloop
derives for a model, and calls run through :class:`~reactloop.tools.ToolRegistry` (argument
validation, timeouts, errors as results), exactly as in an agent run.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from reactloop.errors import UserError
from reactloop.messages import ToolCall
from reactloop.tools._registry import ToolRegistry, as_tool
from reactloop.tools._tool import Tool

__all__ = ["build_server", "collect_tools", "serve_stdio"]

AGENT_TOOL = "run_agent"


def collect_tools(obj: Any) -> list[Tool]:
    """A Tool, a function, or an iterable (list, tuple, dict values) of them → Tools."""
    if obj is None:
        return []
    if isinstance(obj, Tool) or callable(obj):
        return [as_tool(obj)]
    if isinstance(obj, Mapping):
        obj = obj.values()
    if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes)):
        out: list[Tool] = []
        for item in obj:
            out.extend(collect_tools(item))
        return out
    raise UserError(f"{obj!r} is not a tool: expected a Tool, a function or a list of them")


def agent_tool(agent: Any) -> Tool:
    """The agent as one tool, ``run_agent(task)``, answering with the run's output."""
    if not callable(getattr(agent, "run", None)):
        raise UserError(f"{agent!r} is not an agent: it has no run(task) method")
    instructions = str(getattr(agent, "instructions", "") or "").strip()
    about = f" Its instructions: {instructions.splitlines()[0][:300]}" if instructions else ""

    async def run_agent(task: str) -> str:
        result = agent.run(task)
        if inspect.isawaitable(result):
            result = await result
        error = getattr(result, "error", None)
        if error is not None:
            raise RuntimeError(f"the agent failed: {error}")
        return str(getattr(result, "output", result))

    return Tool(
        run_agent,
        name=AGENT_TOOL,
        description="Give a task to an AI agent that uses its own tools to do it, and get "
        f"its final answer.{about}",
        parameters={
            "type": "object",
            "properties": {"task": {"type": "string", "description": "what the agent should do"}},
            "required": ["task"],
        },
        origin="reactloop mcp serve --agent",
    )


def build_server(tools: Iterable[Tool], *, name: str = "reactloop") -> Server[Any]:
    """An MCP server (the SDK's low-level ``Server``) that lists and runs ``tools``."""
    from reactloop._version import __version__

    registry = ToolRegistry(tools)

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_spec(registry, n) for n in registry.names])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in registry:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        call = ToolCall(params.name, dict(params.arguments or {}), id=str(ctx.request_id or ""))
        result = await registry.execute_one(call, run_id="mcp-serve")
        text = result.content if result.ok else (result.error or "the tool failed")
        value = result.to_dict()["result"]  # JSON-safe; objects also go out as structured content
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=value if result.ok and isinstance(value, dict) else None,
            is_error=not result.ok,
        )

    def input_schema(tool_name: str) -> dict[str, Any] | None:
        t = registry.get(tool_name)
        return None if t is None else t.parameters

    return Server(
        name,
        version=__version__,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _spec(registry: ToolRegistry, name: str) -> types.Tool:
    t = registry.get(name)
    assert t is not None
    return types.Tool(name=t.name, description=t.description, input_schema=t.parameters)


async def serve_stdio(tools: Any = (), *, agent: Any = None, name: str = "reactloop") -> None:
    """Serve ``tools`` (and ``agent`` as ``run_agent``) over stdin/stdout until EOF."""
    from mcp.server.stdio import stdio_server

    all_tools = collect_tools(tools)
    if agent is not None:
        all_tools.append(agent_tool(agent))
    if not all_tools:
        raise UserError("nothing to serve: pass tools (a Tool, a function or a list) or an agent")
    server = build_server(all_tools, name=name)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
