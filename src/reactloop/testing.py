"""Test doubles at the model boundary: :class:`ScriptedModel` and :class:`FunctionModel`.

Use them to test agents without a network or weights::

    model = ScriptedModel([
        ModelResponse(tool_calls=[ToolCall("add", {"a": 2, "b": 3})]),
        ModelResponse(text="5"),
    ])
    result = Agent(model=model, tools=[add]).run_sync("What is 2+3?")
    assert model.requests[1].messages[-1].content == "5"
"""

from __future__ import annotations

import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any

from reactloop.errors import ModelError
from reactloop.messages import ToolCall, Usage
from reactloop.models._base import Model, ModelRequest, ModelResponse, TextDelta

__all__ = ["FunctionModel", "ScriptedModel"]

ScriptItem = ModelResponse | str | ToolCall | Sequence[ToolCall] | BaseException


def _coerce(item: ScriptItem) -> ModelResponse:
    if isinstance(item, ModelResponse):
        return item
    if isinstance(item, str):
        return ModelResponse(text=item)
    if isinstance(item, ToolCall):
        return ModelResponse(tool_calls=[item])
    if isinstance(item, Sequence) and all(isinstance(c, ToolCall) for c in item):
        return ModelResponse(tool_calls=tuple(c for c in item if isinstance(c, ToolCall)))
    raise TypeError(f"cannot turn {item!r} into a ModelResponse")


def _usage_for(request: ModelRequest, response: ModelResponse) -> Usage:
    # a cheap, deterministic stand-in so token metrics are exercised in tests
    n_in = len(request.system) + sum(len(m.content) for m in request.messages)
    n_out = len(response.text or "") + sum(len(str(c.arguments)) for c in response.tool_calls)
    return Usage((n_in + 3) // 4, (n_out + 3) // 4)


async def _stream_words(response: ModelResponse) -> AsyncIterator[TextDelta | ModelResponse]:
    if response.text:
        for piece in re.findall(r"\S+\s*|\s+", response.text):
            yield TextDelta(piece)
    yield response


class ScriptedModel(Model):
    """Replays responses in order and records every request in :attr:`requests`.

    Items may be :class:`ModelResponse`, a string (a text answer), a :class:`ToolCall` or a list
    of them, or an exception instance (raised when its turn comes). Running out of responses
    raises :class:`ModelError`, so a test notices an unexpected extra model call.
    """

    name = "scripted"

    def __init__(self, responses: Iterable[ScriptItem], *, usage: bool = True) -> None:
        self._script = list(responses)
        self._next = 0
        self._usage = usage
        self.requests: list[ModelRequest] = []

    @property
    def remaining(self) -> int:
        return len(self._script) - self._next

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if self._next >= len(self._script):
            raise ModelError(
                f"ScriptedModel ran out of responses after {len(self._script)}; "
                "add more responses to the script"
            )
        item = self._script[self._next]
        self._next += 1
        if isinstance(item, BaseException):
            raise item
        response = _coerce(item)
        if self._usage and response.usage is None:
            response = ModelResponse(
                response.text,
                response.tool_calls,
                _usage_for(request, response),
                response.finish_reason,
                response.model_name,
            )
        return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        response = await self.request(request)
        async for item in _stream_words(response):
            yield item


class FunctionModel(Model):
    """Calls ``fn(request)`` (sync or async) for every model call.

    ``fn`` returns a :class:`ModelResponse`, a string, a :class:`ToolCall` or a list of them.
    """

    name = "function"

    def __init__(
        self,
        fn: Callable[[ModelRequest], ScriptItem | Awaitable[ScriptItem]],
        *,
        context_window: int | None = None,
    ) -> None:
        self.fn = fn
        self.requests: list[ModelRequest] = []
        self.context_window = context_window
        self._is_async = inspect.iscoroutinefunction(fn)

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        out: Any = self.fn(request)
        if self._is_async or inspect.isawaitable(out):
            out = await out
        return _coerce(out)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        response = await self.request(request)
        async for item in _stream_words(response):
            yield item
