"""What instrumentation was turned on with (:class:`Settings`) and one traced run
(:class:`RunTrace`)."""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.metrics import CallbackOptions, Observation

from reactloop._otel import _names as n
from reactloop._otel._content import Redact
from reactloop._redact import redact
from reactloop._threads import thread_stats
from reactloop._version import __version__

__all__ = ["RunTrace", "Settings", "error_type"]


class Settings:
    """The tracer, the two GenAI histograms and the content policy.

    Args:
        tracer_provider: where spans go (None: OpenTelemetry's global provider).
        meter_provider: where metrics go (None: OpenTelemetry's global provider).
        include_content: record messages, tool arguments and results (redacted).
        redact: applied to recorded content after reactloop's key redaction.
    """

    __slots__ = ("duration", "hook", "include_content", "meter_provider", "token_usage",
                 "tracer", "tracer_provider")

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None, *,
                 include_content: bool = False, redact: Redact | None = None) -> None:
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        tracer_source = tracer_provider or trace.get_tracer_provider()
        self.tracer: trace.Tracer = tracer_source.get_tracer("reactloop", __version__)
        provider = meter_provider or metrics.get_meter_provider()
        meter = provider.get_meter("reactloop", __version__)
        _observe_tool_threads(provider, meter)
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=n.TOKEN_BUCKETS)
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=n.DURATION_BUCKETS)
        self.include_content = include_content
        self.hook: Redact = _compose(redact)
        """Every recorded piece of content goes through this: keys out, then the user's hook."""


_OBSERVED: weakref.WeakSet[Any] = weakref.WeakSet()
"""Meter providers that already have the tool-threads gauge (one per provider)."""


def _observe_tool_threads(provider: Any, meter: metrics.Meter) -> None:
    """``reactloop.tool.threads``: the threads sync tools run on, busy and stuck (running a
    call that was abandoned), read from :func:`reactloop.tools.thread_stats` when collected."""
    try:
        if provider in _OBSERVED:
            return
        _OBSERVED.add(provider)
    except TypeError:  # a provider that cannot be weakly referenced: observe it once more
        pass
    meter.create_observable_gauge(
        "reactloop.tool.threads", callbacks=[_thread_counts], unit="{thread}",
        description="Threads running sync tool calls, by state: busy, or stuck in a call "
                    "that timed out or was cancelled.")


def _thread_counts(options: CallbackOptions) -> Iterable[Observation]:
    stats = thread_stats()
    return [Observation(stats.busy, {"reactloop.thread.state": "busy"}),
            Observation(stats.stuck, {"reactloop.thread.state": "stuck"})]


def _compose(user: Redact | None) -> Redact:
    if user is None:
        return redact

    def hook(text: str) -> str:
        return user(redact(text))

    return hook


class RunTrace:
    """One traced run: its span, the context holding it, and what child spans repeat."""

    __slots__ = ("agent_name", "context", "conversation_id", "ended", "iteration", "span")

    def __init__(self, span: trace.Span, context: Context, agent_name: str,
                 conversation_id: str | None) -> None:
        self.span = span
        self.context = context
        """OpenTelemetry context with :attr:`span` current: the parent of the run's spans."""
        self.agent_name = agent_name
        self.conversation_id = conversation_id
        self.iteration = 0
        self.ended = False


def error_type(exc: BaseException) -> str:
    """``error.type`` for an exception: low-cardinality, never a message."""
    import asyncio

    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return "cancelled"
    if isinstance(exc, TimeoutError):
        return "timeout"
    return type(exc).__qualname__
