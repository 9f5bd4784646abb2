"""The agent of the ``reactloop serve`` elicitation tests (tests/test_serve_elicitation.py and
the dev UI test): ``reactloop serve --agent elicit_agents:agent``.

Its MCP server is tests/mcp_elicit_server.py (FastMCP, over stdio), whose tools ask the user
with ``ctx.elicit``. The model is a :class:`FunctionModel` deciding from the request alone: a
turn whose message names a tool (``book``, ``confirm``) calls ``asker_<tool>``; once the call
has a result, it answers ``done: <the result>`` (so a test reads what the server received).
``deadline`` is the same agent with ``max_execution_time`` (a run nobody answers ends).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from reactloop import Agent, ToolCall
from reactloop.mcp import MCPServer
from reactloop.messages import ModelRequest
from reactloop.testing import FunctionModel

SERVER = str(Path(__file__).with_name("mcp_elicit_server.py"))


def decide(request: ModelRequest) -> Any:
    last = request.messages[-1]
    if last.role == "tool":
        return f"done: {last.content}"
    for word in ("book", "confirm"):
        if word in last.content:
            return ToolCall(f"asker_{word}", {})
    return "say book or confirm"


def asker() -> MCPServer:
    return MCPServer.stdio(sys.executable, [SERVER], name="asker")


agent = Agent(FunctionModel(decide), name="asker-agent", mcp_servers=[asker()])
deadline = Agent(FunctionModel(decide), name="asker-deadline", mcp_servers=[asker()],
                 max_execution_time=3)
