"""Agents that work together: an agent called as a tool (``agent.as_tool()``).

The parent's model calls the tool with a ``task``; the sub-agent runs its own loop — its own
instructions, tools, ``max_iterations`` and ``output_type`` — as one more run in the same
context tree:

- its events reach the parent's stream (and callbacks) tagged with ``agent`` and
  ``parent_run_id`` (:class:`~reactloop._nesting.Frame` says which run called it);
- its usage counts into the parent's metrics, with a per-agent breakdown
  (``Metrics.agents``); its result is nested under the call (``ToolResult.run``);
- it runs inside the parent's tool call, so the parent's deadline, cancellation and tool
  timeout reach it, and a sub-run that ends ``MAX_ITERATIONS``, ``TIMED_OUT`` or ``ERROR`` is
  a tool result the parent's model can recover from, never an exception.

The agent hands in a function that opens its run (``open_run(task, stream)``), so this module
never imports the agent and the one-way import rule holds.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import replace
from typing import Any, ClassVar

from reactloop import _nesting
from reactloop.errors import UserError
from reactloop.events import Event, RunEndEvent
from reactloop.result import Metrics, RunResult, RunState, merge_metrics
from reactloop.tools._registry import WithRun
from reactloop.tools._tool import ApprovalRule, Tool

__all__ = ["DEFAULT_MAX_DEPTH", "AgentTool", "OpenRun", "absorb", "agent_tool"]

DEFAULT_MAX_DEPTH = 4
"""How deep agents called as tools may nest by default (a top run is depth 0)."""

OpenRun = Callable[[str, bool], AsyncGenerator[Event, None]]
"""``open_run(task, stream)``: the sub-agent's run on ``task`` as events (``run_end`` last)."""

_FAILED = {RunState.TIMED_OUT: "ran out of time", RunState.ERROR: "failed",
           RunState.CANCELLED: "was cancelled"}


class AgentTool(Tool):
    """A tool that runs an agent: the loop streams its sub-run's events live."""

    nests_runs: ClassVar[bool] = True


def agent_tool(agent_name: str, open_run: OpenRun, *, name: str | None = None,
               description: str | None = None, instructions: str = "",
               max_depth: int = DEFAULT_MAX_DEPTH, timeout: float | None = None,
               requires_approval: ApprovalRule = False) -> Tool:
    """A :class:`Tool` that runs an agent on the ``task`` the model gives it."""
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1:
        raise UserError(f"as_tool(max_depth=...) must be an integer of at least 1, got "
                        f"{max_depth!r}")
    tool_name = name or agent_name
    summary = description or _describe(agent_name, instructions)

    async def run_agent(task: str) -> WithRun:
        """Run the agent on a task.

        Args:
            task: what the agent should do, with everything it needs to know (it sees
                nothing else of this conversation)
        """
        return await _subrun(agent_name, open_run, task, max_depth)

    return AgentTool(run_agent, name=tool_name, description=summary, timeout=timeout,
                origin=f"agent {agent_name!r}", requires_approval=requires_approval)


def _describe(agent_name: str, instructions: str) -> str:
    first = instructions.strip().split("\n\n", 1)[0].strip()
    if len(first) > 300:
        first = first[:297].rstrip() + "..."
    lead = f"Hand a task to the {agent_name} agent; it works on it and answers."
    return f"{lead} {first}" if first else lead


async def _subrun(agent_name: str, open_run: OpenRun, task: str, max_depth: int) -> WithRun:
    frame = _nesting.current.get()
    depth = 1 if frame is None else frame.depth + 1
    if depth > max_depth:
        return WithRun(None, None, f"The {agent_name} agent was not run: agents called as "
                                   f"tools nest at most {max_depth} deep here (this call "
                                   f"would be depth {depth}). Do the task yourself; "
                                   "(developers: raise as_tool(max_depth=...))")
    result: RunResult[Any] | None = None
    async with aclosing(open_run(task, frame is not None and frame.stream)) as events:
        async for event in events:
            if isinstance(event, RunEndEvent):
                result = event.result
                if frame is not None:
                    result.parent_run_id = frame.ctx.run_id
                    absorb(frame.ctx.metrics, result)
            if frame is not None:
                frame.emit(_tagged(event, agent_name, frame.ctx.run_id))
    assert result is not None
    return _answer(agent_name, result)


def _tagged(event: Event, agent: str, parent_run_id: str) -> Event:
    """The sub-run's own events get its name and its parent's id; deeper ones keep theirs."""
    if event.parent_run_id is not None:
        return event
    return replace(event, agent=agent, parent_run_id=parent_run_id)


def _answer(agent_name: str, result: RunResult[Any]) -> WithRun:
    """What the parent's model sees of a sub-run: its answer, or why there is none."""
    state = result.state
    if state is RunState.COMPLETED:
        return WithRun(result.output, result)
    if state is RunState.MAX_ITERATIONS:
        return WithRun(f"(The {agent_name} agent used its whole budget; its answer may be "
                       f"incomplete.)\n{result.text}", result)
    if state is RunState.WAITING_FOR_USER:
        return WithRun(f"The {agent_name} agent needs to know more before it can finish: "
                       f"{result.text}", result)
    if state is RunState.WAITING_FOR_APPROVAL:
        return WithRun(None, result, f"The {agent_name} agent stopped: its "
                                     f"{_calls(result)} wait for a person's approval.")
    why = _FAILED.get(state, f"ended {state.value}")
    return WithRun(None, result, f"The {agent_name} agent {why}: {result.text} — try again "
                                 "with a simpler task, or do it another way.")


def _calls(result: RunResult[Any]) -> str:
    return ", ".join(p.tool_name for p in result.pending_approvals) or "tool calls"


def absorb(parent: Metrics, child: RunResult[Any]) -> None:
    """Add a sub-run's usage to its parent's totals and per-agent breakdown."""
    m = child.metrics
    parent.tool_calls += m.tool_calls
    parent.input_tokens += m.input_tokens
    parent.output_tokens += m.output_tokens
    agents = dict(parent.agents)  # a new mapping: a copied Metrics never shares it
    for name, share in child.metrics_by_agent.items():
        agents[name] = merge_metrics(agents[name], share) if name in agents else share
    parent.agents = agents
