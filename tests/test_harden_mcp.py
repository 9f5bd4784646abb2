"""An MCP stdio server that prints noise on stdout (issue 10): the SDK's traceback per noise
line is replaced by one ``mcp_warning`` naming it, and the server stays usable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import MCP_DEMO_SERVER, run
from reactloop import Agent, ModelResponse, RunState, ToolCall
from reactloop.testing import ScriptedModel

pytest.importorskip("mcp")


def test_stdout_noise_before_the_protocol_is_one_warning_and_the_server_works(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from reactloop.mcp import MCPServer

    noisy = tmp_path / "noisy_server.py"
    noisy.write_text(
        "import runpy, sys\n"
        "print('Starting demo server v1.0', flush=True)\n"
        "print('{not json either', flush=True)\n"
        f"sys.argv = [{MCP_DEMO_SERVER!r}]\n"
        f"runpy.run_path({MCP_DEMO_SERVER!r}, run_name='__main__')\n"
    )
    model = ScriptedModel([
        ModelResponse(tool_calls=[ToolCall("demo_echo", {"text": "hello"})]),
        ModelResponse(text="done"),
    ])
    server = MCPServer.stdio(sys.executable, [str(noisy)], name="demo")

    async def main() -> list[object]:
        return [e async for e in Agent(model=model, mcp_servers=[server]).stream("go")]

    events = run(main())
    end = events[-1]
    assert end.result.state is RunState.COMPLETED, end.result.error
    assert end.result.steps[0].results[0].content == "hello"
    warnings = [e.data for e in events if e.type == "custom" and e.name == "mcp_warning"]
    assert [w["kind"] for w in warnings] == ["stdout_noise"]
    assert ("it wrote 2 lines to stdout that are not JSON-RPC messages (the first: "
            "'Starting demo server v1.0')") in warnings[0]["message"]
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Failed to parse JSONRPC" not in err
