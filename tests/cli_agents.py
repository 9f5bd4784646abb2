"""Agents on scripted models for the CLI tests (``--agent cli_agents:NAME``).

Each is a function, so every CLI process gets a fresh script. ``gate`` models wait for a file
named in ``REACTLOOP_TEST_GATE`` to exist before answering, so a test can look at the screen
while the model "thinks" and then let it go on (polling a condition, never a fixed sleep).
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from reactloop import Agent, ModelResponse, ToolCall
from reactloop._demo_tools import DEMO_TOOLS
from reactloop.messages import ModelRequest, Usage
from reactloop.testing import FunctionModel, ScriptedModel


def completed() -> Agent:
    return Agent(model=ScriptedModel([
        ModelResponse(text="Let me add.", tool_calls=[ToolCall("add", {"a": 17, "b": 25})]),
        "17 + 25 = 42",
    ]), tools=DEMO_TOOLS)


def truncated() -> Agent:
    cut = ModelResponse(text="The answer is", finish_reason="length")
    return Agent(model=ScriptedModel([cut, cut, cut, cut]), max_iterations=2)


def tool_errors() -> Agent:
    return Agent(model=ScriptedModel([ToolCall("add", {"a": "x", "b": 1}), "It is 42."]),
                 tools=DEMO_TOOLS)


def max_iterations() -> Agent:
    return Agent(model=ScriptedModel([ToolCall("add", {"a": 1, "b": 2}),
                                      ToolCall("add", {"a": 3, "b": 4}), "gave up"]),
                 tools=DEMO_TOOLS, max_iterations=2)


def failing() -> Agent:
    from reactloop.errors import ModelHTTPError

    return Agent(model=ScriptedModel([ModelHTTPError(401, "invalid api key sk-test")]))


def echo() -> Agent:
    """Answers every message with what it received (the whole prompt) and the turn number."""

    def answer(request: ModelRequest) -> ModelResponse:
        users = [m for m in request.messages if m.role == "user"]
        return ModelResponse(text=f"turn {len(users)}: {users[-1].content}",
                             usage=Usage(10 * len(users), 5))

    return Agent(model=FunctionModel(answer))


def _wait_for_gate() -> None:
    gate = Path(os.environ["REACTLOOP_TEST_GATE"])
    while not gate.exists():  # the test creates it once it has seen what it waits for
        time.sleep(0.02)


async def _gate() -> None:
    await asyncio.to_thread(_wait_for_gate)


def gated() -> Agent:
    """Two calls: a tool call at once, then an answer once the gate file exists."""
    calls = 0

    async def answer(request: ModelRequest) -> ModelResponse:
        nonlocal calls
        calls += 1
        if calls == 1:
            return ModelResponse(tool_calls=[ToolCall("add", {"a": 2, "b": 2})],
                                 usage=Usage(100, 20))
        await _gate()
        return ModelResponse(text="2 + 2 = 4", usage=Usage(130, 7))

    return Agent(model=FunctionModel(answer), tools=DEMO_TOOLS)


def hanging() -> Agent:
    """Hangs on any message containing 'hang' (until cancelled); echoes the others."""

    async def answer(request: ModelRequest) -> ModelResponse:
        text = request.messages[-1].content
        if "hang" in text:
            await asyncio.Event().wait()
        return ModelResponse(text=f"you said: {text}", usage=Usage(10, 5))

    return Agent(model=FunctionModel(answer))


def git() -> Agent:
    """Reads and then writes (git_add) a repository through the real mcp-server-git."""
    import sys

    from reactloop.mcp import MCPServer

    repo = os.environ["REACTLOOP_TEST_REPO"]
    model = ScriptedModel([
        ToolCall("git_status", {"repo_path": repo}),
        ToolCall("git_add", {"repo_path": repo, "files": ["new.txt"]}),
        "Staged new.txt.",
    ])
    server = MCPServer.stdio(sys.executable, ["-m", "mcp_server_git", "-r", repo])
    return Agent(model=model, mcp_servers=[server])


def fetch(i: int) -> str:
    """Fetch item i.

    Args:
        i: the item
    """
    return f"<item {i}>" + "data " * 300 + f"</item {i}>"


def compacting() -> Agent:
    """Six fetches into a 3,000-token window: the history must be compacted on the way."""
    from reactloop.context import Compaction
    from reactloop.context._summary import SUMMARY_SYSTEM

    def answer(request: ModelRequest) -> ModelResponse | ToolCall:
        if request.system == SUMMARY_SYSTEM:
            return ModelResponse(text="summary: items fetched so far", usage=Usage(50, 5))
        done = sum(m.role == "tool" for m in request.messages)
        calls = sum(r.system != SUMMARY_SYSTEM for r in model.requests)
        if calls > 6:
            return ModelResponse(text=f"fetched, {done} results in view", usage=Usage(10, 5))
        return ToolCall("fetch", {"i": calls})

    model = FunctionModel(answer, context_window=3000)
    return Agent(model=model, tools=[fetch], max_iterations=10,
                 compaction=Compaction(keep_last=2))


# -- agents that work together (tests/test_multi_traces.py): triage hands off to billing,
# which asks the math agent (an agent called as a tool)
def team() -> Agent:
    def call(name: str, **arguments: object) -> ModelResponse:
        return ModelResponse(tool_calls=[ToolCall(name, arguments)])

    add = next(t for t in DEMO_TOOLS if t.name == "add")
    math = Agent(ScriptedModel([call("add", a=2, b=3), "5"]), name="math", tools=[add])
    billing = Agent(ScriptedModel([call("math", task="2+3"), "You owe 5 EUR."]),
                    name="billing", tools=[math.as_tool()])
    return Agent(ScriptedModel([call("transfer_to_billing")]), name="triage",
                 handoffs=[billing])
