"""Test doubles at the model boundary (:class:`ScriptedModel`, :class:`FunctionModel`) and
:func:`capture_spans` for testing what a run traces.

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
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from reactloop.attachments import IMAGE_TYPES
from reactloop.errors import ModelError
from reactloop.messages import ModelRequest, ModelResponse, TextDelta, ToolCall, Usage
from reactloop.models._base import Model

if TYPE_CHECKING:
    from reactloop._otel._capture import CapturedSpans

__all__ = ["FunctionModel", "ScriptedModel", "capture_spans"]

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


def _accepts(accepts: Iterable[str] | None) -> frozenset[str]:
    """What a test double reads natively: every image type and PDF unless told (``()`` makes
    it text-only, like the embedded model)."""
    if accepts is None:
        return frozenset((*IMAGE_TYPES, "application/pdf"))
    return frozenset(accepts)


class ScriptedModel(Model):
    """Replays responses in order and records every request in :attr:`requests`.

    Items may be :class:`ModelResponse`, a string (a text answer), a :class:`ToolCall` or a list
    of them, or an exception instance (raised when its turn comes). Running out of responses
    raises :class:`ModelError`, so a test notices an unexpected extra model call.
    """

    name = "scripted"
    provider = "reactloop.testing"

    def __init__(self, responses: Iterable[ScriptItem], *, usage: bool = True,
                 accepts: Iterable[str] | None = None) -> None:
        self.accepts = _accepts(accepts)
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
    Every request is recorded in :attr:`requests`, unless ``keep_requests=False`` (a fake
    model for load tests and benchmarks: thousands of concurrent runs would otherwise keep
    every request they sent, each holding the history of its time, until the test clears
    the list).
    """

    name = "function"
    provider = "reactloop.testing"

    def __init__(
        self,
        fn: Callable[[ModelRequest], ScriptItem | Awaitable[ScriptItem]],
        *,
        context_window: int | None = None,
        accepts: Iterable[str] | None = None,
        keep_requests: bool = True,
    ) -> None:
        self.accepts = _accepts(accepts)
        self.fn = fn
        self.requests: list[ModelRequest] = []
        """The requests received, in order (stays empty with ``keep_requests=False``)."""
        self.keep_requests = keep_requests
        self.context_window = context_window
        self._is_async = inspect.iscoroutinefunction(fn)

    async def request(self, request: ModelRequest) -> ModelResponse:
        if self.keep_requests:
            self.requests.append(request)
        out: Any = self.fn(request)
        if type(out) is ModelResponse:  # the common reply: nothing to await or coerce
            return out
        if self._is_async or inspect.isawaitable(out):
            out = await out
        return _coerce(out)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        response = await self.request(request)
        async for item in _stream_words(response):
            yield item


@contextmanager
def capture_spans(*, include_content: bool = False,
                  redact: Callable[[str], str] | None = None) -> Iterator[CapturedSpans]:
    """Collect the OpenTelemetry spans and metrics of the runs inside the block, in memory.

    Instrumentation is on for every agent inside the block (except ``instrument=False``
    ones), as with :func:`reactloop.instrument`; what was on before comes back afterwards.
    Needs ``reactloop[otel]``::

        with capture_spans() as spans:
            agent.run_sync("What is 2+3?")
        run = spans.named("invoke_agent")[0]
        assert [s.name for s in spans.children(run)][0].startswith("chat ")

    The value is a list of finished spans (``opentelemetry.sdk.trace.ReadableSpan``) with
    ``named(name)``, ``children(span)`` and ``metrics()`` (read inside the block).

    Args:
        include_content: also record messages and tool arguments/results, as
            ``reactloop.instrument(include_content=True)`` would.
        redact: the content redaction hook, as for :func:`reactloop.instrument`.
    """
    from reactloop._instrument import require_otel

    require_otel("capture_spans()")
    from reactloop._otel._capture import captured

    with captured(include_content, redact) as spans:
        yield spans
