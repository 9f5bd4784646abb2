""":class:`TracedRuntime`: a :class:`~reactloop.runtime.RuntimeWrapper` that traces the model
and tool calls passing through it.

Each model call is a ``chat {model}`` span (token usage, finish reasons, retries as span
events) and feeds the ``gen_ai.client.*`` histograms; each tool call is an ``execute_tool
{tool}`` span. While a call runs, its span is the current span, so spans made inside (an HTTP
client's, a tool's own) nest under it; calls that run concurrently each get their own.
Wrapping the runtime (not the loop) is what makes MCP tools and any runtime — the in-process
one or a workflow engine's — traced the same way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Status, StatusCode

from reactloop._otel import _names as n
from reactloop._otel._content import arguments_json, input_json, output_json, system_json
from reactloop._otel._settings import RunTrace, Settings, error_type
from reactloop.controls._cost import call_cost, price_key
from reactloop.messages import ModelRequest, ModelResponse, TextDelta, ToolCall
from reactloop.models._base import Model
from reactloop.result import ToolResult
from reactloop.runtime import LocalRuntime, OnRetry, Runtime, RuntimeWrapper, ToolBatch
from reactloop.tools._source import Emit, ToolSource
from reactloop.tools._tool import Tool

__all__ = ["TracedRuntime", "tool_error_type"]


class TracedRuntime(RuntimeWrapper):
    """Traces the model and tool calls of ``inner``; everything else passes through.

    Args:
        inner: the runtime that does the work.
        settings: tracer, histograms and content policy.
        run: the traced run these calls belong to (their parent span); None outside a run
            (e.g. inside a workflow engine's activity), where the current span is the parent.
    """

    __slots__ = ("run", "settings")

    def __init__(self, inner: Runtime, settings: Settings, run: RunTrace | None = None) -> None:
        super().__init__(inner)
        self.settings, self.run = settings, run

    def open_source(self, source: ToolSource, emit: Emit
                    ) -> AbstractAsyncContextManager[Sequence[Tool]]:
        opened = self.inner.open_source(source, emit)
        return opened if self.run is None else _InContext(opened, self.run.context)

    # -- model -------------------------------------------------------------------------------
    async def call_model(self, model: Model, request: ModelRequest, *,
                         on_retry: OnRetry) -> ModelResponse:
        call = _Chat(self.settings, self.run, model, request, stream=False)
        token = otel_context.attach(call.context)
        try:
            response = await self.inner.call_model(model, request,
                                                   on_retry=call.on_retry(on_retry))
        except BaseException as exc:
            call.failed(exc)
            raise
        finally:
            otel_context.detach(token)
        call.done(response)
        return response

    async def stream_model(self, model: Model, request: ModelRequest, *, on_retry: OnRetry
                           ) -> AsyncIterator[TextDelta | ModelResponse]:
        call = _Chat(self.settings, self.run, model, request, stream=True)
        inner = self.inner.stream_model(model, request, on_retry=call.on_retry(on_retry))
        response: ModelResponse | None = None
        try:
            while True:
                # current only while the inner stream works, never while our consumer does
                token = otel_context.attach(call.context)
                try:
                    item = await anext(inner)
                except StopAsyncIteration:
                    break
                finally:
                    otel_context.detach(token)
                if isinstance(item, ModelResponse):
                    response = item
                else:
                    call.chunk()
                yield item
        except BaseException as exc:
            call.failed(exc)
            raise
        finally:
            aclose = getattr(inner, "aclose", None)
            if aclose is not None:
                await aclose()
        call.done(response)

    # -- tools -------------------------------------------------------------------------------
    async def run_tools(self, batch: ToolBatch) -> list[ToolResult]:
        calls = batch.calls
        if len(calls) == 1:
            return [await self._tool(0, calls[0], batch)]
        limit = batch.max_parallel
        sem = asyncio.Semaphore(limit) if limit else None

        async def one(i: int, call: ToolCall) -> ToolResult:
            if sem is None:
                return await self._tool(i, call, batch)
            async with sem:
                return await self._tool(i, call, batch)

        return list(await asyncio.gather(*(one(i, c) for i, c in enumerate(calls))))

    async def _tool(self, i: int, call: ToolCall, batch: ToolBatch) -> ToolResult:
        """One call as a batch of one, inside its own span (so concurrent calls each have
        theirs, and the inner runtime executes it as it would any call)."""
        settings = self.settings
        span = settings.tracer.start_span(
            f"execute_tool {call.name}", self.run.context if self.run else None,
            SpanKind.INTERNAL, _tool_attributes(call, batch, settings))
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            if type(self.inner) is LocalRuntime:  # what its run_tools does for one call
                r = await batch.registry.execute_one(
                    call, batch.run_id, batch.default_timeout, batch.deps, batch.emit,
                    batch.add_tools, batch.state)
            else:
                one = ToolBatch((call,), batch.registry, batch.run_id,
                                default_timeout=batch.default_timeout, max_parallel=None,
                                deps=batch.deps, state=batch.state, emit=batch.emit,
                                add_tools=batch.add_tools)
                r = (await self.inner.run_tools(one))[0]
        except BaseException as exc:
            _fail(span, exc)
            raise
        finally:
            otel_context.detach(token)
        batch.done[i] = r
        if r.error is not None:
            span.set_attribute(n.ERROR_TYPE, tool_error_type(r))
            # the message may quote the arguments: content, so only when content is recorded
            span.set_status(Status(StatusCode.ERROR, settings.hook(r.error)
                                   if settings.include_content else None))
        elif settings.include_content:
            span.set_attribute(n.TOOL_RESULT, settings.hook(r.content))
        span.end()
        return r


class _InContext(AbstractAsyncContextManager[Sequence[Tool]]):
    """A tool source whose start and stop run inside the run's span (an MCP server stops
    when the run ends, after the loop stopped making the run's span current)."""

    def __init__(self, inner: AbstractAsyncContextManager[Sequence[Tool]],
                 context: Context) -> None:
        self.inner, self.context = inner, context

    async def __aenter__(self) -> Sequence[Tool]:
        token = otel_context.attach(self.context)
        try:
            return await self.inner.__aenter__()
        finally:
            otel_context.detach(token)

    async def __aexit__(self, *exc: Any) -> bool | None:
        token = otel_context.attach(self.context)
        try:
            return await self.inner.__aexit__(*exc)
        finally:
            otel_context.detach(token)


def _tool_attributes(call: ToolCall, batch: ToolBatch, settings: Settings) -> dict[str, Any]:
    attrs: dict[str, Any] = {n.OPERATION: "execute_tool", n.TOOL_NAME: str(call.name),
                             n.TOOL_TYPE: "function"}
    if call.id:
        attrs[n.TOOL_CALL_ID] = call.id
    t = batch.registry.get(call.name) if isinstance(call.name, str) else None
    if t is not None and t.description:
        attrs[n.TOOL_DESCRIPTION] = t.description
    if settings.include_content:
        attrs[n.TOOL_ARGUMENTS] = arguments_json(call.arguments, settings.hook)
    return attrs


def tool_error_type(r: ToolResult) -> str:
    """``error.type`` of a failed tool call (the model was told why; this is the class)."""
    error = r.error or ""
    if r.traceback is not None:  # the tool raised: "TypeName: message"
        return error.partition(":")[0].strip() or "_OTHER"
    if error.startswith(("Unknown tool", "Invalid tool name")):
        return "unknown_tool"
    if error.startswith("Invalid arguments"):
        return "invalid_arguments"
    if " timed out after " in error:
        return "timeout"
    if error.startswith("not finished"):
        return "cancelled"
    return "tool_error"  # ToolRetry, MCP errors, results a runtime reported as failed


def _fail(span: trace.Span, exc: BaseException) -> None:
    kind = error_type(exc)
    span.set_attribute(n.ERROR_TYPE, kind)
    span.set_status(Status(StatusCode.ERROR, kind))
    span.end()


class _Chat:
    """One model call being traced."""

    __slots__ = ("attrs", "context", "first_chunk", "request", "settings", "span", "started")

    def __init__(self, settings: Settings, run: RunTrace | None, model: Model,
                 request: ModelRequest, *, stream: bool) -> None:
        self.settings, self.request = settings, request
        attrs: dict[str, Any] = {n.OPERATION: "chat", n.PROVIDER: model.provider,
                                 n.REQUEST_MODEL: model.name}
        self.attrs = dict(attrs)  # what the histograms are recorded with
        s = request.settings
        if s.max_tokens is not None:
            attrs[n.REQUEST_MAX_TOKENS] = s.max_tokens
        if s.temperature is not None:
            attrs[n.REQUEST_TEMPERATURE] = s.temperature
        if stream:
            attrs[n.REQUEST_STREAM] = True
        parts = [a for m in request.messages for a in m.attachments]
        if parts:  # types and sizes only: bytes never go into a trace
            attrs["reactloop.request.attachment.types"] = [a.media_type for a in parts]
            attrs["reactloop.request.attachment.sizes"] = [a.size for a in parts]
        if run is not None:
            attrs["reactloop.iteration"] = run.iteration
            if run.conversation_id:
                attrs[n.CONVERSATION_ID] = run.conversation_id
        if settings.include_content:
            attrs[n.SYSTEM_INSTRUCTIONS] = system_json(request.system, settings.hook)
            attrs[n.INPUT_MESSAGES] = input_json(request, settings.hook)
        self.span = settings.tracer.start_span(f"chat {model.name}",
                                               run.context if run else None,
                                               SpanKind.CLIENT, attrs)
        self.context = trace.set_span_in_context(self.span)
        self.started = time.perf_counter()
        self.first_chunk: float | None = None

    def on_retry(self, on_retry: OnRetry) -> OnRetry:
        span = self.span

        def traced(attempt: int, wait: float, error: BaseException) -> None:
            span.add_event("reactloop.retry", {
                "reactloop.retry.attempt": attempt, "reactloop.retry.wait": wait,
                n.ERROR_TYPE: _model_error_type(error),
                "reactloop.retry.error": self.settings.hook(str(error))})
            on_retry(attempt, wait, error)

        return traced

    def chunk(self) -> None:
        if self.first_chunk is None:
            self.first_chunk = time.perf_counter() - self.started
            self.span.set_attribute(n.TIME_TO_FIRST_CHUNK, self.first_chunk)

    def done(self, response: ModelResponse | None) -> None:
        settings, attrs = self.settings, self.attrs
        elapsed = time.perf_counter() - self.started
        if response is None:  # a stream that ended without a response
            self.failed(RuntimeError("no response"))
            return
        out: dict[str, Any] = {}
        if response.model_name:
            attrs[n.RESPONSE_MODEL] = out[n.RESPONSE_MODEL] = response.model_name
        if response.finish_reason:
            out[n.FINISH_REASONS] = (response.finish_reason,)
        usage = response.usage
        if usage is not None:  # tokens on chat spans only: a run's totals are reactloop.*
            out[n.INPUT_TOKENS] = usage.input_tokens
            out[n.OUTPUT_TOKENS] = usage.output_tokens
            if usage.cache_read_tokens:
                out[n.CACHE_READ] = usage.cache_read_tokens
            if usage.cache_write_tokens:
                out[n.CACHE_WRITE] = usage.cache_write_tokens
            settings.token_usage.record(usage.input_tokens, {**attrs, n.TOKEN_TYPE: "input"})
            settings.token_usage.record(usage.output_tokens, {**attrs, n.TOKEN_TYPE: "output"})
            cost = call_cost(price_key(str(attrs[n.PROVIDER]), response.model_name or str(
                attrs[n.REQUEST_MODEL])), usage)
            if cost is not None:  # unknown prices are left out, never 0
                out["reactloop.usage.cost_usd"] = cost
        if settings.include_content:
            out[n.OUTPUT_MESSAGES] = output_json(response, settings.hook)
        settings.duration.record(elapsed, attrs)
        self.span.set_attributes(out)
        self.span.end()

    def failed(self, exc: BaseException) -> None:
        kind = _model_error_type(exc)
        self.span.set_attribute(n.ERROR_TYPE, kind)
        status = getattr(exc, "status_code", None)
        if isinstance(status, int):
            self.span.set_attribute("http.response.status_code", status)
        # the message is redacted (an echoed key); it names the failure, not the content
        self.span.set_status(Status(StatusCode.ERROR, self.settings.hook(str(exc))[:500]))
        self.settings.duration.record(time.perf_counter() - self.started,
                                      {**self.attrs, n.ERROR_TYPE: kind})
        self.span.end()


def _model_error_type(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    return str(status) if isinstance(status, int) else error_type(exc)
