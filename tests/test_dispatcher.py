"""Callbacks per iteration (issue 28): their methods are looked up once per run, and the events
reach them as before — in callback order, async methods awaited before the next callback
runs, a failing method logged and ignored."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from reactloop import Agent, RunState, tool
from reactloop.messages import ToolCall
from reactloop.testing import ScriptedModel


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def test_callbacks_see_every_event_in_order_sync_and_async(
        caplog: pytest.LogCaptureFixture) -> None:
    seen: list[str] = []

    class Sync:
        def on_start(self, event: Any) -> None:
            seen.append("sync start")

        def on_action(self, event: Any) -> None:
            seen.append(f"sync action {event.call.arguments['a']}")

        def on_step(self, step: Any) -> None:
            seen.append(f"sync step {step.iteration}")

        def on_finish(self, result: Any) -> None:
            seen.append("sync finish")

    class Async:
        async def on_action(self, event: Any) -> None:
            seen.append(f"async action {event.call.arguments['a']}")

        async def on_observation(self, event: Any) -> None:
            seen.append(f"async result {event.result.result}")
            raise RuntimeError("async callback bug")

        def on_step(self, step: Any) -> None:
            raise RuntimeError("sync callback bug")

    model = ScriptedModel([ToolCall("add", {"a": 1, "b": 2}), "done"])
    agent = Agent(model=model, tools=[add], callbacks=[Async(), Sync(), Async()])
    with caplog.at_level(logging.WARNING, logger="reactloop"):
        result = agent.run_sync("go")
    assert result.state is RunState.COMPLETED
    assert seen == ["sync start", "async action 1", "sync action 1", "async action 1",
                    "async result 3", "async result 3", "sync step 1", "sync step 2",
                    "sync finish"]
    failed = [r.getMessage() for r in caplog.records]
    assert failed == ["callback Async.on_observation failed; ignored",
                      "callback Async.on_observation failed; ignored",
                      "callback Async.on_step failed; ignored",
                      "callback Async.on_step failed; ignored",
                      "callback Async.on_step failed; ignored",
                      "callback Async.on_step failed; ignored"]
