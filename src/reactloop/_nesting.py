"""Where a tool runs: the run that is executing it (:class:`Frame`), for runs nested in runs.

The loop sets the frame around each tool batch (in :data:`~reactloop.tools._source.caller_run`,
read through :data:`current`), so a tool that starts a run of its own
(an agent called as a tool, ``reactloop._multi``) finds the run that called it: it sends the
sub-run's events into that run's stream, adds the sub-run's usage to its metrics and knows how
deep it is. A context variable, because tools run in the batch's task or in tasks it starts
(which copy the context) — never a global, so concurrent runs never see each other's frames.

This module sits below the loop and imports nothing that imports it back.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextvars import ContextVar
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from reactloop.tools._source import active_caller

if TYPE_CHECKING:
    from reactloop.events import Event
    from reactloop.messages import ToolCall
    from reactloop.run_context import RunContext
    from reactloop.tools._registry import ToolRegistry

__all__ = ["Frame", "current", "live", "nests", "runtime_for"]


_NO_RESUMES: Mapping[str, Mapping[str, Any]] = MappingProxyType({})


class Frame:
    """The run executing the current tool batch."""

    __slots__ = ("agent", "ctx", "depth", "held", "resumes", "stream", "wake")

    def __init__(self, ctx: RunContext, agent: str, depth: int, stream: bool) -> None:
        self.ctx = ctx
        """The run's context: its events queue (``pending``) and its metrics."""
        self.agent = agent
        """The name of the run's agent."""
        self.depth = depth
        """0 for a top run, 1 for an agent it called as a tool, and so on."""
        self.stream = stream
        """Whether the run streams (its sub-runs then stream too: text deltas reach the
        consumer)."""
        self.held = False
        """A sub-run of the current batch ended waiting for approval (the loop holds its
        call; one attribute test per batch otherwise)."""
        self.resumes: Mapping[str, Mapping[str, Any]] = _NO_RESUMES
        """Saved sub-runs to continue, by the id of the agent call that runs them again
        (a resumed run whose sub-agent waited for approval)."""
        self.wake: Callable[[], None] | None = None
        """Set by the loop while it waits for a batch with sub-runs: called after a sub-run's
        event is queued, so the loop yields it at once instead of after the batch."""

    def emit(self, event: Event) -> None:
        """Queue a sub-run's event in this run's stream."""
        self.ctx.pending.append(event)
        if self.wake is not None:
            self.wake()

    def emit_custom(self, name: str, data: Any = None) -> None:
        """Queue a ``custom`` event, yielded at once when the batch streams live (an MCP
        server's progress while its tool runs)."""
        from reactloop.events import CustomEvent

        self.emit(CustomEvent(self.ctx.run_id, name, data))


class _Current:
    """``current.get()``: the frame the batch's :class:`CallerRun` carries (one context
    variable set per batch instead of two)."""

    __slots__ = ()

    @staticmethod
    def get() -> Frame | None:
        caller = active_caller()
        return None if caller is None else caller.frame


current = _Current()
"""The frame of the run whose tool batch is executing (None outside any batch)."""

runtime_for: ContextVar[Callable[[Any], Any] | None] = ContextVar("reactloop_subruntime",
                                                                  default=None)
"""Set by a runtime that runs sub-agents itself (a Temporal workflow runs them inside the
parent's workflow): ``runtime_for(agent)`` is the runtime the sub-agent's run uses."""


def nests(tools: ToolRegistry, calls: Sequence[ToolCall]) -> bool:
    """Whether a call runs an agent (``agent.as_tool()``) or reports while it runs (an MCP
    tool: ``live_events``), whose events stream live."""
    for c in calls:
        t = tools.get(c.name)
        if getattr(t, "nests_runs", False) or getattr(t, "live_events", False):
            return True
    return False


async def live(batch: asyncio.Future[Any], frame: Frame) -> AsyncIterator[Event]:
    """Wait for a tool batch running as a task, yielding the events its sub-runs queue on
    ``frame`` meanwhile (a sub-agent's steps show as they happen, not after the batch).
    Ending early (cancelled, stream closed) cancels the batch and waits for it to record."""
    woken = asyncio.Event()
    frame.wake = woken.set
    try:
        while not batch.done():
            waiter = asyncio.ensure_future(woken.wait())
            try:
                await asyncio.wait((batch, waiter), return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
            woken.clear()
            for ev in frame.ctx.flush():
                yield ev
    finally:
        frame.wake = None
        if not batch.done():
            batch.cancel()
            await asyncio.wait((batch,))
