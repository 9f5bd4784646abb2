"""What instrumentation was turned on with (:class:`Settings`) and one traced run
(:class:`RunTrace`)."""

from __future__ import annotations

from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context

from reactloop._otel import _names as n
from reactloop._otel._content import Redact
from reactloop._redact import redact
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
        meter = (meter_provider or metrics.get_meter_provider()).get_meter("reactloop",
                                                                           __version__)
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
