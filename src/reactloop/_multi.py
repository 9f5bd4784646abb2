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
another agent, which continues the same run (same id, history and deadline) with its own
instructions, tools, model and iteration budget (counted from the handoff; handoffs cannot
form a cycle, agents being immutable, so a run stays bounded); the loop switches at the end of
the batch (:class:`~reactloop._spec.HandoffTarget`). Which agent speaks is read from the history — the
last successful transfer — so a session's next turn starts with the agent that spoke last,
in any process, with nothing stored beside the messages.

A sub-agent that waits for a person (an approval, or the answer to its question) makes the
whole run wait: the loop holds the agent call with the sub-run's saved state in the history
(``reactloop.approvals``, ``"nested"``); decisions and answers are recorded there, and the call
runs again, continuing the sub-run.

The agent hands in a function that opens its run (``open_run(task, stream, saved)``), so this
module never imports the agent and the one-way import rule holds.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar

from reactloop import _nesting
from reactloop._spec import HandoffTarget, HistoryFilter, RunSpec
from reactloop.approvals import APPROVALS_KEY, ASKS, NESTED, Decision, arguments_hash
from reactloop.errors import UserError
from reactloop.events import Event, RunEndEvent
from reactloop.messages import Message
from reactloop.result import (
    Metrics,
    RunResult,
    RunState,
    ToolResult,
    combine_metrics,
    merge_metrics,
)
from reactloop.tools._registry import WithRun
from reactloop.tools._tool import _NAME_RE, ApprovalRule, Tool, ToolContext

__all__ = [
    "DEFAULT_MAX_DEPTH", "TRANSFER_PREFIX", "AgentTool", "Handoff", "OpenRun", "absorb",
    "agent_tool", "answer_question", "check_sub_agents", "filtered_history",
    "hand_over_usage", "handed_to", "handoff_tools", "hold_calls", "reachable", "speaking",
    "waiting_subruns",
]

TRANSFER_PREFIX = "transfer_to_"
"""Handoff tools are named ``transfer_to_<agent name>``."""

DEFAULT_MAX_DEPTH = 4
"""How deep agents called as tools may nest by default (a top run is depth 0)."""

OpenRun = Callable[[str, bool, "Mapping[str, Any] | None"], AsyncGenerator[Event, None]]
"""``open_run(task, stream, saved)``: the sub-agent's run on ``task`` as events (``run_end``
last), or the continuation of its ``saved`` run (decisions recorded in it)."""

_FAILED = {RunState.TIMED_OUT: "ran out of time", RunState.ERROR: "failed",
           RunState.CANCELLED: "was cancelled"}


class AgentTool(Tool):
    """A tool that runs an agent: the loop streams its sub-run's events live; a durable
    runtime runs the agent (``.agent``) inside the parent's workflow."""

    nests_runs: ClassVar[bool] = True
    agent: Any = None
    """The agent the tool runs."""


def agent_tool(agent_name: str, open_run: OpenRun, *, name: str | None = None,
               description: str | None = None, instructions: str = "",
               max_depth: int = DEFAULT_MAX_DEPTH, timeout: float | None = None,
               requires_approval: ApprovalRule = False, agent: Any = None) -> Tool:
    """A :class:`Tool` that runs an agent on the ``task`` the model gives it."""
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1:
        raise UserError(f"as_tool(max_depth=...) must be an integer of at least 1, got "
                        f"{max_depth!r}")
    tool_name = name or agent_name
    if name and not _NAME_RE.match(name):
        raise UserError(f"as_tool(name={name!r}) is not a valid tool name: use 1-64 "
                        f"characters from [A-Za-z0-9_-], e.g. as_tool(name={_fitting(name)!r})")
    if not _NAME_RE.match(tool_name):
        raise UserError(f"agent {agent_name!r} cannot be a tool's name (tools take 1-64 "
                        "characters from [A-Za-z0-9_-]): pass as_tool(name=...), e.g. "
                        f"as_tool(name={_fitting(agent_name)!r}), or rename the agent "
                        "(Agent(name=...))")
    summary = description or _describe(agent_name, instructions)

    async def run_agent(task: str, context: ToolContext) -> WithRun:
        """Run the agent on a task.

        Args:
            task: what the agent should do, with everything it needs to know (it sees
                nothing else of this conversation)
        """
        return await _subrun(agent_name, open_run, task, max_depth, context.call_id)

    out = AgentTool(run_agent, name=tool_name, description=summary, timeout=timeout,
                    origin=f"agent {agent_name!r}", requires_approval=requires_approval)
    out.agent = agent
    return out


