"""Small parts of one loop iteration (``reactloop._loop``): the tool calls as the history
keeps them, the run's retry listeners, and what its tool batches set in the context."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from reactloop._redact import redact
from reactloop.events import RetryEvent
from reactloop.messages import ToolCall
from reactloop.models._retry import RetryListener, retry_listener
from reactloop.run_context import RunContext
from reactloop.tools._source import CallerRun, caller_run
from reactloop.tools._tool import Tool

__all__ = ["NOTHING", "Nothing", "RetryReporter", "RunCaller", "RunListener", "enter_batch",
           "leave_batch", "leave_run", "with_ids"]


def with_ids(run_id: str, k: int, calls: Sequence[ToolCall]) -> tuple[ToolCall, ...]:
    """Every call of iteration ``k`` gets a string name and an id unique in the response
    (providers may repeat or omit ids): ``call_<run>_<k>_<i>`` where one is missing."""
    if len(calls) == 1:  # the common response: one call, which needs no id or name made
        c = calls[0]
        if type(c.name) is str:
            if c.id:
                return calls if type(calls) is tuple else (c,)
            return (ToolCall(c.name, c.arguments, f"call_{run_id[:8]}_{k}_0", c.provider_details),)
    out: list[ToolCall] = []
    used: set[str] = set()
    prefix = f"call_{run_id[:8]}_{k}_"
    for i, c in enumerate(calls):
        if not isinstance(c.name, str):  # providers can send anything: keep it printable
            c = ToolCall(str(c.name), c.arguments, c.id, c.provider_details)  # type: ignore[unreachable]
        if not c.id or c.id in used:
            c = ToolCall(c.name, c.arguments, f"{prefix}{i}", c.provider_details)
        used.add(c.id or "")
        out.append(c)
    return tuple(out)


class RetryReporter:
    """A run's retry listener (``Runtime.call_model(on_retry=...)``): each retry an adapter
    makes becomes a ``retry`` event. One object per run, made once (a bound method of the
    loop would be a new object per model call, and a reference cycle if kept)."""

    __slots__ = ("calling", "ctx")

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.calling = False
        """The loop awaits its model itself now (:class:`RunListener`)."""

    def __call__(self, attempt: int, wait: float, error: BaseException) -> None:
        self.ctx.emit(RetryEvent(self.ctx.run_id, attempt, wait, redact(str(error))))

    def listen(self) -> RunListener:
        """Set the run's listener in the current context, once per run (see
        :class:`RunListener`); :meth:`RunListener.close` sets back what was there."""
        listener = RunListener(self, retry_listener.get())
        retry_listener.set(listener)
        return listener


class RunListener:
    """The retry listener a run on :class:`~reactloop.runtime.LocalRuntime` sets once, for
    the whole run, when the loop awaits the model itself (no ``LocalRuntime.call_model``
    coroutine, and no new context mapping per call that would outlive the iteration, issue
    28). Retries during the run's own model calls (``RetryReporter.calling``) become its
    ``retry`` events; any other retry in the run's task meanwhile (a tool that calls a model
    itself) goes to the listener that was there before the run, as when the listener was set
    around each call only."""

    __slots__ = ("outer", "reporter")

    def __init__(self, reporter: RetryReporter, outer: RetryListener | None) -> None:
        self.reporter, self.outer = reporter, outer

    def __call__(self, attempt: int, wait: float, error: BaseException) -> None:
        if self.reporter.calling:
            self.reporter(attempt, wait, error)
        elif self.outer is not None:
            self.outer(attempt, wait, error)

    def close(self) -> None:
        """The run ends: the listener before it again (where this one is still set)."""
        self.reporter.calling = False
        if retry_listener.get() is self:
            retry_listener.set(self.outer)


def enter_batch(loop: Any, count_usage: Callable[[int, int], None],
                add_tools: Callable[[Sequence[Tool]], None],
                call_model: Callable[[Any, Any], Awaitable[Any]]) -> CallerRun:
    """The run's :class:`CallerRun` for a tool batch (``loop``: the ``_Loop``), active:
    what tool sources may use (MCP sampling) and the frame sub-runs find the run by.
    Without a deadline one per run (per speaking agent), set in the context once and
    inactive between batches: no batch leaves a new context mapping alive through the next
    model call (issue 28). With one (the time left), or streaming (a batch may run in a task
    of its own while the stream's reader goes on), a new one per batch, set back after."""
    caller = caller_run.get()
    per_batch = loop.deadline is not None or loop.stream
    if (caller is None or caller.frame is not loop.frame or caller.model is not loop.spec.model
            or per_batch):
        outer = caller.outer if caller is not None and caller.frame is loop.frame else caller
        caller = (CallerRun(loop.spec.model, loop.ctx.run_id, loop.frame.emit_custom,
                            count_usage, add_tools,
                            None if loop.deadline is None else loop.deadline - loop.rt.monotonic(),
                            call_model, loop.frame, outer) if per_batch
                  else RunCaller(loop.frame, loop.spec.model, loop.rt, loop.on_retry, outer))
        caller_run.set(caller)
    caller.active = True
    return caller


class RunCaller(CallerRun):
    """The :class:`CallerRun` a run makes once (:func:`enter_batch`): what it does are its
    own methods, not four bound methods kept for the whole run."""

    __slots__ = ("on_retry", "rt", "task")

    def __init__(self, frame: Any, model: Any, rt: Any, on_retry: RetryReporter,
                 outer: CallerRun | None) -> None:  # no CallerRun.__init__: no callables
        self.active, self.outer, self.frame, self.model = True, outer, frame, model
        self.run_id, self.time_left = frame.ctx.run_id, None
        self.rt, self.on_retry = rt, on_retry
        self.task = asyncio.current_task()  # the run's: a task one of its tools starts is not

    def emit(self, name: str, data: Any = None) -> None:
        self.frame.emit_custom(name, data)

    def count_usage(self, input_tokens: int, output_tokens: int) -> None:
        m = self.frame.ctx.metrics
        m.input_tokens += input_tokens
        m.output_tokens += output_tokens

    def add_tools(self, tools: Sequence[Tool]) -> None:
        self.frame.ctx.add_tools(tools)

    async def call_model(self, model: Any, request: Any) -> Any:
        return await self.rt.call_model(model, request, on_retry=self.on_retry)


def leave_batch(loop: Any, caller: CallerRun) -> None:
    caller.active = False
    if loop.deadline is not None or loop.stream:  # a caller per batch: what was there before
        caller_run.set(caller.outer)


def leave_run(frame: object) -> None:
    """The run (its ``_nesting.Frame``) ends: what :data:`caller_run` held before it again
    (where the run's is still set)."""
    caller = caller_run.get()
    if caller is not None and caller.frame is frame:
        caller_run.set(caller.outer)


class Nothing:
    """``nullcontext()`` for ``async with`` whose exit is no bound method: a run that holds
    it open the whole run (no tool source, no handoff) keeps no object for it (issue 28)."""

    __slots__ = ()

    @staticmethod
    async def __aenter__() -> None:
        return None

    @staticmethod
    async def __aexit__(*exc: object) -> None:
        return None


NOTHING = Nothing()
