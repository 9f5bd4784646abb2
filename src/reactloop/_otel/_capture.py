"""Spans and metrics in memory, for tests (``reactloop.testing.capture_spans``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from reactloop._otel._content import Redact
from reactloop._otel._telemetry import Telemetry

__all__ = ["CapturedSpans", "captured"]


class CapturedSpans(list[ReadableSpan]):
    """The spans finished so far (in the order they ended), and the metrics recorded."""

    def __init__(self, reader: InMemoryMetricReader, tracer_provider: TracerProvider) -> None:
        super().__init__()
        self._reader = reader
        self.tracer_provider = tracer_provider
        """The provider the spans are collected from: give it to your own code's tracers so
        their spans land here too (nested under the tool or model call they ran in)."""

    def named(self, name: str) -> list[ReadableSpan]:
        """Spans called ``name`` or, for an operation alone (``"chat"``), ``"name ..."``."""
        return [s for s in self if s.name == name or s.name.startswith(name + " ")]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        """Spans whose parent is ``parent``, in the order they started."""
        pid = parent.context.span_id if parent.context is not None else None
        kids = [s for s in self if s.parent is not None and s.parent.span_id == pid]
        return sorted(kids, key=lambda s: s.start_time or 0)

    def metrics(self) -> dict[str, list[tuple[dict[str, Any], Any]]]:
        """Recorded metrics by name: ``(attributes, data point)`` pairs."""
        out: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        data = self._reader.get_metrics_data()
        for rm in data.resource_metrics if data is not None else ():
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    out.setdefault(metric.name, []).extend(
                        (dict(p.attributes or {}), p) for p in metric.data.data_points)
        return out


class _Collect(SpanProcessor):
    def __init__(self, into: CapturedSpans) -> None:
        self.into = into

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        self.into.append(span)


@contextmanager
def captured(include_content: bool, redact: Redact | None) -> Iterator[CapturedSpans]:
    from reactloop import _instrument

    reader = InMemoryMetricReader()
    tracer_provider = TracerProvider()
    spans = CapturedSpans(reader, tracer_provider)
    tracer_provider.add_span_processor(_Collect(spans))
    meter_provider = MeterProvider(metric_readers=[reader])
    before = _instrument.set_active(Telemetry(tracer_provider, meter_provider,
                                              include_content=include_content, redact=redact))
    try:
        yield spans
    finally:
        _instrument.set_active(before)
        tracer_provider.shutdown()
        meter_provider.shutdown()
