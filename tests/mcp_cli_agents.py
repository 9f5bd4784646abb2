"""Agents for tests/test_cli_mcp_features.py: a scripted model and tests/mcp_features_server.py
(``reactloop run --agent mcp_cli_agents:NAME``)."""

from __future__ import annotations

import sys
from pathlib import Path

from reactloop import Agent, ModelRequest, ModelResponse, ToolCall
from reactloop.mcp import MCPServer
from reactloop.testing import FunctionModel

FEATURES = str(Path(__file__).with_name("mcp_features_server.py"))


def _features() -> MCPServer:
    return MCPServer.stdio(sys.executable, [FEATURES], name="features")


def _calls(tool: str, arguments: dict[str, object]) -> FunctionModel:
    """Calls ``tool`` once, then answers with what the tool returned (or the user said)."""

    def answer(request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(text=f"tool said: {last.content}")
        return ModelResponse(tool_calls=[ToolCall(tool, arguments)])

    return FunctionModel(answer)


def book() -> Agent:
    """Books seats: the server asks the user who travels (MCP elicitation)."""
    return Agent(model=_calls("features_book", {}), mcp_servers=[_features()])


def work() -> Agent:
    """A tool that reports progress."""
    return Agent(model=_calls("features_work", {"steps": 3}), mcp_servers=[_features()])


def echo() -> Agent:
    """Answers with the last user message whole (what --mcp-resource and /prompt sent)."""

    def answer(request: ModelRequest) -> ModelResponse:
        users = [m for m in request.messages if m.role == "user"]
        return ModelResponse(text=f"got: {users[-1].content}")

    return Agent(model=FunctionModel(answer), mcp_servers=[_features()])
