"""``Agent.run`` makes no event that nobody reads (issue 28): without a stream or
instrumentation only callbacks and the ``run_end`` see the events, so ``iteration_start``,
``request`` and ``model_response`` are never built, nor tool events without callbacks, nor
the request's token count when no limit or compaction needs it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reactloop import Agent, ModelResponse, ToolCall, _loop, tool
from reactloop.context import _manager, _tokens
from reactloop.events import IterationStartEvent, ModelResponseEvent, RequestEvent, ToolCallEvent
from reactloop.testing import ScriptedModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script() -> ScriptedModel:
    return ScriptedModel([ModelResponse(tool_calls=[ToolCall("add", {"a": 1, "b": 2})]),
                          ModelResponse(tool_calls=[ToolCall("add", {"a": 3, "b": 4})]),
                          ModelResponse(text="7")])


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The types of the events the loop builds (and token counts taken), as they are made."""
    out: list[str] = []

    def counting(cls: Any) -> Any:
        def make(*args: Any, **kwargs: Any) -> Any:
            out.append(cls.type)
            return cls(*args, **kwargs)
        return make

    for cls in (IterationStartEvent, ModelResponseEvent, ToolCallEvent):
        monkeypatch.setattr(_loop, cls.__name__, counting(cls))
    monkeypatch.setattr(_manager, "RequestEvent", counting(RequestEvent))
    request = _tokens.TokenCounter.request

    def sized(self: Any, *args: Any, **kwargs: Any) -> Any:
        out.append("sized")
        return request(self, *args, **kwargs)

    monkeypatch.setattr(_tokens.TokenCounter, "request", sized)
    return out


def test_run_builds_no_event_that_nobody_reads(made: list[str]) -> None:
    result = Agent(model=script(), tools=[add]).run_sync("Add.")
    assert result.output == "7" and result.metrics.tool_calls == 2
    assert made == []


def test_a_stream_still_gets_every_event(made: list[str]) -> None:
    async def go() -> list[str]:
        return [e.type async for e in Agent(model=script(), tools=[add]).stream("Add.")]

    types = asyncio.run(go())
    assert types.count("iteration_start") == types.count("model_response") == 3
    assert types.count("request") == 3 and types.count("tool_call") == 2
    assert made.count("model_response") == 3 and made.count("sized") == 3


def test_a_memory_limit_still_sizes_requests_in_a_quiet_run(made: list[str]) -> None:
    result = Agent(model=script(), tools=[add], max_tokens=100_000).run_sync("Add.")
    assert result.output == "7"
    assert made.count("sized") == 3 and "request" in made


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def on_start(self, event: Any) -> None:
        self.seen.append(("start", event.prompt))

    def on_action(self, event: Any) -> None:
        self.seen.append(("action", event.call.name))

    def on_observation(self, event: Any) -> None:
        self.seen.append(("observation", event.result.content))

    def on_step(self, step: Any) -> None:
        self.seen.append(("step", step.iteration))

    def on_finish(self, result: Any) -> None:
        self.seen.append(("finish", result.output))


def test_callbacks_see_the_same_in_run_and_in_stream() -> None:
    quiet, streamed = Recorder(), Recorder()
    Agent(model=script(), tools=[add], callbacks=[quiet]).run_sync("Add.")

    async def go() -> None:
        async for _ in Agent(model=script(), tools=[add], callbacks=[streamed]).stream("Add."):
            pass

    asyncio.run(go())
    assert quiet.seen == streamed.seen
    assert [k for k, _ in quiet.seen] == ["start", "action", "observation", "step", "action",
                                          "observation", "step", "step", "finish"]


SIZING = [
    ({}, None, None, False),                      # no compaction, no limit
    ({"max_messages": 4}, None, None, True),
    ({"max_tokens": 1_000}, None, None, True),
    ({"compaction": True}, None, None, False),     # compaction without a window: nothing to do
    ({"compaction": True}, 8_000, None, True),     # its own window
    ({"compaction": True}, None, 8_000, True),     # the model's window
    ({}, None, 8_000, False),                      # a window but no compaction
]


@pytest.mark.parametrize(("limits", "compaction_window", "model_window", "sizes"), SIZING)
def test_a_request_is_sized_exactly_when_a_limit_or_a_window_needs_it(
        limits: dict[str, Any], compaction_window: int | None, model_window: int | None,
        sizes: bool) -> None:
    """``ContextPolicy.sizes`` (read before every model call, its ``window()`` inlined)."""
    model = ScriptedModel([])
    model.context_window = model_window
    if limits.pop("compaction", False):
        limits["compaction"] = _manager.Compaction(context_window=compaction_window)
    policy = _manager.ContextPolicy(model, **limits)
    assert policy.sizes() is sizes
    if "compaction" in limits:
        assert policy.sizes() is (policy.window() is not None)


@pytest.mark.parametrize(("limits", "compaction_window", "model_window", "sizes"), SIZING)
def test_a_quiet_run_sizes_its_requests_exactly_when_the_policy_says_so(
        made: list[str], limits: dict[str, Any], compaction_window: int | None,
        model_window: int | None, sizes: bool) -> None:
    """The loop reads ``ContextPolicy.sizes()`` inlined before every model call (issue 28):
    it must agree with the policy in every case."""
    model = script()
    model.context_window = model_window
    compaction = limits.get("compaction", False) and _manager.Compaction(
        context_window=compaction_window)
    agent = Agent(model=model, tools=[add], **{**limits, "compaction": compaction})
    assert agent.spec.context.sizes() is sizes
    assert agent.run_sync("Add.").output == "7"
    assert made.count("sized") == (3 if sizes else 0)
