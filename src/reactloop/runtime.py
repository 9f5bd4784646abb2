"""The runtime seam: the one way the loop reaches the world.

The loop is deterministic given what it receives: it never reads a clock, makes an id,
sleeps, starts a thread or does I/O itself. Model calls, tool batches, tool sources (MCP),
the clock, ids and sleeping all go through a :class:`Runtime`. :class:`LocalRuntime` (the
default) does them in this process; a workflow engine (``reactloop.temporal``) implements the
same interface with activities and workflow time, and runs the very same loop.
:class:`RuntimeWrapper` is the base of runtimes that watch or change another one's calls
(tracing, the CLI's progress line): it passes everything to ``inner``, and a subclass overrides
only what it observes.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from reactloop.messages import ModelRequest, ModelResponse, TextDelta, ToolCall
from reactloop.models._base import Model
from reactloop.models._retry import retry_listener
from reactloop.result import ToolResult
from reactloop.tools._registry import ToolRegistry
from reactloop.tools._source import Emit, ToolSource
from reactloop.tools._tool import Tool

__all__ = ["LocalRuntime", "OnRetry", "Runtime", "RuntimeWrapper", "ToolBatch"]

OnRetry = Callable[[int, float, BaseException], None]
"""``on_retry(attempt, wait_seconds, error)``: a model call is about to be retried."""


class ToolBatch:
    """One response's tool calls and what executing them needs (all but ``calls`` is
    configuration or the run's state at the time of the batch)."""

    __slots__ = ("add_tools", "calls", "default_timeout", "deps", "done", "emit",
                 "max_parallel", "registry", "run_id", "state")

    def __init__(self, calls: Sequence[ToolCall], registry: ToolRegistry, run_id: str, *,
                 default_timeout: float | None, max_parallel: int | None, deps: Any,
                 state: dict[str, Any], emit: Emit,
                 add_tools: Callable[[Sequence[Tool]], None]) -> None:
        self.calls, self.registry, self.run_id = calls, registry, run_id
        self.default_timeout, self.max_parallel, self.deps = default_timeout, max_parallel, deps
        self.state, self.emit, self.add_tools = state, emit, add_tools
        self.done: list[ToolResult | None] = [None] * len(calls)
        """Filled as calls finish (so a cancelled batch still reports what completed)."""


class Runtime(Protocol):
    """Everything non-deterministic a run needs."""

    def now(self) -> float:
        """Wall-clock time (Unix seconds), for timestamps."""
        ...

    def monotonic(self) -> float:
        """A monotonic clock in seconds, for durations and deadlines."""
        ...

    def new_id(self) -> str:
        """A fresh id (run ids, call ids the provider did not give)."""
        ...

    async def sleep(self, seconds: float) -> None:
        ...

    async def call_model(self, model: Model, request: ModelRequest, *,
                         on_retry: OnRetry) -> ModelResponse:
        """Send one request and return the response. Errors propagate (the loop ends the run
        ``ERROR``); ``on_retry`` is told about each retry the adapter makes."""
        ...

    def stream_model(self, model: Model, request: ModelRequest, *, on_retry: OnRetry
                     ) -> AsyncIterator[TextDelta | ModelResponse]:
        """Like :meth:`call_model`, yielding ``TextDelta`` pieces as they arrive and then
        one ``ModelResponse``. A runtime that cannot stream yields only the response."""
        ...

    async def run_tools(self, batch: ToolBatch) -> list[ToolResult]:
        """Execute a batch; one result per call, in call order. Never raises for tool
        failures (they are error results)."""
        ...

    def open_source(self, source: ToolSource, emit: Emit
                    ) -> AbstractAsyncContextManager[Sequence[Tool]]:
        """Open a tool source (an MCP server) for the run; its value is the tools."""
        ...


class LocalRuntime:
    """The default runtime: everything in this process, on this event loop."""

    __slots__ = ()

    # the clocks themselves: one call per read, not two (read every iteration, issue 28)
    now = staticmethod(time.time)
    monotonic = staticmethod(time.perf_counter)

    def new_id(self) -> str:
        return os.urandom(6).hex()  # 12 random hex digits, as uuid4().hex[:12] (no uuid import)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def call_model(self, model: Model, request: ModelRequest, *,
                         on_retry: OnRetry) -> ModelResponse:
        # set back, not reset: no token held while the model is awaited (issue 28)
        outer = retry_listener.get()
        retry_listener.set(on_retry)
        try:
            return await model.request(request)
        finally:
            retry_listener.set(outer)

    async def stream_model(self, model: Model, request: ModelRequest, *, on_retry: OnRetry
                           ) -> AsyncIterator[TextDelta | ModelResponse]:
        token = retry_listener.set(on_retry)
        try:
            async for item in model.stream(request):
                yield item
        finally:
            retry_listener.reset(token)

    async def run_tools(self, batch: ToolBatch) -> list[ToolResult]:
        return await batch.registry.execute(
            batch.calls, run_id=batch.run_id, default_timeout=batch.default_timeout,
            max_parallel=batch.max_parallel, deps=batch.deps, emit=batch.emit,
            add_tools=batch.add_tools, state=batch.state, done=batch.done)

    def open_source(self, source: ToolSource, emit: Emit
                    ) -> AbstractAsyncContextManager[Sequence[Tool]]:
        return source.open(emit)


class RuntimeWrapper:
    """A runtime around another one: every call goes to ``inner`` unchanged.

    Subclass it to observe or change some of the calls and override only those, e.g. a
    runtime that times model calls overrides :meth:`call_model` and :meth:`stream_model` and
    calls ``self.inner``'s; the clock, ids, sleeping, tools and tool sources pass through.
    Wrappers nest (``Traced(Observed(LocalRuntime()))``).

    Args:
        inner: the runtime that does the work.
    """

    __slots__ = ("inner",)

    def __init__(self, inner: Runtime) -> None:
        self.inner = inner

    def now(self) -> float:
        return self.inner.now()

    def monotonic(self) -> float:
        return self.inner.monotonic()

    def new_id(self) -> str:
        return self.inner.new_id()

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)

    async def call_model(self, model: Model, request: ModelRequest, *,
                         on_retry: OnRetry) -> ModelResponse:
        return await self.inner.call_model(model, request, on_retry=on_retry)

    def stream_model(self, model: Model, request: ModelRequest, *, on_retry: OnRetry
                     ) -> AsyncIterator[TextDelta | ModelResponse]:
        return self.inner.stream_model(model, request, on_retry=on_retry)

    async def run_tools(self, batch: ToolBatch) -> list[ToolResult]:
        return await self.inner.run_tools(batch)

    def open_source(self, source: ToolSource, emit: Emit
                    ) -> AbstractAsyncContextManager[Sequence[Tool]]:
        return self.inner.open_source(source, emit)
