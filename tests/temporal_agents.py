"""Agents for tests/test_temporal.py, hosted by in-process workers and by ``reactloop worker``
subprocesses (``--agent temporal_agents:NAME``, run with this folder as the working directory).

The models are FunctionModels that decide from the request alone (how many tool results the
history holds, what the user said), so any worker process answers a request the same way.
Tools append one line per execution to the file named by ``REACTLOOP_TEST_LOG``, which is how
the tests count side effects across processes.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from reactloop import Agent, ModelRequest, ModelResponse, ToolCall, tool
from reactloop.testing import FunctionModel

try:
    from reactloop.temporal import TemporalAgent
except ImportError:  # pragma: no cover - the tests skip without temporalio
    TemporalAgent = None  # type: ignore[assignment,misc]


def _log(line: str) -> None:
    path = os.environ.get("REACTLOOP_TEST_LOG")
    if path:
        with open(path, "a") as f:
            f.write(f"{line} {os.getpid()}\n")


def _tool_results(request: ModelRequest) -> int:
    return sum(1 for m in request.messages if m.role == "tool")


@tool
def record(step: int) -> str:
    """Record that a step ran (a side effect counted by the tests).

    Args:
        step: the step's number
    """
    _log(f"record {step}")
    return f"step {step} recorded"


# -- several steps; the model can be held between two tool calls -----------------------------
def _steps(request: ModelRequest) -> ModelResponse:
    n = _tool_results(request)
    gate = os.environ.get("REACTLOOP_TEST_GATE")
    if gate and n == 1:  # between the first and the second tool call: wait for the test
        Path(gate + ".waiting").touch()
        deadline = time.monotonic() + 120
        while not Path(gate).exists() and time.monotonic() < deadline:
            time.sleep(0.02)  # a model that takes its time (the test kills this worker now)
    if n < 3:
        return ModelResponse(tool_calls=[ToolCall("record", {"step": n + 1})])
    return ModelResponse(text=f"All {n} steps recorded.")


steps_agent = Agent(model=FunctionModel(_steps), tools=[record], name="steps")
steps = TemporalAgent(steps_agent, heartbeat_timeout=1.0) if TemporalAgent else None


# -- an agent called as a tool: its run is part of the parent's workflow ----------------------
stepper_agent = Agent(model=FunctionModel(_steps), tools=[record], name="stepper")


def _delegate(request: ModelRequest) -> ModelResponse:
    if _tool_results(request) == 0:
        return ModelResponse(tool_calls=[ToolCall("stepper", {"task": "Record three steps."})])
    return ModelResponse(text=f"Delegated: {request.messages[-1].content}")


delegating_agent = Agent(model=FunctionModel(_delegate), tools=[stepper_agent.as_tool()],
                         name="delegating")
delegating = TemporalAgent(delegating_agent, heartbeat_timeout=1.0) if TemporalAgent else None

# -- many concurrent runs over two workers ----------------------------------------------------
async def _slow_steps(request: ModelRequest) -> ModelResponse:
    await asyncio.sleep(0.05)
    n = _tool_results(request)
    if n < 2:
        return ModelResponse(tool_calls=[ToolCall("record", {"step": n + 1})])
    return ModelResponse(text="done")


crowd_agent = Agent(model=FunctionModel(_slow_steps), tools=[record], name="crowd")
crowd = TemporalAgent(crowd_agent, heartbeat_timeout=2.0) if TemporalAgent else None


# -- a run that asks the user ----------------------------------------------------------------
def _asks(request: ModelRequest) -> ModelResponse:
    users = [m.content for m in request.messages if m.role == "user" and not m.metadata]
    if len(users) == 1:
        return ModelResponse(tool_calls=[ToolCall("ask_question", {"question": "Which city?"})])
    if _tool_results(request) < 2:  # one ask_question result so far: book it
        return ModelResponse(tool_calls=[ToolCall("record", {"step": 1})])
    return ModelResponse(tool_calls=[ToolCall("task_completion",
                                              {"result": f"Booked to {users[-1]}."})])


asking_agent = Agent(model=FunctionModel(_asks), tools=[record], loop_control=True,
                     name="asking")
asking = TemporalAgent(asking_agent, heartbeat_timeout=1.0) if TemporalAgent else None


# -- a tool in flight when the worker is told to stop ----------------------------------------
@tool(timeout=60)
def slow_record(step: int) -> str:
    """Record a step, slowly (the test holds it until the worker was told to stop).

    Args:
        step: the step's number
    """
    gate = os.environ.get("REACTLOOP_TEST_GATE")
    if gate:
        Path(gate + ".started").touch()
        deadline = time.monotonic() + 120
        while not Path(gate).exists() and time.monotonic() < deadline:
            time.sleep(0.02)  # a tool that takes its time (the test stops the worker now)
    _log(f"slow {step}")
    return f"step {step} done"


def _drain(request: ModelRequest) -> ModelResponse:
    if _tool_results(request) == 0:
        return ModelResponse(tool_calls=[ToolCall("slow_record", {"step": 1})])
    return ModelResponse(text=f"Finished: {request.messages[-1].content}")


draining_agent = Agent(model=FunctionModel(_drain), tools=[slow_record], name="draining")
draining = TemporalAgent(draining_agent, heartbeat_timeout=2.0) if TemporalAgent else None


# -- a tool call that waits for a person's approval ------------------------------------------
@tool(requires_approval=True)
def transfer(amount: int) -> str:
    """Transfer money (a side effect counted by the tests; needs a person's approval).

    Args:
        amount: how much
    """
    _log(f"transfer {amount}")
    return f"transferred {amount}"


def _pays(request: ModelRequest) -> ModelResponse:
    results = [m.content for m in request.messages if m.role == "tool"]
    if not results:  # the gated call and an ordinary one, in one response
        return ModelResponse(tool_calls=[ToolCall("transfer", {"amount": 100}, "pay-1"),
                                         ToolCall("record", {"step": 1}, "rec-1")])
    return ModelResponse(text="Saw: " + " | ".join(results))


paying_agent = Agent(model=FunctionModel(_pays), tools=[transfer, record], name="paying")
paying = TemporalAgent(paying_agent, heartbeat_timeout=1.0) if TemporalAgent else None
