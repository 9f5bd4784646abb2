"""``reactloop mcp serve`` speaks more than tools: progress and log entries of long tools, and
approvals asked of the client's user by elicitation. Checked with the official ``mcp`` SDK's
client over stdio, on a 2025-11-25 connection (``mode="legacy"``, what most clients speak, the
MCP Inspector included) and on a 2026-07-28 one."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

import reactloop
from conftest import run

pytestmark = pytest.mark.slow

TOOLS_MODULE = '''
from pathlib import Path

from reactloop import Agent, ToolCall, tool
from reactloop.tools import ToolContext
from reactloop.testing import ScriptedModel


@tool(requires_approval=True)
def wipe(folder: str) -> str:
    """Delete everything in a folder."""
    Path("ran-wipe").write_text(folder)
    return f"wiped {folder}"


@tool
async def count(n: int, ctx: ToolContext) -> str:
    """Count to n, reporting progress."""
    for i in range(1, n + 1):
        ctx.emit("progress", {"progress": i, "total": n, "message": f"at {i}"})
    ctx.emit("note", {"counted": n})
    return f"counted to {n}"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    Path("ran-add").write_text("added")
    return a + b


TOOLS = [wipe, count]
agent = Agent(model=ScriptedModel([ToolCall("add", {"a": 1, "b": 2}), "The sum is 3."]),
              tools=[add], approve=True)
'''


def params(tmp_path: Path) -> Any:
    from mcp import StdioServerParameters

    (tmp_path / "served_tools.py").write_text(textwrap.dedent(TOOLS_MODULE))
    code = "import sys; from reactloop.cli import main; sys.exit(main())"
    src = str(Path(reactloop.__file__).resolve().parents[1])  # this reactloop, in the server
    return StdioServerParameters(
        command=sys.executable, cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": os.pathsep.join([src, str(tmp_path)])},
        args=["-c", code, "mcp", "serve", "--tools", "served_tools:TOOLS",
              "--agent", "served_tools:agent"])


def person(approve: bool | None, asked: list[str]) -> Any:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        if approve is None:
            return types.ElicitResult(action="cancel")
        return types.ElicitResult(action="accept", content={"approve": approve})
    return elicit


def test_a_client_that_can_elicit_is_asked_to_approve(tmp_path: Path) -> None:
    from mcp import Client

    async def call(approve: bool | None, tool: str, args: dict[str, Any]) -> Any:
        asked: list[str] = []
        async with Client(params(tmp_path), mode="legacy",
                          elicitation_callback=person(approve, asked)) as client:
            result = await client.call_tool(tool, args)
        return result, asked

    declined, asked = run(call(False, "wipe", {"folder": "/data"}))
    assert declined.is_error and "declined" in declined.content[0].text
    assert asked == ['The tool wipe needs your approval to run with {"folder": "/data"}.']
    assert not (tmp_path / "ran-wipe").exists()
    cancelled, _ = run(call(None, "wipe", {"folder": "/data"}))
    assert cancelled.is_error and not (tmp_path / "ran-wipe").exists()
    approved, _ = run(call(True, "wipe", {"folder": "/data"}))
    assert not approved.is_error and approved.content[0].text == "wiped /data"
    agent, asked = run(call(True, "run_agent", {"task": "1+2?"}))
    assert agent.content[0].text == "The sum is 3." and "add" in asked[0]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_progress_and_log_entries_of_long_tools(tmp_path: Path, mode: str) -> None:
    from mcp import Client

    progress: list[tuple[float, float | None, str | None]] = []
    logs: list[Any] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append((p, total, message))

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def main() -> None:
        async with Client(params(tmp_path), mode=mode, logging_callback=on_log,
                          log_level="debug") as client:
            result = await client.call_tool("count", {"n": 3}, progress_callback=on_progress)
            assert result.content[0].text == "counted to 3"
            progress.append((0, None, "agent"))
            await client.call_tool("run_agent", {"task": "1+2?"}, progress_callback=on_progress)

    run(main())
    assert progress[:4] == [(1, 3, "at 1"), (2, 3, "at 2"), (3, 3, "at 3"), (0, None, "agent")]
    assert progress[4] == (1, 10, "iteration 1")
    assert {"event": "note", "data": {"counted": 3}} in logs


def test_logging_set_level_filters_the_log_entries(tmp_path: Path) -> None:
    import warnings

    from mcp import Client

    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def main() -> None:
        async with Client(params(tmp_path), mode="legacy", logging_callback=on_log) as client:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.set_logging_level("warning")
            await client.call_tool("count", {"n": 1})

    run(main())
    assert logs == []  # the tool's event is an info entry, below the level asked for


def test_reactloop_as_client_approves_over_a_2026_connection(tmp_path: Path) -> None:
    """The 2026-07-28 way (no server-to-client requests): the approval question comes back
    as an input-required result, reactloop's client asks its handler and calls again."""
    from reactloop.mcp import ElicitationAnswer, MCPServer

    asked: list[str] = []

    def person(approve: bool) -> Any:
        def handler(request: Any) -> ElicitationAnswer:
            asked.append(request.message)
            return ElicitationAnswer.accept(approve=approve)
        return handler

    server_params = params(tmp_path)

    async def wipe(approve: bool) -> Any:
        server = MCPServer.stdio(server_params.command, server_params.args, name="served",
                                 env=server_params.env, cwd=server_params.cwd,
                                 elicitation=person(approve))
        async with server.open() as tools:
            (tool,) = [t for t in tools if t.name == "served_wipe"]
            return await tool.call({"folder": "/data"})

    from reactloop import ToolRetry

    with pytest.raises(ToolRetry, match="declined"):
        run(wipe(False))
    assert not (tmp_path / "ran-wipe").exists()
    assert run(wipe(True)) == "wiped /data"
    assert asked == ['The tool wipe needs your approval to run with {"folder": "/data"}.'] * 2
