"""Review fixes for issue 24 (agents as tools and handoffs): a handoff batched with an agent
call while streaming opens the target's sources in the loop's own task; each agent's usage
share is its own; agent names that cannot be tool names are refused naming the fix."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio
import pytest

from reactloop import Agent, ModelResponse, RunState, Tool, ToolCall, UserError, tool
from reactloop.events import Event, RunEndEvent
from reactloop.messages import Usage
from reactloop.testing import ScriptedModel
from reactloop.tools._source import Emit


@tool
def lookup(order: str) -> str:
    """Look an order up.

    Args:
        order: the order number
    """
    return f"order {order}: 5 EUR"


class TaskGroupSource:
    """A tool source that, like an MCP client, keeps an anyio task group open while open."""

    name = "orders"

    def __init__(self) -> None:
        self.closed = False

    def open(self, emit: Emit) -> AsyncIterator[Sequence[Tool]]:
        return self._open()  # type: ignore[return-value]

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[Sequence[Tool]]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.sleep_forever)
            try:
                yield [lookup]
            finally:
                tg.cancel_scope.cancel()
                self.closed = True


def said(text: str, tokens: int) -> ModelResponse:
    return ModelResponse(text, usage=Usage(tokens, tokens))


def called(*calls: ToolCall, tokens: int) -> ModelResponse:
    return ModelResponse(tool_calls=list(calls), usage=Usage(tokens, tokens))


def test_a_handoff_batched_with_an_agent_call_opens_the_targets_sources_when_streaming() -> None:
    source = TaskGroupSource()
    billing = Agent(ScriptedModel([ToolCall("lookup", {"order": "A1"}), "A1 costs 5 EUR."]),
                    name="billing", mcp_servers=[source])
    helper = Agent(ScriptedModel(["noted"]), name="helper")
    triage = Agent(ScriptedModel([called(ToolCall("helper", {"task": "note it"}),
                                         ToolCall("transfer_to_billing", {}), tokens=1)]),
                   name="triage", tools=[helper.as_tool()], handoffs=[billing])

    async def go() -> list[Event]:
        return [e async for e in triage.stream("what does A1 cost?")]

    events = asyncio.run(go())
    result = next(e.result for e in events
                  if isinstance(e, RunEndEvent) and e.parent_run_id is None)
    assert result.state is RunState.COMPLETED, result.text
    assert (result.agent, result.output) == ("billing", "A1 costs 5 EUR.")
    assert source.closed


def test_each_agent_of_a_handoff_gets_its_own_usage() -> None:
    billing = Agent(ScriptedModel([said("5 EUR.", 7)]), name="billing")
    triage = Agent(ScriptedModel([called(ToolCall("transfer_to_billing", {}), tokens=100)]),
                   name="triage", handoffs=[billing])
    result = triage.run_sync("my bill?")
    shares = result.metrics_by_agent
    assert sorted(shares) == ["billing", "triage"]
    assert (shares["triage"].input_tokens, shares["triage"].output_tokens) == (100, 100)
    assert (shares["billing"].input_tokens, shares["billing"].output_tokens) == (7, 7)
    assert shares["triage"].tool_calls == 1 and shares["billing"].tool_calls == 0
    assert shares["triage"].iterations == 1
    assert (result.metrics.input_tokens, result.metrics.output_tokens) == (107, 107)


def test_a_handoff_back_adds_to_the_agents_share() -> None:
    billing = Agent(ScriptedModel([called(ToolCall("transfer_to_triage", {}), tokens=7)]),
                    name="billing")
    triage = Agent(ScriptedModel([called(ToolCall("transfer_to_billing", {}), tokens=100),
                                  said("done", 3)]),
                   name="triage", handoffs=[billing])
    billing = Agent(billing.model, name="billing", handoffs=[triage])
    triage = Agent(triage.model, name="triage", handoffs=[billing])
    result = triage.run_sync("my bill?")
    assert result.agent == "triage", result.text
    shares = result.metrics_by_agent
    assert shares["triage"].input_tokens == 103 and shares["billing"].input_tokens == 7


def test_a_sub_agent_named_like_its_caller_is_refused() -> None:
    sub = Agent(ScriptedModel([]))
    with pytest.raises(UserError, match=r"both named 'agent'.*Agent\(name=\.\.\.\)"):
        Agent(ScriptedModel([]), tools=[sub.as_tool(name="helper")])
    Agent(ScriptedModel([]), name="boss", tools=[sub.as_tool()])  # distinct names are fine


def test_an_agent_name_that_is_no_tool_name_is_refused_naming_the_fix() -> None:
    spaced = Agent(ScriptedModel([]), name="Flight Booking")
    with pytest.raises(UserError, match=r"'Flight Booking'.*rename the agent") as handoff:
        Agent(ScriptedModel([]), handoffs=[spaced])
    assert "@tool" not in str(handoff.value)
    with pytest.raises(UserError, match=r"'Flight Booking'.*as_tool\(name=\.\.\.\)") as sub:
        spaced.as_tool()
    assert "@tool" not in str(sub.value)
    assert spaced.as_tool(name="flight_booking").name == "flight_booking"
    with pytest.raises(UserError, match=r"as_tool\(name='a b'\).*as_tool\(name='a_b'\)"):
        spaced.as_tool(name="a b")