def check_sub_agents(caller: str, tools: Iterable[Tool]) -> None:
    """Refuse an agent called as a tool that has its caller's name: their usage shares
    (``Metrics.agents``, by name) would merge into one."""
    for t in tools:
        sub = getattr(t, "agent", None) if isinstance(t, AgentTool) else None
        if sub is not None and getattr(sub, "name", None) == caller:
            raise UserError(f"tool {t.name!r} runs an agent named like its caller (both named "
                            f"{caller!r}): give one of them its own Agent(name=...), so each "
                            "has its own share of the usage")


def _fitting(name: str) -> str:
    """A tool-name-safe version of an agent name, to suggest."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_")[:40] or "helper"


def _describe(agent_name: str, instructions: str) -> str:
    first = instructions.strip().split("\n\n", 1)[0].strip()
    if len(first) > 300:
        first = first[:297].rstrip() + "..."
    lead = f"Hand a task to the {agent_name} agent; it works on it and answers."
    return f"{lead} {first}" if first else lead


async def _subrun(agent_name: str, open_run: OpenRun, task: str, max_depth: int,
                  call_id: str) -> WithRun:
    frame = _nesting.current.get()
    depth = 1 if frame is None else frame.depth + 1
    if depth > max_depth:
        return WithRun(None, None, f"The {agent_name} agent was not run: agents called as "
                                   f"tools nest at most {max_depth} deep here (this call "
                                   f"would be depth {depth}). Do the task yourself. "
                                   "(For developers: as_tool(max_depth=...) sets the "
                                   "limit.)")
    result: RunResult[Any] | None = None
    saved = None if frame is None else frame.resumes.get(call_id)  # decided: continue it
    before = (None if saved is None or ANSWER in saved  # an answer starts a new turn
              else Metrics.from_dict(saved.get("metrics") or {}))
    async with aclosing(open_run(task, frame is not None and frame.stream, saved)) as events:
        async for event in events:
            if isinstance(event, RunEndEvent) and event.parent_run_id is None:  # its own
                result = event.result
                if frame is not None:
                    result.parent_run_id = frame.ctx.run_id
                    absorb(frame.ctx.metrics, result, before)
                    frame.held = frame.held or result.state in _WAITING
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


def absorb(parent: Metrics, child: RunResult[Any], before: Metrics | None = None) -> None:
    """Add a sub-run's usage to its parent's totals and per-agent breakdown (for a sub-run
    that continues a saved one: only what it added since ``before``)."""
    m = child.metrics
    shares = child.metrics_by_agent
    if before is not None:
        m = _minus(m, before)
        earlier = _by_agent(child.agent, before)
        shares = {n: _minus(s, earlier[n]) if n in earlier else s for n, s in shares.items()}
    total = combine_metrics(parent, m, shared_only=True)
    for f in fields(Metrics):  # in place: the parent's Metrics object is the run's
        if f.name != "agents":
            setattr(parent, f.name, getattr(total, f.name))
    agents = dict(parent.agents)  # a new mapping: a copied Metrics never shares it
    for name, share in shares.items():
        agents[name] = merge_metrics(agents[name], share) if name in agents else share
    parent.agents = agents


def hand_over_usage(metrics: Metrics, agent: str, iterations: int, elapsed: float) -> None:
    """At a handoff: the outgoing ``agent``'s own usage since the last handoff (``metrics``
    less every share already in ``metrics.agents``) becomes its share there, with its
    ``iterations`` and ``elapsed`` time, so ``RunResult.metrics_by_agent`` gives the agent
    that answers only what it did."""
    own = replace(metrics, agents={}, iterations=iterations, execution_time=elapsed)
    for share in metrics.agents.values():
        own = combine_metrics(own, share, -1, shared_only=True)
    agents = dict(metrics.agents)  # a new mapping: a copied Metrics never shares it
    agents[agent] = merge_metrics(agents[agent], own) if agent in agents else own
    metrics.agents = agents


def _minus(a: Metrics, b: Metrics) -> Metrics:
    return combine_metrics(a, b, -1)


def _by_agent(agent: str, metrics: Metrics) -> dict[str, Metrics]:
    return RunResult("", RunState.COMPLETED, (), metrics, (), agent=agent).metrics_by_agent


# -- sub-runs that wait for a person ----------------------------------------------------------
_WAITING = (RunState.WAITING_FOR_APPROVAL, RunState.WAITING_FOR_USER)
ANSWER = "answer"
"""The key of a saved sub-run (``"nested"``) holding the user's answer to its question."""


