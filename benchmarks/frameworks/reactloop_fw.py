"""reactloop, driven by ``reactloop.testing.FunctionModel``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

NAME = "reactloop"
DIST = "reactloop"
IMPORT = "import reactloop"
PEER = False


def build(delay: float, n_calls: int, counter: list[int], *, inline: bool = False,
          async_tool: bool = False) -> Callable[[], Awaitable[int]]:
    from reactloop import Agent, ModelResponse, ToolCall, tool
    from reactloop.testing import FunctionModel

    # inline=True (where this reactloop has it) runs the sync tool on the event loop instead of
    # a worker thread; the default row uses the plain decorator, like the peers' rows
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: first addend
            b: second addend
        """
        counter[1] += 1
        return a + b

    async def add_async(a: int, b: int) -> int:
        return add(a, b)

    add_async.__doc__ = add.__doc__
    add_tool = (tool(name="add")(add_async) if async_tool
                else tool(inline=True)(add) if inline else tool(add))

    def reply(request: Any) -> ModelResponse:
        counter[0] += 1
        n = sum(1 for m in request.messages if m.role == "tool")
        if n < n_calls:
            return ModelResponse(tool_calls=[ToolCall("add", {"a": n, "b": 1})])
        return ModelResponse(text="done")

    async def slow_reply(request: Any) -> ModelResponse:
        await asyncio.sleep(delay)
        return reply(request)

    # a fake model that keeps no requests (issue 28's measure: thousands of live runs would
    # otherwise keep every request they sent, and their histories, until each run ends)
    try:
        model = FunctionModel(slow_reply if delay else reply, keep_requests=False)
    except TypeError:  # a reactloop from before keep_requests (measured side by side)
        model = FunctionModel(slow_reply if delay else reply)
        model.requests = _Forget()
    # max_iterations leaves room for n_calls + 1 model calls without budget notes
    agent = Agent(model=model, tools=[add_tool], max_iterations=n_calls + 5)

    async def run_once() -> int:
        result = await agent.run("Add the numbers.")
        assert result.output == "done", result.output
        return result.metrics.tool_calls

    return run_once


class _Forget(list):  # type: ignore[type-arg]
    """A list that keeps nothing (``FunctionModel.requests`` of an older reactloop)."""

    def append(self, item: Any) -> None:
        pass
