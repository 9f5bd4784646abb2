"""OTLP/HTTP export for the command line (``reactloop run --otlp URL``, ``OTEL_*`` variables).

The standard variables are honoured as the OpenTelemetry SDK defines them:
``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` /
``..._METRICS_ENDPOINT``, ``..._HEADERS``, ``..._TIMEOUT``, ``OTEL_SERVICE_NAME``,
``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_EXPORTER`` / ``OTEL_METRICS_EXPORTER`` (``none``
turns one off) and ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (``true`` records
content). ``--otlp URL`` is the base URL, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` would be.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from reactloop._otel._telemetry import Telemetry
from reactloop.errors import UserError

__all__ = ["FLUSH_SECONDS", "otlp_telemetry"]

FLUSH_SECONDS = 5.0
"""How long the command waits at exit for the last spans and metrics to be sent."""


def _off(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() == "none"


def otlp_telemetry(endpoint: str | None, env: Mapping[str, str] | None = None
                   ) -> tuple[Telemetry, Callable[[], None]]:
    """Telemetry exporting over OTLP/HTTP, and the function that flushes and stops it.

    Args:
        endpoint: the receiver's base URL (``/v1/traces`` and ``/v1/metrics`` are appended);
            None: from the ``OTEL_EXPORTER_OTLP_*`` variables.
        env: the environment (default: ``os.environ``).
    """
    env = os.environ if env is None else env
    protocol = env.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf").strip().lower()
    if protocol not in ("", "http/protobuf"):
        raise UserError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not supported: reactloop "
                        "exports OTLP over HTTP; set it to http/protobuf (or unset it)")
    if endpoint is not None and not endpoint.startswith(("http://", "https://")):
        raise UserError(f"--otlp needs the receiver's http:// or https:// URL, got "
                        f"{endpoint!r} (e.g. --otlp http://127.0.0.1:4318)")
    base = endpoint.rstrip("/") if endpoint else None
    # OTEL_RESOURCE_ATTRIBUTES comes in through the SDK; the service is named "reactloop"
    # unless the variables name it
    named = "service.name=" in env.get("OTEL_RESOURCE_ATTRIBUTES", "")
    service = env.get("OTEL_SERVICE_NAME") or (None if named else "reactloop")
    resource = Resource.create({SERVICE_NAME: service} if service else {})
    tracer_provider = TracerProvider(resource=resource)
    if not _off(env, "OTEL_TRACES_EXPORTER"):
        tracer_provider.add_span_processor(BatchSpanProcessor(
            OTLPSpanExporter(endpoint=f"{base}/v1/traces" if base else None)))
    readers = [] if _off(env, "OTEL_METRICS_EXPORTER") else [PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=f"{base}/v1/metrics" if base else None))]
    meter_provider = MeterProvider(resource=resource, metric_readers=readers)
    content = env.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "")
    telemetry = Telemetry(tracer_provider, meter_provider,
                          include_content=content.strip().lower() == "true")

    def stop() -> None:
        millis = int(FLUSH_SECONDS * 1000)
        tracer_provider.force_flush(millis)
        tracer_provider.shutdown()
        meter_provider.shutdown(timeout_millis=millis)

    return telemetry, stop

