"""Agents with MCP servers that ask the user, for tests/test_temporal_elicitation.py, hosted by
in-process workers (:func:`booking_agent`) and ``reactloop worker`` subprocesses
(``--agent temporal_mcp_agents:NAME``, run with this folder as the working directory).

The model calls one tool, then answers with what the tool returned. The servers append what
they asked and received to the file named by ``REACTLOOP_TEST_LOG`` (read when the module is
imported, in the worker process).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from reactloop import Agent, ModelRequest, ModelResponse, ToolCall
from reactloop.mcp import Elicitation, ElicitationAnswer, MCPServer
from reactloop.testing import FunctionModel

try:
    from reactloop.temporal import TemporalAgent
except ImportError:  # pragma: no cover - the tests skip without temporalio
    TemporalAgent = None  # type: ignore[assignment,misc]

HERE = Path(__file__).resolve().parent
INPUT_SERVER = str(HERE / "mcp_input_server.py")
EVERYTHING = HERE / "mcp_npm" / "node_modules" / ".bin" / "mcp-server-everything"


def _one_call(tool: str, arguments: dict[str, object]) -> FunctionModel:
    def model(request: ModelRequest) -> ModelResponse:
        results = [m for m in request.messages if m.role == "tool"]
        if not results:
            return ModelResponse(tool_calls=[ToolCall(tool, arguments, id="book-1")])
        return ModelResponse(text=f"Done: {results[-1].content}")
    return FunctionModel(model)


# -- the resumable form: a durable wait ----------------------------------------------------------
def booking_agent(log: str, name: str = "booking") -> TemporalAgent:
    """Books through tests/mcp_input_server.py, whose question is an input-required result."""
    server = MCPServer.stdio(sys.executable, [INPUT_SERVER], name="input",
                             env={"REACTLOOP_TEST_LOG": log})
    agent = Agent(_one_call("input_book", {"city": "Lima"}), mcp_servers=[server], name=name)
    return TemporalAgent(agent, heartbeat_timeout=5.0)  # a loaded machine


booking = booking_agent(os.environ.get("REACTLOOP_TEST_LOG", "")) if TemporalAgent else None


# -- the classic form: a live wait in the worker -------------------------------------------------
async def _hold(request: Elicitation) -> ElicitationAnswer:
    """A person who never answers: the test kills the worker while this waits."""
    gate = os.environ.get("REACTLOOP_TEST_GATE", "")
    await asyncio.to_thread(Path(gate + ".asked").touch)
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


classic = None
if TemporalAgent is not None and EVERYTHING.exists():
    _everything = MCPServer.stdio(str(EVERYTHING), ["stdio"], name="everything",
                                  elicitation=_hold)
    classic = TemporalAgent(
        Agent(_one_call("everything_trigger-elicitation-request", {}),
              mcp_servers=[_everything], name="classic"), heartbeat_timeout=5.0)
