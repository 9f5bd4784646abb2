"""Agents whose sync tool never returns (``--agent stuck_agents:NAME``, or imported by a child
process): the run must end at its deadline or tool timeout, and the process must exit, while
the tool's thread is still blocked."""

from __future__ import annotations

import threading

from reactloop import Agent, ToolCall
from reactloop.testing import ScriptedModel

NEVER = threading.Event()  # nobody sets it: the tool's thread blocks for good


def wait_forever() -> str:
    """Block until the end of time."""
    NEVER.wait()
    return "unreachable"


def past_deadline() -> Agent:
    """The run's deadline (1 s) passes while the tool blocks."""
    return Agent(model=ScriptedModel([ToolCall("wait_forever", {}), "never reached"]),
                 tools=[wait_forever], max_execution_time=1.0)


def past_tool_timeout() -> Agent:
    """The tool's timeout (0.5 s) passes; the model then answers."""
    return Agent(model=ScriptedModel([ToolCall("wait_forever", {}), "gave up waiting"]),
                 tools=[wait_forever], tool_timeout=0.5)
