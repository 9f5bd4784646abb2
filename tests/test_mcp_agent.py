"""An agent run with ``Agent(mcp_servers=[...])``: a ScriptedModel calls tools on the real
mcp-server-time and mcp-server-git, and their real answers come back as tool results."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import MCP_DEMO_SERVER, descendant_pids, run
from reactloop import Agent, ModelResponse, RunResult, RunState, ToolCall
from reactloop.mcp import MCPServer, MCPServerError
from reactloop.testing import ScriptedModel

pytestmark = pytest.mark.slow


def make_repo(path: Path) -> Path:
    path.mkdir()
    for args in (
        ["init", "-q"],
        ["config", "user.email", "t@example.com"],
        ["config", "user.name", "Tester"],
    ):
        subprocess.run(["git", *args], cwd=path, check=True)
    (path / "plan.txt").write_text("v1\n")
    subprocess.run(["git", "add", "plan.txt"], cwd=path, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "Add the flight plan"], cwd=path, check=True)
    (path / "plan.txt").write_text("v2\n")
    return path


def test_agent_calls_tools_on_two_real_mcp_servers(tmp_path: Path) -> None:
    repo = str(make_repo(tmp_path / "repo"))
    time_server = MCPServer.stdio(sys.executable, ["-m", "mcp_server_time"])
    git_server = MCPServer.stdio(sys.executable, ["-m", "mcp_server_git", "-r", repo])
    model = ScriptedModel(
        [
            ModelResponse(
                tool_calls=[
                    ToolCall(
                        "time_convert_time",
                        {
                            "source_timezone": "UTC",
                            "time": "12:00",
                            "target_timezone": "Asia/Tokyo",
                        },
                        id="c1",
                    ),
                    ToolCall("git_log", {"repo_path": repo}, id="c2"),
                ]
            ),
            ModelResponse(tool_calls=[ToolCall("git_status", {"repo_path": repo}, id="c3")]),
            ModelResponse(text="Noon UTC is 21:00 in Tokyo; plan.txt has uncommitted changes."),
        ]
    )
    agent = Agent(model=model, mcp_servers=[time_server, git_server])
    before = descendant_pids()
    result = run(agent.run("What time is noon UTC in Tokyo, and what changed in the repo?"))

    assert result.state is RunState.COMPLETED, result.error
    converted, log = result.steps[0].results
    (status,) = result.steps[1].results
    assert converted.ok and converted.result["target"]["datetime"].endswith("T21:00:00+09:00")
    assert '"time_difference":"+9.0h"' in converted.content  # what the model was sent
    assert log.ok and "Add the flight plan" in log.content
    assert status.ok and "plan.txt" in status.content and "modified" in status.content
    # the model saw the servers' tools with their schemas passed through unchanged
    offered = {t.name: t for t in model.requests[0].tools}
    assert {"time_get_current_time", "time_convert_time", "git_status"} <= set(offered)
    assert offered["time_convert_time"].parameters["required"] == [
        "source_timezone",
        "time",
        "target_timezone",
    ]
    assert model.requests[1].messages[-1].content == log.content
    assert descendant_pids() <= before  # both servers stopped with the run


def test_optional_server_that_fails_is_skipped_and_the_run_goes_on() -> None:
    broken = MCPServer.stdio("reactloop-no-such-mcp-server", name="extra", required=False)
    demo = MCPServer.stdio(sys.executable, [MCP_DEMO_SERVER], name="demo")
    model = ScriptedModel([ToolCall("demo_echo", {"text": "hello"}), "done"])

    async def main() -> list[object]:
        return [e async for e in Agent(model=model, mcp_servers=[broken, demo]).stream("go")]

    events = run(main())
    warnings = [e for e in events if e.type == "custom" and e.name == "mcp_warning"]
    assert [w.data["kind"] for w in warnings] == ["skipped"]
    assert warnings[0].data["server"] == "extra"
    end = events[-1]
    assert end.result.state is RunState.COMPLETED
    assert end.result.steps[0].results[0].content == "hello"
    assert "extra_" not in " ".join(t.name for t in model.requests[0].tools)


def test_required_server_that_fails_ends_the_run_with_its_error(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    marker.touch()
    broken = MCPServer.stdio(
        sys.executable, [MCP_DEMO_SERVER, "--fail-if-exists", str(marker)], name="broken"
    )
    model = ScriptedModel(["never asked"])
    result = run(Agent(model=model, mcp_servers=[broken]).run("go"))
    assert result.state is RunState.ERROR
    assert isinstance(result.error, MCPServerError)
    assert "refusing to start" in str(result.error)
    assert model.requests == []  # failed fast, before the model was called


def test_crash_mid_run_gives_the_model_an_error_result_naming_the_server() -> None:
    demo = MCPServer.stdio(sys.executable, [MCP_DEMO_SERVER], name="demo")
    model = ScriptedModel(
        [ToolCall("demo_crash", {}), ToolCall("demo_echo", {"text": "after"}), "ok"]
    )
    result = run(Agent(model=model, mcp_servers=[demo]).run("go"))
    crashed = result.steps[0].results[0]
    assert not crashed.ok and "MCP server 'demo' stopped" in (crashed.error or "")
    assert result.steps[1].results[0].content == "after"  # restarted for the next call


def test_one_server_kept_open_across_several_runs() -> None:
    """The session-scoped way: open the server once and hand its tools to the agent."""
    demo = MCPServer.stdio(sys.executable, [MCP_DEMO_SERVER], name="demo")

    async def main() -> tuple[object, object]:
        async with demo.open(lambda name, data: None) as tools:
            model = ScriptedModel(
                [ToolCall("demo_pid", {}), "first", ToolCall("demo_pid", {}), "second"]
            )
            agent = Agent(model=model, tools=tools)
            first = await agent.run("pid?")
            second = await agent.run("pid again?")
            return first.steps[0].results[0].result, second.steps[0].results[0].result

    first_pid, second_pid = run(main())
    assert first_pid == second_pid  # the same server process served both runs


def test_run_timeout_and_cancellation_stop_the_servers() -> None:
    before = descendant_pids()

    def agent(**kwargs: object) -> Agent:
        demo = MCPServer.stdio(sys.executable, [MCP_DEMO_SERVER], name="demo")
        model = ScriptedModel([ToolCall("demo_slow", {"seconds": 600}), "never"])
        return Agent(model=model, mcp_servers=[demo], **kwargs)  # type: ignore[arg-type]

    timed_out = run(agent(max_execution_time=2).run("go"))
    assert timed_out.state is RunState.TIMED_OUT
    assert descendant_pids() <= before

    ended: list[RunState] = []

    class Ended:
        def on_finish(self, result: RunResult) -> None:
            ended.append(result.state)

    async def cancel_mid_call() -> bool:
        task = asyncio.create_task(agent(callbacks=[Ended()]).run("go"))
        deadline = time.monotonic() + 60
        while not descendant_pids() - before:  # wait for the server to be running
            assert time.monotonic() < deadline, "the server never started"
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):  # cancellation propagates to the caller
            await task
        return task.cancelled()

    assert run(cancel_mid_call()) is True
    assert ended == [RunState.CANCELLED]
    assert descendant_pids() <= before
