"""What the provider-adapter tests share: the loopback server fixture, a request, the calls
through an adapter (closing it after), the tools they offer and the error checks.

The Anthropic, Gemini and model-boundary tests drive the real SDKs against
:mod:`_recorded_server`; each builds its adapter with :func:`maker`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from _recorded_server import RecordedServer, Reply, recorded_server
from reactloop import tool
from reactloop.errors import ModelHTTPError
from reactloop.messages import Message
from reactloop.models import Model, ModelRequest, ModelResponse, TextDelta, ToolSpec
from reactloop.models._retry import RetryPolicy

ADD = ToolSpec("add", "Add two numbers.", {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]})
DONE = ToolSpec("task_completion", "Finish.", {"type": "object", "properties": {}})
FAST_RETRY = RetryPolicy(base_delay=0.01, jitter=0)


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    """A loopback server replaying queued replies (import it into the test module)."""
    with recorded_server() as s:
        yield s


def maker(cls: Callable[..., Any], name: str, key: str) -> Callable[..., Any]:
    """``make(server, **options)``: ``cls`` pointed at the server, retrying fast."""
    def make(server: RecordedServer, **kw: Any) -> Any:
        kw.setdefault("retry", FAST_RETRY)
        return cls(name, api_key=key, base_url=server.url, **kw)

    return make


def req(*messages: Message, **kw: Any) -> ModelRequest:
    return ModelRequest("You are terse.", messages or (Message.user("Hi"),), **kw)


def ask(model: Model, request: ModelRequest) -> ModelResponse:
    """``model.request(request)``, the model closed after."""
    async def go() -> ModelResponse:
        try:
            return await model.request(request)
        finally:
            await model.aclose()

    return asyncio.run(go())


def collect(model: Model, request: ModelRequest) -> list[TextDelta | ModelResponse]:
    """Everything ``model.stream(request)`` yields, the model closed after."""
    async def go() -> list[TextDelta | ModelResponse]:
        try:
            return [item async for item in model.stream(request)]
        finally:
            await model.aclose()

    return asyncio.run(go())


def fails_fast(server: RecordedServer, make: Callable[..., Model], reply: Reply
               ) -> ModelHTTPError:
    """The error of a client-error reply, checked to be raised at once, never retried."""
    server.queue(reply)
    waits: list[float] = []
    with pytest.raises(ModelHTTPError) as info:
        ask(make(server, on_retry=lambda n, w, e: waits.append(w)), req())
    assert info.value.status_code == reply.status and info.value.retryable is False
    assert waits == [] and len(server.requests) == 1
    return info.value


def retry_waits(server: RecordedServer, make: Callable[..., Model], *replies: Reply
                ) -> tuple[ModelResponse, list[tuple[int, float, int]]]:
    """The response after ``replies`` and each retry's ``(attempt, wait, status)``."""
    server.queue(*replies)
    waits: list[tuple[int, float, int]] = []
    model = make(server, on_retry=lambda n, wait, exc: waits.append(
        (n, wait, getattr(exc, "status_code", -1))))
    return ask(model, req()), waits


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
