"""The activities: everything a workflow's run does that touches the world.

One activity per model call, per tool call, per MCP listing, and one for the retrieved context
of a turn. They run the agent's own objects (its model, its tools, its MCP servers) in the
worker process. Attachments cross as references: the model activity reads their bytes from
the attachment store (``_blobs``) before it calls the model, a tool activity writes the ones
its tool returned there. Their failures that the loop turns into results stay results; their payloads
are checked against Temporal's size limit before they are returned, so an oversized value is
refused with a clear error instead of being retried for ever.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from reactloop._attach import Fitter
from reactloop._redact import get_logger
from reactloop.errors import ModelHTTPError, UserError
from reactloop.events import WarningEvent
from reactloop.mcp._elicitation import default_elicitor
from reactloop.messages import ModelRequest
from reactloop.models._base import Model
from reactloop.models._retry import retries_elsewhere
from reactloop.result import ToolResult, jsonable
from reactloop.run_context import RunContext
from reactloop.temporal._codec import (
    call_from_dict,
    json_size,
    request_from_dict,
    response_to_dict,
    result_to_dict,
)
from reactloop.temporal._config import Durable
from reactloop.temporal._elicitation import deferring, refuse_live, reported
from reactloop.tools._source import ToolSource
from reactloop.tools._tool import Tool

__all__ = ["build_activities"]

log = get_logger("reactloop.temporal")
T = TypeVar("T")


def build_activities(agent: Durable, pool: SourcePool) -> list[Callable[..., Any]]:
    """The agent's activities, each registered under its documented name."""
    impl = _Activities(agent, pool)
    names = agent.names
    out = [_defn(names.model, impl.model), _defn(names.any_tool, impl.tool),
           _defn(names.retrieve, impl.retrieve)]
    out += [_defn(names.tool(n), impl.tool) for n in names.tools]
    for source in agent.agent.spec.sources:
        out.append(_defn(names.mcp_list(source.name), _bind(impl.mcp_list, source)))
        out.append(_defn(names.mcp_call(source.name), _bind(impl.mcp_call, source)))
    return out


def _defn(name: str, impl: Callable[[Any], Awaitable[Any]]) -> Callable[..., Any]:
    async def run(arg: Any) -> Any:
        return await impl(arg)

    run.__name__ = run.__qualname__ = name.replace(".", "_").replace("-", "_")
    return activity.defn(name=name)(run)


def _bind(fn: Callable[[ToolSource, Any], Awaitable[Any]], source: ToolSource
          ) -> Callable[[Any], Awaitable[Any]]:
    async def bound(arg: Any) -> Any:
        return await fn(source, arg)

    return bound


async def heartbeating(work: Awaitable[T], every: float | None) -> T:
    """Await ``work``, heartbeating meanwhile so a dead worker is noticed within the
    activity's heartbeat timeout (and a cancelled activity hears of it)."""
    if every is None:
        return await work
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=every)
            if done:
                return task.result()
            activity.heartbeat()
    finally:
        if not task.done():
            task.cancel()


