"""langgraph's prebuilt ReAct agent with a custom langchain-core ``BaseChatModel``."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

NAME = "langgraph"
DIST = "langgraph"
IMPORT = "import langgraph.prebuilt"
PEER = True


def build(delay: float, n_calls: int, counter: list[int]) -> Callable[[], Awaitable[int]]:
    warnings.filterwarnings("ignore")  # create_react_agent's deprecation notice
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: first addend
            b: second addend
        """
        counter[1] += 1
        return a + b

    class FakeChatModel(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "fake"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _reply(self, messages: list[Any]) -> ChatResult:
            counter[0] += 1
            n = sum(1 for m in messages if isinstance(m, ToolMessage))
            if n < n_calls:
                msg = AIMessage(content="", tool_calls=[
                    {"name": "add", "args": {"a": n, "b": 1}, "id": f"call_{n}",
                     "type": "tool_call"}])
            else:
                msg = AIMessage(content="done")
            return ChatResult(generations=[ChatGeneration(message=msg)])

        def _generate(self, messages: list[Any], stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> ChatResult:
            return self._reply(messages)

        async def _agenerate(self, messages: list[Any], stop: Any = None,
                             run_manager: Any = None, **kwargs: Any) -> ChatResult:
            if delay:
                await asyncio.sleep(delay)
            return self._reply(messages)

    graph = create_react_agent(FakeChatModel(), [add])
    config = {"recursion_limit": 2 * n_calls + 10}

    async def run_once() -> int:
        state = await graph.ainvoke({"messages": [("user", "Add the numbers.")]}, config)
        assert state["messages"][-1].content == "done"
        return sum(1 for m in state["messages"] if isinstance(m, ToolMessage))

    return run_once
