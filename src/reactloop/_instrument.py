"""Turning OpenTelemetry on: :func:`instrument` for every agent, ``Agent(instrument=True)`` for
one. The tracing itself lives in ``reactloop._otel`` and is imported only when it is turned on,
so ``import reactloop`` never imports OpenTelemetry and a run without it pays one global read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from reactloop.errors import UserError

if TYPE_CHECKING:
    from reactloop._otel._telemetry import Telemetry

__all__ = ["active", "for_agent", "instrument", "otlp_wanted", "require_otel", "set_active",
           "start_otlp"]

_active: Telemetry | None = None
"""What :func:`instrument` (or ``reactloop.testing.capture_spans``) turned on for all agents."""
_default: Telemetry | None = None
"""What ``Agent(instrument=True)`` uses when :func:`instrument` was not called: OpenTelemetry's
global providers, no content."""


def require_otel(what: str) -> None:
    """Raise a :class:`UserError` naming the extra when OpenTelemetry's SDK is missing."""
    import importlib.util

    try:
        found = all(importlib.util.find_spec(m) is not None
                    for m in ("opentelemetry.trace", "opentelemetry.sdk"))
    except (ImportError, ValueError):
        found = False
    if not found:
        raise UserError(f"{what} needs OpenTelemetry, which is not installed; install it with: "
                        "pip install 'reactloop[otel]'")


def instrument(tracer_provider: Any = None, meter_provider: Any = None,
               include_content: bool = False,
               redact: Callable[[str], str] | None = None) -> None:
    """Trace every agent's runs with OpenTelemetry (GenAI semantic conventions).

    A run becomes an ``invoke_agent {agent}`` span with a ``chat {model}`` span for each model
    call and an ``execute_tool {tool}`` span for each tool call (MCP tools included); token
    usage and call durations go to the ``gen_ai.client.token.usage`` and
    ``gen_ai.client.operation.duration`` histograms. ``Agent(instrument=False)`` opts one agent
    out; calling this again replaces the settings.

    Args:
        tracer_provider: where spans go (default: OpenTelemetry's global tracer provider).
        meter_provider: where metrics go (default: OpenTelemetry's global meter provider).
        include_content: also record the messages, the system prompt, tool arguments and tool
            results. Off by default: they may hold personal data. API keys are removed from
            them in any case.
        redact: ``fn(text) -> text`` applied to recorded content after reactloop's own key
            redaction (e.g. to mask personal data).
    """
    if not isinstance(include_content, bool):
        raise UserError(f"include_content must be True or False, got {include_content!r}")
    if redact is not None and not callable(redact):
        raise UserError(f"redact must be a function fn(text) -> text, got {redact!r}")
    require_otel("reactloop.instrument()")
    from reactloop._otel._telemetry import Telemetry

    set_active(Telemetry(tracer_provider, meter_provider, include_content=include_content,
                         redact=redact))


def active() -> Telemetry | None:
    """The telemetry turned on for all agents, if any."""
    return _active


def set_active(telemetry: Telemetry | None) -> Telemetry | None:
    """Turn ``telemetry`` on for all agents (None: off); returns what was on before."""
    global _active
    before, _active = _active, telemetry
    return before


def for_agent(setting: bool | None) -> Telemetry | None:
    """The telemetry a run of an agent with ``Agent(instrument=setting)`` uses, or None.

    ``None`` follows :func:`instrument`; ``False`` is off whatever was turned on globally;
    ``True`` is on, with :func:`instrument`'s settings when it was called."""
    if setting is False:
        return None
    if _active is not None or not setting:
        return _active
    global _default
    if _default is None:
        from reactloop._otel._telemetry import Telemetry

        _default = Telemetry(None, None)
    return _default


def otlp_wanted(endpoint: str | None, env: Mapping[str, str] | None = None) -> bool:
    """Whether the command line exports traces: ``--otlp URL`` or an OTLP endpoint variable
    (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``)."""
    env = os.environ if env is None else env
    return endpoint is not None or any(
        env.get(f"OTEL_EXPORTER_OTLP_{kind}ENDPOINT") for kind in ("", "TRACES_"))


def start_otlp(endpoint: str | None) -> Callable[[], None]:
    """Turn instrumentation on for all agents, exporting over OTLP/HTTP to ``endpoint`` (or
    where the ``OTEL_EXPORTER_OTLP_*`` variables say); returns the function that flushes what
    is left and stops (call it before the process exits)."""
    require_otel("--otlp (or OTEL_EXPORTER_OTLP_ENDPOINT)")
    from reactloop._otel._export import otlp_telemetry

    telemetry, stop = otlp_telemetry(endpoint)
    set_active(telemetry)
    return stop
