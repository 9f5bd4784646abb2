""":class:`Telemetry`: turns one run into an ``invoke_agent {agent}`` span.

The run's own events are the source (as for callbacks, the CLI and the server): the span
starts with the run, gets span events for what the loop did along the way (budget notes, the
forced last iteration, compaction, reminders, warnings, a loop-control ending) and ends with
the run's state and totals. Model and tool calls become child spans in
:class:`~reactloop._otel._traced.TracedRuntime`, which the run uses instead of the agent's
runtime.

The run span is made current only while the loop works (around each step of the event
generator), never while the caller handles an event, so runs streamed side by side in one
task never see each other's spans.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from reactloop._loop import run_events
from reactloop._otel import _names as n
from reactloop._otel._settings import RunTrace, Settings, error_type
from reactloop._otel._traced import TracedRuntime
from reactloop._spec import RunSpec
from reactloop.events import (
    CompactionEvent,
    Event,
    FallbackEvent,
    GuardrailEvent,
    HandoffEvent,
    IterationStartEvent,
    NoToolCallEvent,
    QueuedEvent,
    RunEndEvent,
    WarningEvent,
)
from reactloop.result import RunResult, RunState
from reactloop.run_context import RunContext
from reactloop.runtime import Runtime
from reactloop.tools._control import CONTROL_TOOL_NAMES

__all__ = ["Telemetry"]

_FAILED = {RunState.ERROR, RunState.TIMED_OUT, RunState.CANCELLED}


class Telemetry(Settings):
    """Instrumentation settings, and what traces a run with them."""

    __slots__ = ()

    def trace_run(self, spec: RunSpec, ctx: RunContext, runtime: Runtime, *,
                  stream: bool) -> AsyncGenerator[Event, None]:
        """The events of one run (as ``run_events`` yields them), traced."""
        parent = otel_context.get_current()
        attrs: dict[str, Any] = {
            n.OPERATION: "invoke_agent", n.PROVIDER: spec.model.provider,
            n.AGENT_NAME: spec.name, n.REQUEST_MODEL: spec.model.name,
            "reactloop.run.id": ctx.run_id,
        }
        if ctx.conversation_id:
            attrs[n.CONVERSATION_ID] = ctx.conversation_id
        span = self.tracer.start_span(f"invoke_agent {spec.name}", parent, SpanKind.INTERNAL,
                                      attrs)
        run = RunTrace(span, trace.set_span_in_context(span, parent), spec.name,
                       ctx.conversation_id)
        events = run_events(spec, ctx, TracedRuntime(runtime, self, run), stream=stream)
        return self._traced(spec, run, events)

    async def _traced(self, spec: RunSpec, run: RunTrace,
                      events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        handlers = _HANDLERS
        state = RunState.CANCELLED  # closed before run_end: the loop counts that as cancelled
        # the run's span is current while the loop starts (extensions' start, such as
        # retrieval, and MCP servers starting); after that every call that can do I/O has
        # its parent set explicitly (TracedRuntime), which spares two context switches per
        # event
        starting = True
        try:
            while True:
                token = otel_context.attach(run.context) if starting else None
                try:
                    event = await anext(events)
                except StopAsyncIteration:
                    return
                finally:
                    if token is not None:
                        otel_context.detach(token)
                handle = handlers.get(type(event))
                # a sub-run's events (an agent called as a tool) are its own span's business
                if handle is not None and event.parent_run_id is None:
                    starting = False if type(event) is IterationStartEvent else starting
                    handle(spec, run, event)
                yield event
        except Exception:
            state = RunState.ERROR
            raise
        finally:
            token = otel_context.attach(run.context)
            try:
                await events.aclose()  # the loop records its ending (closed stream)
            finally:
                otel_context.detach(token)
                if not run.ended:
                    _close(run, state, None)


def _iteration(spec: RunSpec, run: RunTrace, event: Any) -> None:
    k, last = event.iteration, event.max_iterations
    run.iteration = k
    if k == last:
        run.span.add_event("reactloop.final_iteration", {"reactloop.iteration": k})
    elif k >= last - 2:  # the request carries a budget note (README: "Budgets")
        run.span.add_event("reactloop.budget_note", {"reactloop.iteration": k,
                                                     "reactloop.iterations_left": last - k})


def _compaction(spec: RunSpec, run: RunTrace, event: Any) -> None:
    run.span.add_event("reactloop.compaction", {
        "reactloop.compaction.tier": event.tier,
        "reactloop.compaction.tokens_before": event.tokens_before,
        "reactloop.compaction.tokens_after": event.tokens_after,
        "reactloop.compaction.messages_before": event.messages_before,
        "reactloop.compaction.messages_after": event.messages_after,
        "reactloop.compaction.duration": event.duration,
        "reactloop.iteration": run.iteration})


def _no_tool_call(spec: RunSpec, run: RunTrace, event: Any) -> None:
    run.span.add_event("reactloop.no_tool_call", {"reactloop.iteration": event.iteration,
                                                  "reactloop.reminded": event.reminded})


def _warning(spec: RunSpec, run: RunTrace, event: Any) -> None:
    from reactloop._redact import redact

    run.span.add_event("reactloop.warning", {"reactloop.warning.source": event.source,
                                             "reactloop.warning.message": redact(event.message)})


def _run_end(spec: RunSpec, run: RunTrace, event: Any) -> None:
    result: RunResult = event.result
    if spec.loop_control and result.steps:
        for r in result.steps[-1].results:
            if r.error is None and r.name in CONTROL_TOOL_NAMES:
                run.span.add_event("reactloop.loop_control", {
                    n.TOOL_NAME: r.name, "reactloop.run.state": str(result.state)})
                break
    _close(run, result.state, result)


def _close(run: RunTrace, state: RunState, result: RunResult | None) -> None:
    """End the run span with the run's state and totals (under reactloop.*: the tokens are
    on the chat spans, so nothing is counted twice)."""
    span = run.span
    attrs: dict[str, Any] = {"reactloop.run.state": str(state)}
    if result is not None:
        m = result.metrics
        attrs.update({"reactloop.run.iterations": m.iterations,
                      "reactloop.run.tool_calls": m.tool_calls,
                      "reactloop.usage.input_tokens": m.input_tokens,
                      "reactloop.usage.output_tokens": m.output_tokens})
        if m.cache_read_tokens or m.cache_write_tokens:
            attrs["reactloop.usage.cache_read_tokens"] = m.cache_read_tokens
            attrs["reactloop.usage.cache_write_tokens"] = m.cache_write_tokens
        if m.cost_usd is not None and m.requests:  # unknown: left out, never 0
            attrs["reactloop.usage.cost_usd"] = m.cost_usd
    span.set_attributes(attrs)
    if state in _FAILED:
        error = result.error if result is not None else None
        kind = error_type(error) if error is not None else {
            RunState.TIMED_OUT: "timeout", RunState.CANCELLED: "cancelled"}.get(state, "_OTHER")
        span.set_attribute(n.ERROR_TYPE, kind)
        span.set_status(Status(StatusCode.ERROR, kind))
    run.ended = True
    span.end()


def _handoff(spec: RunSpec, run: RunTrace, event: Any) -> None:
    """The run goes on with another agent: an event, and the agent that answers."""
    run.span.add_event("reactloop.handoff", {"reactloop.handoff.from": event.from_agent,
                                             "reactloop.handoff.to": event.to_agent})
    run.span.set_attribute("reactloop.run.agent", event.to_agent)


_Handler = Callable[[RunSpec, RunTrace, Any], None]
def _guardrail(spec: RunSpec, run: RunTrace, event: Any) -> None:
    run.span.add_event("reactloop.guardrail", {
        "reactloop.guardrail.kind": event.kind, "reactloop.guardrail.name": event.guardrail,
        "reactloop.guardrail.outcome": event.outcome, "reactloop.iteration": run.iteration})


def _fallback(spec: RunSpec, run: RunTrace, event: Any) -> None:
    run.span.add_event("reactloop.fallback", {
        "reactloop.fallback.failed": event.failed, "reactloop.fallback.next": event.next,
        "reactloop.fallback.error": event.error, "reactloop.iteration": run.iteration})


def _queued(spec: RunSpec, run: RunTrace, event: Any) -> None:
    run.span.add_event("reactloop.queued", {"reactloop.queued.model": event.model,
                                            "reactloop.queued.seconds": event.waited,
                                            "reactloop.iteration": run.iteration})


_HANDLERS: dict[type[Event], _Handler] = {
    IterationStartEvent: _iteration,
    CompactionEvent: _compaction,
    NoToolCallEvent: _no_tool_call,
    WarningEvent: _warning,
    GuardrailEvent: _guardrail,
    FallbackEvent: _fallback,
    QueuedEvent: _queued,
    RunEndEvent: _run_end,
    HandoffEvent: _handoff,
}