class _Activities:
    def __init__(self, agent: Durable, pool: SourcePool) -> None:
        self.agent, self.pool = agent, pool
        self.spec = agent.agent.spec

    def _beat(self) -> float | None:
        hb = self.agent.heartbeat_timeout
        return None if hb is None else hb / 3

    # -- model -------------------------------------------------------------------------------
    async def model(self, arg: dict[str, Any]) -> dict[str, Any]:
        spec = self.spec
        model = spec.model
        compaction = getattr(spec.context, "compaction", None)
        if arg.get("model") == "summarizer" and compaction is not None and compaction.summarizer:
            model = compaction.summarizer
        request = await self._loaded(model, request_from_dict(arg["request"]))
        token = retries_elsewhere.set(True)  # the activity's retry policy retries
        try:
            response = await heartbeating(model.request(request), self._beat())
        except ModelHTTPError as exc:
            delay = None if exc.retry_after is None else timedelta(seconds=exc.retry_after)
            raise ApplicationError(str(exc), _error_data(exc), type="ModelHTTPError",
                                   non_retryable=not exc.retryable,
                                   next_retry_delay=delay) from exc
        except Exception as exc:
            raise ApplicationError(f"{type(exc).__name__}: {exc}", _error_data(exc),
                                   type=type(exc).__name__, non_retryable=True) from exc
        finally:
            retries_elsewhere.reset(token)
        out = response_to_dict(response)
        size, limit = json_size(out), self.agent.max_payload_bytes
        if size > limit:
            message = (f"the model's response is {size:,} bytes, over Temporal's payload limit "
                       f"of {limit:,} bytes; lower max_tokens")
            raise ApplicationError(message, {"type": "PayloadTooLarge", "message": message},
                                   type="PayloadTooLarge", non_retryable=True)
        return out

    async def _loaded(self, model: Model, request: ModelRequest) -> ModelRequest:
        """``request`` with its attachments' bytes read from the attachment store, fitted
        to what the model takes (the workflow passed the references on unfitted)."""
        if not any(m.attachments for m in request.messages):
            return request
        try:
            messages = await self.agent.blobs.resolve(_workflow_id(),
                                                      request.messages)
            fitted = Fitter(model, _told).messages(messages)
        except UserError as exc:  # a blob this worker cannot find, a PDF it cannot read
            raise ApplicationError(str(exc), _error_data(exc), type="UserError",
                                   non_retryable=True) from None
        return dataclasses.replace(request, messages=fitted)

    # -- tools -------------------------------------------------------------------------------
    async def tool(self, arg: dict[str, Any]) -> dict[str, Any]:
        return await self._tool(arg, ())

    async def mcp_call(self, source: ToolSource, arg: dict[str, Any]) -> dict[str, Any]:
        tools = await self._source_tools(source)
        with deferring(arg) as held:  # a server's questions go to the workflow (durable)
            out = await self._tool(arg, tools)
        return reported(out, held)

    async def _tool(self, arg: dict[str, Any], extra: Sequence[Tool]) -> dict[str, Any]:
        spec = self.spec
        call = call_from_dict(arg["call"])
        ctx = RunContext(str(arg.get("run_id") or ""), "", [], tools=spec.tools.copy(),
                         deps=spec.deps, state=arg.get("state") or {})
        ctx.add_tools(extra)
        for ext in spec.extensions:  # the run's state as the tools expect it (a Plan…)
            await ext.start(ctx)
        events: list[list[Any]] = []

        def emit(name: str, data: Any = None) -> None:
            events.append([name, jsonable(data)])

        r = await heartbeating(
            ctx.tools.execute_one(call, ctx.run_id, arg.get("timeout"), spec.deps, emit,
                                  ctx.add_tools, ctx.state), self._beat())
        t = ctx.tools.get(call.name) if isinstance(call.name, str) else None
        r = await self._store_parts(r)
        if (r.error is not None and t is not None and _may_repeat(r)
                and activity.info().attempt <= t.retries):
            raise ApplicationError(r.error, type="ToolFailed")  # Temporal tries again
        out: dict[str, Any] = {"result": result_to_dict(r), "events": events}
        size, limit = json_size(out), self.agent.max_payload_bytes
        if size > limit:
            message = (f"the result of {r.name} is {size:,} bytes, over Temporal's payload "
                       f"limit of {limit:,} bytes; return less (a summary, a file path)")
            out = {"result": result_to_dict(ToolResult(
                r.name, None, message, r.call_id, r.arguments, f"Error: {message}",
                duration=r.duration)), "events": []}
        return out

    async def _store_parts(self, r: ToolResult) -> ToolResult:
        """Write the bytes of the pictures and documents a tool returned to the attachment
        store (the result carries references); one that cannot be stored fails the call."""
        if not r.attachments:
            return r
        try:
            await self.agent.blobs.put(_workflow_id(), r.attachments,
                                       f"returned by {r.name} ({r.call_id})")
        except UserError as exc:
            message = f"the attachments {r.name} returned cannot be stored: {exc}"
            return ToolResult(r.name, None, message, r.call_id, r.arguments,
                              f"Error: {message}", duration=r.duration)
        return r

    # -- MCP and retrieved context -----------------------------------------------------------
    async def _source_tools(self, source: ToolSource) -> Sequence[Tool]:
        try:  # heartbeating: the first activity on a worker opens the server (it takes time)
            return await heartbeating(self.pool.tools(source), self._beat())
        except Exception as exc:
            raise ApplicationError(str(exc), _error_data(exc), type=type(exc).__name__,
                                   non_retryable=True) from exc

    async def mcp_list(self, source: ToolSource, _: Any) -> dict[str, Any]:
        tools = await self._source_tools(source)
        return {"tools": [{"name": t.name, "description": t.description,
                           "parameters": t.parameters, "timeout": t.timeout,
                           "repeatable": t.repeatable} for t in tools]}

    async def retrieve(self, prompt: str) -> dict[str, Any]:
        """The start of every extension that does I/O there (``start_does_io``: retrieved
        context), for a turn's prompt: the state each leaves, and its warnings."""
        ctx = RunContext("", str(prompt), [])
        for ext in self.spec.extensions:
            if ext.start_does_io:
                await ext.start(ctx)
        return {"state": {k: jsonable(v) for k, v in ctx.state.items()},
                "warnings": [e.message for e in ctx.pending if isinstance(e, WarningEvent)]}


