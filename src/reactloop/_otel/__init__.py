"""OpenTelemetry for reactloop runs: GenAI spans, span events and metrics.

Imported only when instrumentation is turned on (``reactloop.instrument()``,
``Agent(instrument=True)``, ``reactloop.testing.capture_spans()``, ``reactloop run --otlp``).
The pieces:

- ``_telemetry.Telemetry``: the settings (tracer, histograms, content policy) and the run
  wrapper that makes the ``invoke_agent`` span and its span events from the run's events;
- ``_runtime.TracedRuntime``: a :class:`~reactloop.runtime.Runtime` around another one, making
  a ``chat`` span per model call and an ``execute_tool`` span per tool call;
- ``_content``: message and tool content as the conventions shape it, redacted;
- ``_export``: OTLP exporters for the command line; ``_capture``: spans in memory for tests.
"""
