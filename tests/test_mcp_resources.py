"""MCP resources and prompts: the model lists and reads a server's resources through two
tools; Python lists and reads them, and turns a server's prompt into messages. Real servers:
the reference server (stdio) and tests/mcp_features_server.py (FastMCP)."""

from __future__ import annotations

import pytest

from _mcp_servers import everything, features
from conftest import run
from reactloop import Agent, RunState, ToolCall, ToolRetry
from reactloop.testing import ScriptedModel

pytestmark = pytest.mark.slow


def test_the_model_lists_and_reads_the_reference_servers_resources() -> None:
    uri = "demo://resource/static/document/architecture.md"
    model = ScriptedModel([ToolCall("everything_list_resources", {}),
                           ToolCall("everything_read_resource", {"uri": uri}),
                           ToolCall("everything_read_resource", {"uri": "demo://nowhere"}),
                           "read it"])
    result = run(Agent(model, mcp_servers=[everything()]).run("Read the architecture doc."))
    assert result.state is RunState.COMPLETED
    offered = {t.name: t for t in model.requests[0].tools}
    assert offered["everything_read_resource"].parameters["required"] == ["uri"]
    listing, doc, missing = [m for m in result.messages if m.role == "tool"]
    assert uri in listing.content and "demo://resource/dynamic/text/{resourceId}" in listing.content
    assert "Architecture" in doc.content and not doc.is_error
    assert missing.is_error and "demo://nowhere" in missing.content


def test_resources_false_and_servers_without_resources_add_no_tools() -> None:
    async def names(server) -> list[str]:
        async with server.open() as tools:
            return [t.name for t in tools]

    assert "everything_read_resource" not in run(names(everything(resources=False)))
    assert "features_read_resource" in run(names(features()))


def test_python_reads_resources_and_gets_prompts() -> None:
    async def main() -> None:
        async with features().open() as server:
            listed = {r.uri: r for r in await server.list_resources()}
            assert listed["notes://today"].mime_type == "text/plain"
            assert listed["notes://day/{day}"].template
            assert await server.read_resource("notes://today") == "Buy milk. Call Ada."
            assert await server.read_resource("notes://day/monday") == "Notes of monday: nothing."
            (review,) = await server.list_prompts()
            assert review.name == "review"
            assert review.arguments == (("code", "", True), ("focus", "", False))
            messages = await server.get_prompt("review", {"code": "x = 1", "focus": "style"})
            assert [(m.role, m.content) for m in messages] == [
                ("user", "Review this code for style:\nx = 1")]
            with pytest.raises(ToolRetry, match="review"):
                await server.get_prompt("review", {})
        async with everything().open() as ref:
            messages = await ref.get_prompt("args-prompt", {"city": "Paris"})
            assert messages[0].content == "What's weather in Paris?"

    run(main())


@pytest.mark.parametrize("which", ["everything", "features"])
def test_resource_subscriptions_become_events(which: str) -> None:
    import asyncio
    import time

    from _mcp_servers import Events

    uri, trigger, args = {
        "everything": ("demo://resource/static/document/architecture.md",
                       "everything_toggle-subscriber-updates", {}),
        "features": ("notes://today", "features_touch", {}),
    }[which]
    events = Events()

    async def main() -> None:
        server = everything() if which == "everything" else features()
        async with server.open(events) as tools:
            await tools.subscribe_resource(uri)
            (tool,) = [t for t in tools if t.name == trigger]
            await tool.call(args)
            deadline = time.monotonic() + 30  # the reference server sends one every 5 s
            while not events.named("mcp_resource_updated"):
                assert time.monotonic() < deadline, "no mcp_resource_updated event"
                await asyncio.sleep(0.05)  # polling for the event, not waiting a fixed time

    run(main())
    assert events.named("mcp_resource_updated")[0] == {"server": which, "uri": uri}
