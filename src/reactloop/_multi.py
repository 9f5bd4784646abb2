"""Agents that work together: an agent called as a tool (``agent.as_tool()``) and handoffs
(``Agent(handoffs=[...])``).

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

A handoff is different: a ``transfer_to_<name>`` tool hands the conversation itself to
another agent, which continues the same run (same id, history, budget and deadline) with its
own instructions, tools and model; the loop switches at the end of the batch
(:class:`~reactloop._spec.HandoffTarget`). Which agent speaks is read from the history — the
last successful transfer — so a session's next turn starts with the agent that spoke last,
in any process, with nothing stored beside the messages.

The agent hands in a function that opens its run (``open_run(task, stream)``), so this module
never imports the agent and the one-way import rule holds.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from reactloop import _nesting
from reactloop._spec import HandoffTarget, HistoryFilter, RunSpec
from reactloop.errors import UserError
from reactloop.events import Event, RunEndEvent
from reactloop.messages import Message
from reactloop.result import Metrics, RunResult, RunState, merge_metrics
from reactloop.tools._registry import WithRun
from reactloop.tools._tool import ApprovalRule, Tool

__all__ = ["DEFAULT_MAX_DEPTH", "TRANSFER_PREFIX", "AgentTool", "Handoff", "OpenRun", "absorb",
           "agent_tool", "handed_to", "handoff_tools", "reachable", "speaking"]

TRANSFER_PREFIX = "transfer_to_"
"""Handoff tools are named ``transfer_to_<agent name>``."""

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


# -- handoffs ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Handoff:
    """A handoff with options, for ``Agent(handoffs=[...])`` (a bare agent is a handoff with
    none)::

        support = Agent(model, handoffs=[billing, Handoff(refunds, history=latest_only)])

    where ``latest_only(messages)`` returns the part of the history ``refunds`` should see.

    Args:
        agent: the :class:`~reactloop.Agent` the conversation is handed to.
        history: ``fn(messages) -> messages``: what the agent sees of the history when it
            takes over (for the rest of that run; the stored conversation keeps everything).
            Keep each tool call with its result.
        description: what the model is told about the ``transfer_to_…`` tool (default: from
            the agent's instructions).
    """

    agent: Any
    history: HistoryFilter | None = None
    description: str | None = None


def handoff_tools(handoffs: Iterable[Any]) -> tuple[list[Tool], dict[str, HandoffTarget]]:
    """The ``transfer_to_<name>`` tools for ``Agent(handoffs=...)`` and their targets."""
    tools: list[Tool] = []
    targets: dict[str, HandoffTarget] = {}
    for h in handoffs:
        h = h if isinstance(h, Handoff) else Handoff(h)
        spec = getattr(h.agent, "spec", None)
        if not isinstance(spec, RunSpec):
            raise UserError(f"handoffs take agents (or Handoff(agent, ...)), got {h.agent!r}")
        if h.history is not None and not callable(h.history):
            raise UserError(f"Handoff(history=...) must be fn(messages) -> messages, got "
                            f"{h.history!r}")
        name = TRANSFER_PREFIX + spec.name
        if name in targets:
            raise UserError(f"two handoffs go to agents named {spec.name!r}: give each agent "
                            "its own Agent(name=...)")
        targets[name] = HandoffTarget(spec.name, spec, h.history)
        tools.append(_transfer_tool(name, spec.name, h.description
                                    or _describe_handoff(spec.name, getattr(h.agent,
                                                                            "instructions", ""))))
    return tools, targets


def _transfer_tool(name: str, agent_name: str, description: str) -> Tool:
    async def transfer() -> str:
        return f"Transferred to {agent_name}: the {agent_name} agent answers from here."

    return Tool(transfer, name=name, description=description, origin=f"handoff to {agent_name!r}",
                inline=True)


def _describe_handoff(agent_name: str, instructions: str) -> str:
    first = instructions.strip().split("\n\n", 1)[0].strip()
    if len(first) > 300:
        first = first[:297].rstrip() + "..."
    lead = (f"Hand the conversation to the {agent_name} agent, which takes over and answers "
            "the user from here.")
    return f"{lead} {first}" if first else lead


def speaking(spec: RunSpec, messages: Sequence[Message]) -> RunSpec:
    """The spec of the agent that speaks after ``messages``: the target of the last
    successful handoff among the agents reachable from ``spec``'s, else ``spec``'s own.
    That agent's instructions, tools, model and budget; the callbacks stay ``spec``'s (they
    belong to the agent the caller ran)."""
    if not spec.handoffs:
        return spec
    targets = reachable(spec)
    for m in reversed(messages):
        if m.role == "tool" and not m.is_error and m.name in targets:
            target = targets[m.name or ""].spec
            return target if target is spec else replace(target, callbacks=spec.callbacks)
    return spec


def reachable(spec: RunSpec) -> Mapping[str, HandoffTarget]:
    """Every handoff target reachable from ``spec`` by transfer tool name (the first found
    when names repeat), ``spec`` itself included (a specialist may hand back)."""
    out = {TRANSFER_PREFIX + spec.name: HandoffTarget(spec.name, spec)}
    todo = [spec]
    while todo:
        for name, target in todo.pop().handoffs.items():
            if name not in out:
                out[name] = target
                todo.append(target.spec)
    return out


def handed_to(spec: RunSpec, target: HandoffTarget) -> RunSpec:
    """The spec a run continues with after handing off to ``target``: the target's, within
    the run's iteration budget and with the run's callbacks."""
    return replace(target.spec, max_iterations=spec.max_iterations, callbacks=spec.callbacks)
