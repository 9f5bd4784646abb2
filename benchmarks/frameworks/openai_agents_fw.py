"""openai-agents, driven by a custom ``agents.models.interface.Model`` (tracing disabled)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from typing import Any

NAME = "openai-agents"
DIST = "openai-agents"
IMPORT = "import agents"
PEER = True


def build(delay: float, n_calls: int, counter: list[int]) -> Callable[[], Awaitable[int]]:
    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark-not-used")
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    set_tracing_disabled(True)

    @function_tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: first addend
            b: second addend
        """
        counter[1] += 1
        return a + b

    class FakeModel(Model):
        async def get_response(self, system_instructions: Any, input: Any, *args: Any,
                               **kwargs: Any) -> ModelResponse:
            counter[0] += 1
            if delay:
                await asyncio.sleep(delay)
            items = input if isinstance(input, list) else []
            n = sum(1 for it in items
                    if isinstance(it, dict) and it.get("type") == "function_call_output")
            out: list[Any]
            if n < n_calls:
                out = [ResponseFunctionToolCall(
                    type="function_call", call_id=f"call_{n}", name="add", id=f"fc_{n}",
                    arguments=json.dumps({"a": n, "b": 1}))]
            else:
                out = [ResponseOutputMessage(
                    id="msg", type="message", role="assistant", status="completed",
                    content=[ResponseOutputText(type="output_text", text="done",
                                                annotations=[])])]
            return ModelResponse(output=out, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    agent = Agent(name="bench", instructions="You are a helpful assistant.", tools=[add],
                  model=FakeModel())

    async def run_once() -> int:
        result = await Runner.run(agent, "Add the numbers.", max_turns=n_calls + 5)
        assert result.final_output == "done", result.final_output
        return sum(1 for it in result.new_items if type(it).__name__ == "ToolCallOutputItem")

    return run_once
