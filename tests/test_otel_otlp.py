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


def test_setup_installs_the_phoenix_version_the_tests_name() -> None:
    from pathlib import Path

    setup = (Path(__file__).resolve().parents[1] / "scripts" / "test_setup.py").read_text()
    assert f'PHOENIX_VERSION = "{_phoenix.VERSION}"' in setup


def _readme_commands() -> list[tuple[dict[str, str], list[str]]]:
    """The README's two command-line ways to turn tracing on: (environment, argv) each."""
    import re
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    [block] = [b for b in re.findall(r"```text\n(.*?)```", readme, flags=re.S)
               if "--otlp http" in b]
    out = []
    for line in block.strip().splitlines():
        words = shlex.split(line.split("#", 1)[0])
        env = dict(w.split("=", 1) for w in words if "=" in w and not w.startswith("-")
                   and w.split("=", 1)[0].isupper())
        out.append((env, [w for w in words if w.split("=", 1)[0] not in env]))
    return out


@pytest.mark.parametrize("way", [0, 1], ids=["--otlp", "OTEL_EXPORTER_OTLP_ENDPOINT"])
def test_the_readme_command_lines_trace_to_a_real_receiver(way: int, phoenix_url: str,
                                                           tmp_path: Any) -> None:
    import json

    from _cli import reactloop

    env, argv = _readme_commands()[way]
    assert argv[:2] == ["reactloop", "run"]
    argv = [phoenix_url if w.startswith("http://") else w for w in argv[1:]]
    env = {k: phoenix_url if v.startswith("http://") else v for k, v in env.items()}
    # the README's command with a scripted agent instead of the embedded model
    proc = reactloop(tmp_path, *argv, "--agent", "cli_agents:completed", "--json",
                     OTEL_METRICS_EXPORTER="none", **env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    run_id = json.loads(proc.stdout)["run_id"]
    [root] = _phoenix.wait_for(
        phoenix_url, lambda s: s["attributes"].get("reactloop.run.id") == run_id, 1)
    trace_id = root["context"]["trace_id"]
    spans = _phoenix.wait_for(phoenix_url, lambda s: s["context"]["trace_id"] == trace_id, 4)
    assert sorted(s["name"] for s in spans) == ["chat scripted", "chat scripted",
                                                "execute_tool add", "invoke_agent agent"]
    assert root["attributes"]["reactloop.run.state"] == "completed"


def test_a_bad_otlp_url_is_one_line_on_stderr(tmp_path: Any) -> None:
    from _cli import reactloop

    proc = reactloop(tmp_path, "run", "--agent", "cli_agents:completed", "--otlp",
                     "127.0.0.1:4318", "add")
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == [
        "reactloop: --otlp needs the receiver's http:// or https:// URL, got '127.0.0.1:4318' "
        "(e.g. --otlp http://127.0.0.1:4318)"]
