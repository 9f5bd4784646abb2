"""What MCP servers tell the client while tools run: progress → ``mcp_progress`` events, log
messages → the ``reactloop.mcp`` logger, and a changed tool list → the new tools offered from
the next iteration on. Real servers: the reference server (stdio) and
tests/mcp_features_server.py (FastMCP: a 2026-07-28 connection)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from _mcp_servers import everything, features
from conftest import run
from reactloop import Agent, RunState, ToolCall
from reactloop.events import CustomEvent
from reactloop.testing import ScriptedModel

pytestmark = pytest.mark.slow


async def collect(agent: Agent, prompt: str) -> tuple[Any, list[Any]]:
    events = [ev async for ev in agent.stream(prompt)]
    return events[-1].result, [e for e in events if isinstance(e, CustomEvent)]


def custom(events: list[Any], name: str) -> list[Any]:
    return [e.data for e in events if e.name == name]


def test_progress_of_the_reference_servers_long_operation_becomes_events() -> None:
    model = ScriptedModel([
        ToolCall("everything_trigger-long-running-operation", {"duration": 0.3, "steps": 3}),
        "done",
    ])
    result, events = run(collect(Agent(model, mcp_servers=[everything()]), "go"))
    assert result.state is RunState.COMPLETED
    progress = custom(events, "mcp_progress")
    assert [(p["progress"], p["total"]) for p in progress] == [(1, 3), (2, 3), (3, 3)]
    assert {p["server"] for p in progress} == {"everything"}
    assert {p["tool"] for p in progress} == {"trigger-long-running-operation"}


def test_progress_messages_and_server_logs(caplog: pytest.LogCaptureFixture) -> None:
    model = ScriptedModel([ToolCall("features_work", {"steps": 2}), "done"])
    with caplog.at_level(logging.INFO, logger="reactloop.mcp"):
        result, events = run(collect(Agent(model, mcp_servers=[features()]), "go"))
    assert result.state is RunState.COMPLETED
    assert [p["message"] for p in custom(events, "mcp_progress")] == ["step 1", "step 2"]
    logged = [r for r in caplog.records if r.name == "reactloop.mcp.features"]
    assert [r.getMessage() for r in logged] == [
        "MCP server 'features' (worker): did step 1", "MCP server 'features' (worker): did step 2"]
    assert {r.levelno for r in logged} == {logging.WARNING}


def test_a_changed_tool_list_is_offered_from_the_next_iteration() -> None:
    model = ScriptedModel([ToolCall("features_unlock", {}), ToolCall("features_secret", {}),
                           "The secret is 42."])
    result, events = run(collect(Agent(model, mcp_servers=[features()]), "go"))
    assert result.state is RunState.COMPLETED, result.output
    offered = [[t.name for t in r.tools] for r in model.requests]
    assert "features_secret" not in offered[0]
    assert offered[1][: len(offered[0])] == offered[0]  # appended: the prefix stays
    assert offered[1][-1] == "features_secret"
    assert [m.content for m in result.messages if m.role == "tool"] == ["unlocked", "42"]
    assert custom(events, "mcp_tools_changed") == [{"server": "features",
                                                    "added": ["features_secret"]}]


def test_roots_are_offered_and_the_cli_offers_the_workspace(tmp_path) -> None:
    from reactloop.cli._mcp_client import configure_servers

    model = ScriptedModel([ToolCall("features_roots", {}), "done"])
    result = run(Agent(model, mcp_servers=[features(roots=[tmp_path])]).run("go"))
    assert [m.content for m in result.messages if m.role == "tool"] == [tmp_path.as_uri()]

    server = everything()
    configure_servers([server], workspace=str(tmp_path))  # what --workspace DIR does
    model = ScriptedModel([ToolCall("everything_get-roots-list", {}), "done"])
    result = run(Agent(model, mcp_servers=[server]).run("go"))
    listed = next(m.content for m in result.messages if m.role == "tool")
    assert f"URI: {tmp_path.resolve().as_uri()}" in listed


def test_progress_streams_while_the_tool_still_runs(tmp_path) -> None:
    """The server waits for a file the consumer creates only once it has seen the progress
    event: the event must reach the stream while the tool runs, not after the batch."""
    flag = tmp_path / "seen-progress"
    model = ScriptedModel([ToolCall("features_wait_for", {"path": str(flag)}), "done"])
    agent = Agent(model, mcp_servers=[features()])

    async def main() -> Any:
        async for event in agent.stream("go"):
            if isinstance(event, CustomEvent) and event.name == "mcp_progress":
                flag.write_text("yes")
            if event.type == "run_end":
                return event.result

    result = run(main())
    assert [m.content for m in result.messages if m.role == "tool"] == ["seen"]


def test_a_finished_run_is_not_kept_alive_by_the_servers_link() -> None:
    """A late log or progress goes to the last run seen while it lives, but the link (which
    lives as long as the connection) holds it weakly: a finished run's model, events and
    frame are freed."""
    import gc
    import weakref

    from reactloop.mcp import MCPServer
    from reactloop.mcp._client_side import ClientSide
    from reactloop.tools._source import CallerRun

    seen: list[Any] = []
    side = ClientSide(MCPServer.http("http://127.0.0.1:9/mcp", name="remote"), lambda *_: None)
    caller = CallerRun(object(), "run-1", lambda n, d: seen.append((n, d)), lambda i, o: None,
                       lambda tools: None, None)
    side.enter(caller)
    side.leave(caller)
    side._emit("mcp_log", {"message": "late"})  # after the call: still the run's
    assert seen == [("mcp_log", {"message": "late"})] and side.caller() is caller
    gone = weakref.ref(caller)
    del caller
    gc.collect()
    assert gone() is None and side.caller() is None
