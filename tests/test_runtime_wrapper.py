"""RuntimeWrapper: a runtime around another one that overrides only what it observes."""

from __future__ import annotations

import asyncio
from typing import Any

from reactloop import Agent, ModelResponse, RunState, ToolCall
from reactloop.messages import ModelRequest
from reactloop.models._base import Model
from reactloop.runtime import LocalRuntime, OnRetry, RuntimeWrapper
from reactloop.testing import ScriptedModel


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


class CountingModelCalls(RuntimeWrapper):
    """Overrides the model call only: the clock, ids, tools and streaming pass through."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.calls = 0

    async def call_model(self, model: Model, request: ModelRequest, *,
                         on_retry: OnRetry) -> ModelResponse:
        self.calls += 1
        return await self.inner.call_model(model, request, on_retry=on_retry)


def _model() -> ScriptedModel:
    return ScriptedModel([ModelResponse(tool_calls=[ToolCall("add", {"a": 2, "b": 3})]),
                          ModelResponse(text="5")])


def test_a_wrapper_overriding_one_method_runs_a_whole_run() -> None:
    runtime = CountingModelCalls(LocalRuntime())
    result = Agent(_model(), tools=[add], runtime=runtime).run_sync("2+3?")
    assert result.state is RunState.COMPLETED and result.output == "5"
    assert runtime.calls == 2
    assert [r.content for s in result.steps for r in s.results] == ["5"]


def test_everything_not_overridden_goes_to_inner() -> None:
    class Clock(LocalRuntime):
        def now(self) -> float:
            return 1234.0

        def new_id(self) -> str:
            return "fixed-id"

    wrapper = RuntimeWrapper(Clock())
    assert wrapper.now() == 1234.0 and wrapper.new_id() == "fixed-id"

    async def streamed() -> list[Any]:
        agent = Agent(_model(), tools=[add], runtime=RuntimeWrapper(RuntimeWrapper(Clock())))
        return [e async for e in agent.stream("2+3?")]

    events = asyncio.run(streamed())
    assert events[-1].result.output == "5" and events[-1].result.run_id == "fixed-id"


def test_the_cli_wraps_a_loaded_agent_in_a_new_agent() -> None:
    """``--agent`` brings an Agent the user's module may share: the CLI's observed runtime
    goes into a new Agent with the same configuration, never into that one."""
    from reactloop.cli._build import with_runtime

    agent = Agent(_model(), tools=[add])
    before = agent.runtime
    counting = CountingModelCalls(before)
    new = with_runtime(agent, counting)
    assert agent.runtime is before and new is not agent and new.spec is agent.spec
    assert new.run_sync("2+3?").output == "5" and counting.calls == 2
