"""pydantic-ai (slim), driven by ``pydantic_ai.models.function.FunctionModel``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

NAME = "pydantic-ai"
DIST = "pydantic-ai-slim"
IMPORT = "import pydantic_ai"
PEER = True


def build(delay: float, n_calls: int, counter: list[int]) -> Callable[[], Awaitable[int]]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: first addend
            b: second addend
        """
        counter[1] += 1
        return a + b

    def reply(messages: list[Any], info: AgentInfo) -> ModelResponse:
        counter[0] += 1
        n = sum(1 for m in messages for p in getattr(m, "parts", ())
                if isinstance(p, ToolReturnPart))
        if n < n_calls:
            return ModelResponse(parts=[ToolCallPart("add", {"a": n, "b": 1})])
        return ModelResponse(parts=[TextPart("done")])

    async def slow_reply(messages: list[Any], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(delay)
        return reply(messages, info)

    agent = Agent(FunctionModel(slow_reply if delay else reply), tools=[add])

    async def run_once() -> int:
        result = await agent.run("Add the numbers.")
        assert result.output == "done", result.output
        return sum(1 for m in result.all_messages() for p in getattr(m, "parts", ())
                   if isinstance(p, ToolReturnPart))

    return run_once
