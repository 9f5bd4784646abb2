"""The reverse direction: reactloop tools (and optionally a whole agent) as an MCP server.

Built on the SDK's low-level server so the schemas clients see are exactly the ones reactloop
derives for a model, and calls run through :class:`~reactloop.tools.ToolRegistry` (argument
validation, timeouts, errors as results), exactly as in an agent run.

Approvals: a tool that needs a person's approval (``@tool(requires_approval=True)``, an approval
rule that asks for this call, or a served agent whose run stops for an approval, e.g. under
``Agent(approve=...)``) is never run unapproved. This server cannot ask a person, so such a call
answers ``isError`` with a sentence naming how to allow it: ``reactloop mcp serve
--approve-all`` (``approve_all=True`` here), off by default, approves every such call. In
``tools/list`` these tools carry ``destructiveHint: true``, so clients can warn before calling.
A client that supports elicitation is asked instead (:mod:`reactloop.mcp._serve_features`,
which also sends progress and log entries of long tools).
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from reactloop.approvals._gate import gated_calls
from reactloop.errors import UserError
from reactloop.mcp._serve_features import Reporter, current_reporter
from reactloop.messages import ToolCall
from reactloop.tools._registry import ToolRegistry, as_tool
from reactloop.tools._tool import Tool

__all__ = ["APPROVE_ALL_HINT", "build_server", "collect_tools", "serve_stdio"]

AGENT_TOOL = "run_agent"
APPROVE_ALL_HINT = ("start the server with `reactloop mcp serve --approve-all` (in Python: "
                    "serve_stdio(..., approve_all=True)) to let MCP clients run calls that need "
                    "approval without asking")
"""How to allow approval-gated calls, as the refusals say it."""
_RUN_ID = "mcp-serve"


def _refusal(what: str) -> str:
    return (f"{what} needs a person's approval, and this MCP server cannot ask for it, so it "
            f"was not run; {APPROVE_ALL_HINT}.")


def may_need_approval(tool: Tool) -> bool:
    """Whether calls of ``tool`` may wait for approval (its ``destructiveHint``)."""
    if tool.requires_approval is not False:
        return True
    agent = getattr(tool, "served_agent", None)
    spec = getattr(agent, "spec", None)
    if spec is None:
        return False
    return spec.approve is not False or any(
        t.requires_approval is not False for n in spec.tools.names
        if (t := spec.tools.get(n)) is not None)


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


def agent_tool(agent: Any, *, approve_all: bool = False) -> Tool:
    """The agent as one tool, ``run_agent(task)``, answering with the run's output.

    A run that stops for approvals fails the call (nothing waiting has run) unless
    ``approve_all``: then every waiting call is approved and the run goes on."""
    if not callable(getattr(agent, "run", None)):
        raise UserError(f"{agent!r} is not an agent: it has no run(task) method")
    instructions = str(getattr(agent, "instructions", "") or "").strip()
    about = f" Its instructions: {instructions.splitlines()[0][:300]}" if instructions else ""

    async def run_agent(task: str) -> str:
        reporter = current_reporter.get()
        result = await _run(agent, task, reporter)
        while getattr(result, "pending_approvals", None):
            pending = result.pending_approvals
            waiting = ", ".join(p.tool_name for p in pending)
            if approve_all:
                decisions = [p.approve() for p in pending]
            elif reporter is not None and reporter.can_ask_now():  # the client's user decides
                decisions = [p.approve() if await reporter.approve(p.tool_name, p.arguments)
                             else p.deny("the user declined") for p in pending]
            else:
                raise RuntimeError(_refusal(f"the agent's call of {waiting}"))
            result = await _settled(agent.resume(result, decisions=decisions))
        error = getattr(result, "error", None)
        if error is not None:
            raise RuntimeError(f"the agent failed: {error}")
        return str(getattr(result, "output", result))

    served = Tool(
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
    served.served_agent = agent  # type: ignore[attr-defined]  # read by may_need_approval
    return served


async def _settled(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def _run(agent: Any, task: str, reporter: Reporter | None) -> Any:
    """Run the served agent; with a client to tell, stream it: each iteration is progress,
    each tool call a log entry."""
    if reporter is None or not callable(getattr(agent, "stream", None)):
        return await _settled(agent.run(task))
    result = None
    async for event in agent.stream(task):
        kind = getattr(event, "type", "")
        if kind == "iteration_start":
            reporter.progress(event.iteration, event.max_iterations,
                              f"iteration {event.iteration}")
        elif kind == "tool_call":
            reporter.log("info", f"calling {event.call.name}")
        elif kind == "run_end":
            result = event.result
    return result


def build_server(tools: Iterable[Tool], *, name: str = "reactloop",
                 approve_all: bool = False) -> Server[Any]:
    """An MCP server (the SDK's low-level ``Server``) that lists and runs ``tools``.

    Calls that need approval are refused (``isError``) unless ``approve_all``."""
    from reactloop._version import __version__

    registry = ToolRegistry(tools)
    level: list[types.LoggingLevel] = ["info"]  # what the client asked for (logging/setLevel)

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_spec(registry, n) for n in registry.names])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams
                        ) -> types.CallToolResult | types.InputRequiredResult:
        if params.name not in registry:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        call = ToolCall(params.name, dict(params.arguments or {}), id=str(ctx.request_id or ""))
        reporter = Reporter(ctx, level[0])
        if not approve_all and gated_calls([call], registry, False, _RUN_ID, None, {}):
            refused = await _ask_approval(reporter, params)
            if refused is not None:
                return refused
        token = current_reporter.set(reporter)
        try:
            result = await registry.execute_one(call, run_id=_RUN_ID, emit=reporter.emit)
        finally:
            current_reporter.reset(token)
        await reporter.drain()
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

    async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        level[0] = params.level
        return types.EmptyResult()

    with warnings.catch_warnings():  # logging is deprecated in 2026-07-28; clients use it
        warnings.simplefilter("ignore")
        return Server(
            name,
            version=__version__,
            get_tool_input_schema=input_schema,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_set_logging_level=set_level,
        )


async def _ask_approval(reporter: Reporter, params: types.CallToolRequestParams
                        ) -> types.CallToolResult | types.InputRequiredResult | None:
    """A gated call: None when the client's user approved it, else what to answer (the
    refusal, the user's no, or the question itself on a 2026-07-28 connection)."""
    arguments = dict(params.arguments or {})
    if not reporter.can_ask():
        return _error(_refusal(f"the call of {params.name}"))
    approved = await reporter.approve(params.name, arguments, params.input_responses)
    if approved is None:  # 2026-07-28: the question goes back as an input-required result
        return reporter.approval_request(params.name, arguments)
    if not approved:
        return _error(f"the user declined the call of {params.name}; it was not run.")
    return None


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                is_error=True)


def _spec(registry: ToolRegistry, name: str) -> types.Tool:
    t = registry.get(name)
    assert t is not None
    hints = types.ToolAnnotations(destructive_hint=True) if may_need_approval(t) else None
    return types.Tool(name=t.name, description=t.description, input_schema=t.parameters,
                      annotations=hints)


async def serve_stdio(tools: Any = (), *, agent: Any = None, name: str = "reactloop",
                      approve_all: bool = False) -> None:
    """Serve ``tools`` (and ``agent`` as ``run_agent``) over stdin/stdout until EOF.

    ``approve_all``: run calls that need approval without asking (off: they are refused)."""
    from mcp.server.stdio import stdio_server

    all_tools = collect_tools(tools)
    if agent is not None:
        all_tools.append(agent_tool(agent, approve_all=approve_all))
    if not all_tools:
        raise UserError("nothing to serve: pass tools (a Tool, a function or a list) or an agent")
    server = build_server(all_tools, name=name, approve_all=approve_all)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
