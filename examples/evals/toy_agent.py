"""A toy agent for trying `reactloop eval` without a model: a scripted function stands in for
the model. It reads two numbers, calls add or subtract — but it drops the last digit of the
first number when subtracting, the kind of slip a tiny model makes — and answers from the
tool's result. Used by the README's eval example and its test."""

from __future__ import annotations

import re

from reactloop import Agent, ModelRequest, ModelResponse, ToolCall, Usage, tool
from reactloop.testing import FunctionModel


@tool
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


@tool
def subtract(a: float, b: float) -> float:
    """Subtract b from a.

    Args:
        a: the number to subtract from
        b: the number to subtract
    """
    return a - b


def toy_model(request: ModelRequest) -> ModelResponse:
    last = request.messages[-1]
    usage = Usage(len(request.system + last.content) // 4, 12)  # a stand-in token count
    if last.role == "tool":
        return ModelResponse(f"The answer is {float(last.content):g}.", usage=usage)
    numbers = [int(n) for n in re.findall(r"\d+", last.content)]
    if "plus" in last.content and len(numbers) == 2:
        call = ToolCall("add", {"a": numbers[0], "b": numbers[1]})
    elif "minus" in last.content and len(numbers) == 2:
        call = ToolCall("subtract", {"a": numbers[0] // 10, "b": numbers[1]})  # the slip
    else:
        return ModelResponse("I cannot answer that.", usage=usage)
    return ModelResponse(tool_calls=[call], usage=usage)


agent = Agent(model=FunctionModel(toy_model), tools=[add, subtract])