def _workflow_id() -> str:
    """The workflow the current activity serves (its attachments are filed under it)."""
    return activity.info().workflow_id or ""


def _told(name: str, data: Any = None) -> None:
    """A conversion the activity's fitting made: the workflow's trace already said so."""
    log.debug("%s: %s", name, data)


def _may_repeat(r: ToolResult) -> bool:
    """A failure worth another attempt: an exception or a timeout (not a bad argument, an
    unknown tool or the tool's own ToolRetry message)."""
    return r.traceback is not None or " timed out after " in (r.error or "")


def _error_data(exc: BaseException) -> dict[str, Any]:
    d: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, ModelHTTPError):
        d.update(status_code=exc.status_code, message=exc.message, retryable=exc.retryable)
    return d


class SourcePool:
    """Tool sources (MCP servers) opened once per worker process and shared by the
    activities of every run it executes; closed by :meth:`aclose`."""

    def __init__(self) -> None:
        self._held: dict[str, _Held] = {}
        self._lock: asyncio.Lock | None = None

    async def tools(self, source: ToolSource) -> Sequence[Tool]:
        held = self._held.get(source.name)
        if held is not None and held.alive:
            return held.tools
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            held = self._held.get(source.name)
            if held is None or not held.alive:
                held = _Held(source)
                await held.start()  # raises when the source cannot be opened: not kept
                self._held[source.name] = held
        return held.tools

    async def aclose(self) -> None:
        held, self._held = list(self._held.values()), {}
        for h in held:
            await h.close()


class _Held:
    """One open source, owned by its own task (MCP connections must be closed by the task
    that opened them)."""

    def __init__(self, source: ToolSource) -> None:
        self.source = source
        self.tools: list[Tool] = []
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        ready: asyncio.Future[list[Tool]] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._own(ready))
        self.tools = await asyncio.shield(ready)

    async def _own(self, ready: asyncio.Future[list[Tool]]) -> None:
        def emit(name: str, data: Any = None) -> None:
            log.info("%s: %s %s", self.source.name, name, data)

        default_elicitor.set(refuse_live)  # this task's context: servers without a handler
        try:
            async with self.source.open(emit) as tools:
                ready.set_result(list(tools))
                await self._stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
                return
            log.warning("tool source %s failed: %s", self.source.name, exc)

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