def waiting_subruns(results: Sequence[ToolResult]) -> dict[str, RunResult[Any]]:
    """The agent calls of a batch whose sub-run waits for a person (an approval, or the answer
    to its question), by call id."""
    return {r.call_id: r.run for r in results if r.run is not None and r.run.state in _WAITING}


def answer_question(messages: Sequence[Message], answer: str) -> list[Message] | None:
    """``messages`` with ``answer`` given to the sub-agent whose question holds its call (the
    call then counts as decided: resuming continues the sub-run with the answer), or None
    when no sub-agent asked."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role == "user" and not m.metadata.get("kind"):
            return None
        entries = m.metadata.get(APPROVALS_KEY) if m.role == "assistant" else None
        if not isinstance(entries, Mapping):
            continue
        for cid, entry in entries.items():
            if isinstance(entry, Mapping) and entry.get(ASKS) is not None \
                    and entry.get("decision") is None:
                new = {**entry, "decision": Decision(cid, str(entry.get("hash", "")),
                                                     True).to_dict(),
                       NESTED: {**entry[NESTED], ANSWER: answer}}
                out = list(messages)
                out[i] = replace(m, metadata={**m.metadata,
                                              APPROVALS_KEY: {**entries, cid: new}})
                return out
    return None


def hold_calls(messages: Sequence[Message], held: Mapping[str, RunResult[Any]], run_id: str
               ) -> list[Message]:
    """``messages`` with the held agent calls waiting: the assistant message that made them
    gets an approvals entry per call holding the sub-run's saved state (and the question, for
    a sub-agent that asked the user)."""
    out = list(messages)
    for i in range(len(out) - 1, -1, -1):
        m = out[i]
        if m.role != "assistant" or not any(c.id in held for c in m.tool_calls):
            continue
        entries = dict(m.metadata.get(APPROVALS_KEY) or {})
        for c in m.tool_calls:
            if c.id is not None and c.id in held:
                run = held[c.id]
                entries[c.id] = {"hash": arguments_hash(c.name, c.arguments), "decision": None,
                                 "run_id": run_id, NESTED: run.context.to_dict()}
                if run.state is RunState.WAITING_FOR_USER:
                    entries[c.id][ASKS] = run.text
        out[i] = replace(m, metadata={**m.metadata, APPROVALS_KEY: entries})
        break
    return out


# -- handoffs ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Handoff:
    """A handoff with options, for ``Agent(handoffs=[...])`` (a bare agent is a handoff with
    none)::

        support = Agent(model, handoffs=[billing, Handoff(refunds, history=latest_only)])

    where ``latest_only(messages)`` returns the part of the history ``refunds`` should see.

    Args:
        agent: the :class:`~reactloop.Agent` the conversation is handed to.
        history: ``fn(messages) -> messages``: what the agent goes on with of the history
            before the handoff (the transfer call itself is kept). The run's history is then
            that — as after compaction, a session stores it so. Keep each tool call with its
            result.
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
        if not _NAME_RE.match(name):
            raise UserError(f"agent {spec.name!r} cannot be handed off to: its tool {name!r} is not "
                            "a valid tool name (1-64 characters from [A-Za-z0-9_-]); rename "
                            f"the agent, e.g. Agent(name={_fitting(spec.name)!r})")
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

    # internal: it only changes who speaks in this run (never gated, always offered)
    return Tool(transfer, name=name, description=description, origin=f"handoff to {agent_name!r}",
                inline=True, internal=True)


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


def filtered_history(messages: Sequence[Message], keep: HistoryFilter) -> list[Message]:
    """The history a handoff's target goes on with: ``keep`` applied to what came before the
    batch that handed off; that batch (the transfer call and its results) stays whole, so the
    next turn still knows who speaks."""
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=0)
    return [*keep(list(messages[:last])), *messages[last:]]


def handed_to(spec: RunSpec, target: HandoffTarget, iteration: int) -> RunSpec:
    """The spec a run continues with after handing off to ``target`` at ``iteration``: the
    target's, its own ``max_iterations`` counted from there, with the run's callbacks."""
    return replace(target.spec, max_iterations=iteration + target.spec.max_iterations,
                   callbacks=spec.callbacks)
