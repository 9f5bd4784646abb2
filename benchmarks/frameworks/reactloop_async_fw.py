"""reactloop with an ``async def`` tool: no worker thread and no inline flag needed (the row
the issue-11 targets use: ≤ 30 µs per tool-call iteration, ≥ 75 % of ideal at 1,000 runs)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

NAME = "reactloop (async tool)"
DIST = "reactloop"
IMPORT = "import reactloop"
PEER = False


def build(delay: float, n_calls: int, counter: list[int]) -> Callable[[], Awaitable[int]]:
    from reactloop import Agent, ModelResponse, ToolCall, tool
    from reactloop.testing import FunctionModel

    @tool
    async def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: first addend
            b: second addend
        """
        counter[1] += 1
        return a + b

    def reply(request: Any) -> ModelResponse:
        counter[0] += 1
        n = sum(1 for m in request.messages if m.role == "tool")
        if n < n_calls:
            return ModelResponse(tool_calls=[ToolCall("add", {"a": n, "b": 1})])
        return ModelResponse(text="done")

    async def slow_reply(request: Any) -> ModelResponse:
        await asyncio.sleep(delay)
        return reply(request)

    model = FunctionModel(slow_reply if delay else reply)
    agent = Agent(model=model, tools=[add], max_iterations=n_calls + 5)

    async def run_once() -> int:
        result = await agent.run("Add the numbers.")
        model.requests.clear()
        assert result.output == "done", result.output
        return result.metrics.tool_calls

    return run_once
