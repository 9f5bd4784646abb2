"""A run's trace exported over OTLP/HTTP to a real receiver (Arize Phoenix on 127.0.0.1) and
read back from its REST API: the spans arrive as one trace, nested as they were made."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

import _phoenix
from reactloop import Agent, ModelResponse, ToolCall, Usage, _instrument, tool
from reactloop._otel._export import otlp_telemetry
from reactloop.testing import ScriptedModel


@tool
async def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


def test_a_run_exported_over_otlp_http_reads_back_from_phoenix(phoenix_url: str) -> None:
    model = ScriptedModel([
        ModelResponse(tool_calls=[ToolCall("add", {"a": 1, "b": 2}, "c1"),
                                  ToolCall("add", {"a": 3, "b": 4}, "c2")],
                      usage=Usage(40, 9), finish_reason="tool_calls"),
        ModelResponse(text="3 and 7", usage=Usage(60, 3), finish_reason="stop"),
    ])
    telemetry, stop = otlp_telemetry(phoenix_url, env={"OTEL_METRICS_EXPORTER": "none"})
    before = _instrument.set_active(telemetry)
    try:
        result = Agent(model=model, tools=[add], name="otlp-agent").run_sync("add twice")
    finally:
        _instrument.set_active(before)
        stop()  # flushes the batch processor
    assert result.output == "3 and 7"

    # find our run by its id, then everything Phoenix filed under the same trace
    runs = _phoenix.wait_for(
        phoenix_url, lambda s: s["attributes"].get("reactloop.run.id") == result.run_id, 1)
    assert len(runs) == 1, runs
    root = runs[0]
    trace_id = root["context"]["trace_id"]
    spans = _phoenix.wait_for(phoenix_url, lambda s: s["context"]["trace_id"] == trace_id, 5)
    by_name: dict[str, list[dict[str, Any]]] = {}
    for s in spans:
        by_name.setdefault(s["name"], []).append(s)
    assert sorted(by_name) == ["chat scripted", "execute_tool add", "invoke_agent otlp-agent"]
    assert len(by_name["chat scripted"]) == 2 and len(by_name["execute_tool add"]) == 2
    root_id = root["context"]["span_id"]
    assert root["parent_id"] is None
    assert all(s["parent_id"] == root_id for s in spans if s["context"]["span_id"] != root_id)
    assert sorted(s["attributes"]["gen_ai.tool.call.id"] for s in by_name["execute_tool add"]) \
        == ["c1", "c2"]
    chats = sorted(by_name["chat scripted"], key=lambda s: s["start_time"])
    assert [(c["attributes"]["gen_ai.usage.input_tokens"],
             c["attributes"]["gen_ai.usage.output_tokens"]) for c in chats] == [(40, 9), (60, 3)]
    assert chats[0]["attributes"]["gen_ai.response.finish_reasons"] == ["tool_calls"]
    attrs = root["attributes"]
    assert (attrs["gen_ai.operation.name"], attrs["gen_ai.agent.name"]) \
        == ("invoke_agent", "otlp-agent")
    assert (attrs["reactloop.usage.input_tokens"], attrs["reactloop.usage.output_tokens"]) \
        == (100, 12)
    assert "gen_ai.usage.input_tokens" not in attrs


def test_ci_installs_the_phoenix_version_the_tests_name() -> None:
    from pathlib import Path

    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    assert f'"arize-phoenix=={_phoenix.VERSION}"' in ci
