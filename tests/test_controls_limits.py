"""Issue 27: usage limits end a run cleanly (USAGE_LIMIT, a usable answer, a valid history)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reactloop import (
    Agent,
    ModelResponse,
    RunState,
    ToolCall,
    Usage,
    UsageLimitExceeded,
    UsageLimits,
    UserError,
)
from reactloop.context import check_pairs
from reactloop.events import RunEndEvent
from reactloop.messages import ModelRequest
from reactloop.testing import FunctionModel, ScriptedModel


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _calls(n: int) -> list[Any]:
    return [ToolCall("add", {"a": i, "b": 1}) for i in range(n)]


def _ends_cleanly(result: Any, limit: str) -> None:
    assert result.state is RunState.USAGE_LIMIT
    assert result.error is None  # a clean ending, not a failure
    assert limit in result.output
    assert "What was done" in result.output or "No tools were called" in result.output
    assert not result.metrics.success
    check_pairs(result.messages)  # every tool call has its result: the next turn can go on


def test_max_requests_ends_the_run_before_the_call_that_would_pass_it() -> None:
    model = ScriptedModel([*_calls(3), "done"])
    result = Agent(model, tools=[add], usage_limits=UsageLimits(max_requests=2)).run_sync("go")
    _ends_cleanly(result, "max_requests=2")
    assert len(model.requests) == 2 and result.metrics.requests == 2
    assert "add(a=0, b=1) → 1" in result.output  # the usable answer says what was done


def test_max_tool_calls_runs_none_of_the_calls_that_would_pass_it() -> None:
    ran: list[int] = []

    def count(a: int) -> int:
        """Count."""
        ran.append(a)
        return a

    model = ScriptedModel([[ToolCall("count", {"a": 1}), ToolCall("count", {"a": 2})],
                           [ToolCall("count", {"a": 3}), ToolCall("count", {"a": 4})], "done"])
    result = Agent(model, tools=[count],
                   usage_limits=UsageLimits(max_tool_calls=3)).run_sync("go")
    _ends_cleanly(result, "max_tool_calls=3")
    assert ran == [1, 2] and result.metrics.tool_calls == 2


def test_max_input_tokens_is_checked_with_the_requests_counted_tokens() -> None:
    # the first request counts well under 400 tokens, the second (with a long tool result)
    # well over: it is never sent
    def big(n: int) -> str:
        """Return a long text."""
        return "word " * n

    model = ScriptedModel([ToolCall("big", {"n": 2000}), "done"])
    result = Agent(model, tools=[big],
                   usage_limits=UsageLimits(max_input_tokens=400)).run_sync("go")
    _ends_cleanly(result, "max_input_tokens=400")
    assert len(model.requests) == 1  # the request that would pass the limit was not sent
    assert "the request counts" in result.output


def test_max_output_and_total_tokens_end_the_run_after_the_call_that_passed_them() -> None:
    spoken = ModelResponse(text="thinking aloud", tool_calls=[ToolCall("add", {"a": 1, "b": 2})],
                           usage=Usage(10, 500))
    for limits, name in ((UsageLimits(max_output_tokens=100), "max_output_tokens=100"),
                         (UsageLimits(max_total_tokens=300), "max_total_tokens=300")):
        model = ScriptedModel([spoken, "done"])
        ran: list[object] = []
        result = Agent(model, tools=[_logged(ran)], usage_limits=limits).run_sync("go")
        _ends_cleanly(result, name)
        assert ran == []  # the response that passed the limit did not get its tools run
        assert len(model.requests) == 1


def _logged(ran: list[object]) -> Any:
    def add_logged(a: int, b: int) -> int:
        """Add."""
        ran.append((a, b))
        return a + b

    return add_logged


def test_a_final_answer_that_passes_a_limit_is_still_the_answer() -> None:
    model = ScriptedModel([ModelResponse(text="42", usage=Usage(10, 900))])
    result = Agent(model, usage_limits=UsageLimits(max_output_tokens=100)).run_sync("go")
    assert result.state is RunState.COMPLETED and result.output == "42"


def _gpt4o(fn: Any) -> FunctionModel:
    model = FunctionModel(fn)
    model.name, model.provider = "gpt-4o", "openai"
    return model


def test_max_cost_usd_uses_genai_prices_and_ends_before_the_tools_of_a_call_past_it() -> None:
    pytest.importorskip("genai_prices")
    reply = ModelResponse(tool_calls=[ToolCall("add", {"a": 1, "b": 2})],
                          usage=Usage(100_000, 1_000), model_name="gpt-4o")
    model = _gpt4o(lambda request: reply)
    # gpt-4o: $2.50 per million input tokens, $10 per million output: $0.26 a call
    result = Agent(model, tools=[add], max_iterations=20,
                   usage_limits=UsageLimits(max_cost_usd=0.70)).run_sync("go")
    _ends_cleanly(result, "max_cost_usd=0.7")
    assert len(model.requests) == 3 and result.metrics.tool_calls == 2
    assert result.metrics.cost_usd == pytest.approx(3 * 0.26)


def test_max_cost_usd_prices_the_counted_request_before_sending_it() -> None:
    pytest.importorskip("genai_prices")

    def big(n: int) -> str:
        """Return a long text."""
        return "word " * n

    model = _gpt4o(lambda request: ModelResponse(tool_calls=[ToolCall("big", {"n": 100_000})],
                                                 usage=Usage(100, 10)))
    # the second request counts about 125k tokens: about $0.31 of input alone
    result = Agent(model, tools=[big],
                   usage_limits=UsageLimits(max_cost_usd=0.10)).run_sync("go")
    _ends_cleanly(result, "max_cost_usd=0.1")
    assert len(model.requests) == 1 and "its input alone costs about $0.3" in result.output


def test_max_cost_usd_with_an_unknown_price_stops_before_any_call() -> None:
    model = ScriptedModel(["never sent"])
    result = Agent(model, usage_limits=UsageLimits(max_cost_usd=1.0)).run_sync("go")
    _ends_cleanly(result, "cannot be enforced")
    assert model.requests == [] and result.metrics.cost_usd == 0.0


def test_limits_hold_while_streaming_too() -> None:
    model = ScriptedModel([*_calls(3), "done"])
    agent = Agent(model, tools=[add], usage_limits=UsageLimits(max_requests=2))

    async def main() -> Any:
        return [e async for e in agent.stream("go")]

    events = asyncio.run(main())
    assert isinstance(events[-1], RunEndEvent)
    _ends_cleanly(events[-1].result, "max_requests=2")


def test_a_session_is_held_to_its_limits_across_sends() -> None:
    model = ScriptedModel([ToolCall("add", {"a": 1, "b": 1}), "two", "three", "never"])
    session = Agent(model, tools=[add]).conversation()
    session.usage_limits = UsageLimits(max_requests=3)
    assert session.send_sync("first").output == "two"
    assert session.send_sync("second").output == "three"
    third = session.send_sync("third")
    assert third.state is RunState.USAGE_LIMIT and "max_requests=3" in third.output
    assert session.usage["requests"] == 3 and len(model.requests) == 3


def test_sub_agents_count_toward_their_parents_limits() -> None:
    child_model = ScriptedModel([*_calls(5), "child done"])
    child = Agent(child_model, tools=[add], name="child")

    async def ask_child(task: str) -> str:
        """Ask the child agent."""
        result = await child.run(task)
        return f"{result.state.value}: {result.output}"

    parent_model = ScriptedModel([ToolCall("ask_child", {"task": "add things"}), "never"])
    parent = Agent(parent_model, tools=[ask_child], usage_limits=UsageLimits(max_requests=3))
    result = parent.run_sync("go")
    # the parent's first call, then the child's two: the child stops at the parent's limit
    assert len(parent_model.requests) == 1 and len(child_model.requests) == 2
    child_answer = result.steps[0].results[0].content
    assert child_answer.startswith("usage_limit:") and "max_requests=3" in child_answer
    _ends_cleanly(result, "max_requests=3")


def test_limits_are_validated_with_clear_errors() -> None:
    with pytest.raises(UserError, match="max_requests"):
        UsageLimits(max_requests=0)
    with pytest.raises(UserError, match="max_cost_usd"):
        UsageLimits(max_cost_usd=-1)
    with pytest.raises(UserError, match=r"usage_limits must be a reactloop\.UsageLimits"):
        Agent(ScriptedModel([]), usage_limits={"max_requests": 3})  # type: ignore[arg-type]


def test_without_limits_no_controls_are_built() -> None:
    assert Agent(ScriptedModel([])).spec.controls is None
    assert Agent(ScriptedModel([]), usage_limits=UsageLimits()).spec.controls is None


def test_usage_limit_exceeded_raised_inside_a_run_ends_it_usage_limit() -> None:
    def fn(request: ModelRequest) -> str:
        raise UsageLimitExceeded("the gateway's quota is spent", "quota")

    result = Agent(FunctionModel(fn)).run_sync("go")
    assert result.state is RunState.USAGE_LIMIT and "quota is spent" in result.output


def test_an_agent_called_as_a_tool_shares_its_callers_limits() -> None:
    child_model = ScriptedModel([*_calls(5), "child done"])
    child = Agent(child_model, tools=[add], name="math")
    parent_model = ScriptedModel([ToolCall("math", {"task": "add things"}), "never"])
    parent = Agent(parent_model, tools=[child.as_tool()], name="boss",
                   usage_limits=UsageLimits(max_requests=3))
    result = parent.run_sync("go")
    # the caller's first call, then two of the sub-agent's: the third would pass the limit
    assert len(parent_model.requests) == 1 and len(child_model.requests) == 2
    _ends_cleanly(result, "max_requests=3")
    assert result.metrics.requests == 3  # the sub-run's calls are in the caller's metrics
