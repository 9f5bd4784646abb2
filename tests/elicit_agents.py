"""The agent of the ``reactloop serve`` elicitation tests (tests/test_serve_elicitation.py and
the dev UI test): ``reactloop serve --agent elicit_agents:agent``.

Its MCP server is tests/mcp_elicit_server.py (FastMCP, over stdio), whose tools ask the user
with ``ctx.elicit``. The model is a :class:`FunctionModel` deciding from the request alone: a
turn whose message names tools (``book``, ``confirm``; both: two calls in one response) calls
``asker_<tool>``; once the calls have results, it answers ``done: <the results>`` (so a test
reads what the server received). ``deadline`` is the same agent with ``max_execution_time`` (a
run nobody answers ends). ``everything`` has MCP's reference server instead
(``@modelcontextprotocol/server-everything``, tests/mcp_npm): ``form`` calls its
``trigger-elicitation-request`` (every field kind, multi-selects included), ``sign in`` its
``trigger-url-elicitation``.
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


EVERYTHING = Path(__file__).with_name("mcp_npm") / "node_modules" / ".bin" / "mcp-server-everything"
CALLS = {"book": ToolCall("asker_book", {}), "confirm": ToolCall("asker_confirm", {}),
         "form": ToolCall("everything_trigger-elicitation-request", {}),
         "sign in": ToolCall("everything_trigger-url-elicitation",
                             {"url": "https://example.com/sign-in"})}


def decide(request: ModelRequest) -> Any:
    results = []
    for m in reversed(request.messages):
        if m.role != "tool":
            break
        results.insert(0, m.content)
    if results:
        return "done: " + " | ".join(results)
    calls = [call for word, call in CALLS.items() if word in request.messages[-1].content]
    return calls or "say book, confirm, form or sign in"


def asker() -> MCPServer:
    return MCPServer.stdio(sys.executable, [SERVER], name="asker")


agent = Agent(FunctionModel(decide), name="asker-agent", mcp_servers=[asker()])
deadline = Agent(FunctionModel(decide), name="asker-deadline", mcp_servers=[asker()],
                 max_execution_time=3)
everything = Agent(FunctionModel(decide), name="everything-agent", mcp_servers=[
    MCPServer.stdio(str(EVERYTHING), ["stdio"], name="everything", startup_timeout=60)])
