"""smolagents' ``ToolCallingAgent`` with a custom ``smolagents.models.Model``.

smolagents has no async API: a run is a blocking call, so concurrent runs use one thread
each (``asyncio.to_thread`` on a pool as large as the number of runs) and the fake model
sleeps with ``time.sleep``. An agent holds its run's memory, so concurrent runs need one
agent each; sequential runs reuse one agent (``run`` resets its memory).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

NAME = "smolagents"
DIST = "smolagents"
IMPORT = "import smolagents"
PEER = True
THREADED = True  # concurrent runs need a thread each


def build(delay: float, n_calls: int, counter: list[int]) -> Callable[[], Awaitable[int]]:
    from smolagents import ToolCallingAgent, tool
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
        Model,
    )

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: first addend
            b: second addend
        """
        counter[1] += 1
        return a + b

    def role(m: Any) -> Any:
        return m.role if hasattr(m, "role") else m["role"]

    class FakeModel(Model):
        def generate(self, messages: list[Any], stop_sequences: Any = None,
                     response_format: Any = None, tools_to_call_from: Any = None,
                     **kwargs: Any) -> ChatMessage:
            counter[0] += 1
            if delay:
                time.sleep(delay)
            n = sum(1 for m in messages if role(m) == MessageRole.TOOL_RESPONSE)
            if n < n_calls:
                fn = ChatMessageToolCallFunction(name="add", arguments={"a": n, "b": 1})
            else:
                fn = ChatMessageToolCallFunction(name="final_answer", arguments={"answer": "done"})
            call = ChatMessageToolCall(function=fn, id=f"call_{n}", type="function")
            return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])

    model = FakeModel()

    def new_agent() -> Any:
        return ToolCallingAgent(tools=[add], model=model, max_steps=n_calls + 5,
                                verbosity_level=0)

    shared = new_agent()

    def run_sync(agent: Any) -> int:
        out = agent.run("Add the numbers.")
        assert out == "done", out
        return sum(1 for s in agent.memory.steps for c in (getattr(s, "tool_calls", None) or ())
                   if c.name == "add")

    if not delay:  # the sequential overhead workload: call straight through, no thread hop
        async def run_once() -> int:
            return run_sync(shared)
    else:
        async def run_once() -> int:
            return await asyncio.to_thread(run_sync, new_agent())

    return run_once
