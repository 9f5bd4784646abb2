"""Tool sources: things that provide tools for the duration of a run (MCP servers, …)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from typing import Any, Protocol, runtime_checkable

from reactloop.tools._tool import Tool

__all__ = ["CallerRun", "Emit", "ToolSource", "active_caller", "caller_run"]

Emit = Callable[[str, Any], None]
"""``emit(name, data)`` sends a ``custom`` event into the run's event stream."""


@runtime_checkable
class ToolSource(Protocol):
    """Provides tools while open. The loop opens every source when a run (or a session)
    starts and closes it when that ends, also on errors and cancellation."""

    name: str

    def open(self, emit: Emit) -> AbstractAsyncContextManager[Sequence[Tool]]:
        """An async context manager whose value is the tools to register."""
        ...


class CallerRun:
    """What a tool source may use of the run whose tool batch is calling it: an MCP server
    that asks the client's model to generate (MCP sampling) is answered with the run's model,
    within the run's deadline, its usage counted in the run's metrics.

    The loop sets :data:`caller_run` for its tool batches; tasks a batch starts copy it.
    Read it with :func:`active_caller`: a run without a deadline sets its one ``CallerRun``
    once and marks it :attr:`active` during its batches only (a context variable set and
    reset per batch left a new context mapping alive through the next model call, issue 28).
    A runtime that runs tools elsewhere (a Temporal worker) has none: sources then fall back
    to what they were configured with."""

    __slots__ = ("__weakref__", "active", "add_tools", "call_model", "count_usage", "emit", "frame",
                 "model", "outer", "run_id", "time_left")

    def __init__(self, model: Any, run_id: str, emit: Emit,
                 count_usage: Callable[[int, int], None],
                 add_tools: Callable[[Sequence[Tool]], None],
                 time_left: float | None,
                 call_model: Callable[[Any, Any], Awaitable[Any]] | None = None,
                 frame: Any = None, outer: CallerRun | None = None) -> None:
        self.active = True
        """A batch of the run is executing (between them: the run's ``outer`` is the caller)."""
        self.outer = outer
        """What :data:`caller_run` held before the run set this one."""
        self.frame = frame
        """The run's ``reactloop._nesting.Frame`` (what sub-runs started by its tools read
        through ``_nesting.current``: one context variable for both)."""
        self.model = model
        """The run's model (a ``reactloop.models.Model``)."""
        self.call_model = call_model
        """``await call_model(model, request)`` through the run's runtime (so the call is
        traced and observed like the run's own); None: call the model directly."""
        self.run_id = run_id
        self.emit = emit
        """Queues a ``custom`` event in the run's stream."""
        self.count_usage = count_usage
        """``count_usage(input_tokens, output_tokens)`` adds to the run's metrics."""
        self.add_tools = add_tools
        """Offers more tools from the next iteration on (appended: the prefix changes once)."""
        self.time_left = time_left
        """Seconds left before the run's deadline when the batch started (None: none)."""

    def with_emit(self, emit: Emit) -> CallerRun:
        """The same run with events going through ``emit`` (a runtime wrapper that watches
        them as they happen, e.g. the CLI's progress line)."""
        return CallerRun(self.model, self.run_id, emit, self.count_usage, self.add_tools,
                         self.time_left, self.call_model, self.frame)


caller_run: ContextVar[CallerRun | None] = ContextVar("reactloop_caller_run", default=None)
"""The run whose tool batch is executing, or one set for a run and inactive between its
batches: read it with :func:`active_caller`."""


def active_caller() -> CallerRun | None:
    """The run whose tool batch is executing (None outside any batch), or, in a task one of
    its tools started, the run that started it."""
    caller = caller_run.get()
    if caller is None or caller.active:
        return caller
    try:  # a task a tool started keeps its run's caller, active or not (as before issue 28)
        task = asyncio.current_task()
    except RuntimeError:  # no event loop in this thread
        task = None
    while caller is not None and not caller.active and getattr(caller, "task", task) is task:
        caller = caller.outer  # the run itself between its batches (a callback, say)
    return caller
