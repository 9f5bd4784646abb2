"""Review fixes for issue 24 (agents as tools and handoffs): a handoff batched with an agent
call while streaming opens the target's sources in the loop's own task; each agent's usage
share is its own; agent names that cannot be tool names are refused naming the fix."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio

from reactloop import Agent, ModelResponse, RunState, Tool, ToolCall, tool
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
