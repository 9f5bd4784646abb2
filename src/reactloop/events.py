"""The typed event stream of a run (feature L11) and the callback adapter fed from it.

``agent.stream()`` yields these in order; ``event.type`` is the name to switch on. Callbacks
(``on_start``, ``on_action``, ``on_observation``, ``on_step``, ``on_finish``, ``on_error``) are
derived from the same events, so both views always agree.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from reactloop.approvals import Decision, PendingApproval
from reactloop.attachments import Attachment
from reactloop.messages import ModelResponse, ToolCall
from reactloop.result import ToolResult

if TYPE_CHECKING:
    from reactloop.result import RunResult, Step

__all__ = [
    "ApprovalDecidedEvent",
    "ApprovalRequestedEvent",
    "Callbacks",
    "CompactionEvent",
    "CustomEvent",
    "Event",
    "FallbackEvent",
    "GuardrailEvent",
    "HandoffEvent",
    "IterationStartEvent",
    "ModelResponseEvent",
    "NoToolCallEvent",
    "PartialOutputEvent",
    "PlanUpdateEvent",
    "QueuedEvent",
    "RequestEvent",
    "RetryEvent",
    "RunEndEvent",
    "RunStartEvent",
    "TextDeltaEvent",
    "ToolCallEvent",
    "ToolErrorEvent",
    "ToolResultEvent",
    "WarningEvent",
]

log = logging.getLogger("reactloop")
_NESTING = frozenset(("agent", "parent_run_id"))


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened in a run. ``run_id`` is the run's own id; an event of a
    sub-run (an agent called as a tool) reaching its parent's stream also carries ``agent``
    (the sub-agent's name) and ``parent_run_id`` (the run that called it), so a consumer can
    nest it; both are ``None`` on the events of the top run."""

    type: ClassVar[str] = "event"
    run_id: str
    agent: str | None = field(default=None, kw_only=True)
    """The sub-agent whose run this is (``None`` at the top)."""
    parent_run_id: str | None = field(default=None, kw_only=True)
    """The run that called this sub-run (``None`` at the top)."""

    def to_dict(self) -> dict[str, Any]:
        """The event as JSON-ready data: ``{"type": ..., "run_id": ..., <fields>}`` (the one
        serialiser that the CLI's ``--json``, the server's SSE and the logs all use);
        ``agent`` and ``parent_run_id`` only on sub-run events."""
        d: dict[str, Any] = {"type": self.type}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.name in _NESTING:
                continue
            d[f.name] = _plain(value)
        return d


@dataclass(frozen=True, slots=True)
class RunStartEvent(Event):
    type: ClassVar[str] = "run_start"
    prompt: str
    model: str
    max_iterations: int


@dataclass(frozen=True, slots=True)
class IterationStartEvent(Event):
    type: ClassVar[str] = "iteration_start"
    iteration: int
    max_iterations: int


@dataclass(frozen=True, slots=True)
class RequestEvent(Event):
    """Sent before each model call: where the context goes, in tokens per section."""

    type: ClassVar[str] = "request"
    iteration: int
    tokens: Mapping[str, int]
    """``system``, ``tools``, ``history``, ``notes`` and ``total``."""


@dataclass(frozen=True, slots=True)
class TextDeltaEvent(Event):
    type: ClassVar[str] = "text_delta"
    iteration: int
    text: str


@dataclass(frozen=True, slots=True)
class ModelResponseEvent(Event):
    type: ClassVar[str] = "model_response"
    iteration: int
    response: ModelResponse
    cost_usd: float | None = None
    """What the call cost (US dollars, ``genai-prices``); None when the price is unknown."""


@dataclass(frozen=True, slots=True)
class ToolCallEvent(Event):
    type: ClassVar[str] = "tool_call"
    iteration: int
    call: ToolCall


@dataclass(frozen=True, slots=True)
class ToolResultEvent(Event):
    type: ClassVar[str] = "tool_result"
    iteration: int
    result: ToolResult


@dataclass(frozen=True, slots=True)
class ToolErrorEvent(Event):
    """A tool call failed; ``result.error`` is what the model sees, ``result.traceback`` the
    traceback of an exception (never shown to the model)."""

    type: ClassVar[str] = "tool_error"
    iteration: int
    result: ToolResult


@dataclass(frozen=True, slots=True)
class NoToolCallEvent(Event):
    """The model answered without a tool although one was expected."""

    type: ClassVar[str] = "no_tool_call"
    iteration: int
    text: str
    reminded: bool
    """True when the model was reminded to use a tool; False when the text was accepted."""


@dataclass(frozen=True, slots=True)
class PartialOutputEvent(Event):
    """Streaming a typed answer (``Agent(output_type=T)``): the answer so far, each time a
    longer prefix of it validates as a ``T`` (the last one may still grow)."""

    type: ClassVar[str] = "partial_output"
    iteration: int
    output: Any


@dataclass(frozen=True, slots=True)
class ApprovalRequestedEvent(Event):
    """A tool call waits for a person's decision; the run ends ``WAITING_FOR_APPROVAL``."""

    type: ClassVar[str] = "approval_requested"
    iteration: int
    approval: PendingApproval


@dataclass(frozen=True, slots=True)
class ApprovalDecidedEvent(Event):
    """A resumed run applies a decision: the call runs (``approve``, ``edit``) or is answered
    with the denial (``deny``)."""

    type: ClassVar[str] = "approval_decided"
    iteration: int
    call: ToolCall
    """The call as the model made it."""
    decision: Decision


@dataclass(frozen=True, slots=True)
class HandoffEvent(Event):
    """The conversation was handed to another agent (``Agent(handoffs=[...])``): from the
    next iteration on, ``to_agent``'s instructions, tools and model carry the same run."""

    type: ClassVar[str] = "handoff"
    iteration: int
    from_agent: str
    to_agent: str


@dataclass(frozen=True, slots=True)
class PlanUpdateEvent(Event):
    type: ClassVar[str] = "plan_update"
    plan: Any


@dataclass(frozen=True, slots=True)
class RetryEvent(Event):
    type: ClassVar[str] = "retry"
    attempt: int
    wait: float
    error: str


@dataclass(frozen=True, slots=True)
class FallbackEvent(Event):
    """A :class:`~reactloop.FallbackModel`'s model failed (its retries spent); the next one
    takes the same request."""

    type: ClassVar[str] = "fallback"
    failed: str
    """The model that failed."""
    next: str
    """The model that takes the request."""
    error: str


@dataclass(frozen=True, slots=True)
class QueuedEvent(Event):
    """A model call waited for a free slot of its model's concurrency limit
    (``Agent(model_concurrency=...)``)."""

    type: ClassVar[str] = "queued"
    model: str
    waited: float
    """Seconds spent waiting."""


@dataclass(frozen=True, slots=True)
class GuardrailEvent(Event):
    """A guardrail checked a text: the user's message (``input``), the answer (``output``),
    a tool call's arguments (``tool_input``) or a tool's result (``tool_output``)."""

    type: ClassVar[str] = "guardrail"
    kind: str
    guardrail: str
    """The guardrail's name (its function's name)."""
    outcome: str
    """``passed``, ``replaced`` or ``tripped`` (the run then ends ``BLOCKED``)."""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class CompactionEvent(Event):
    """The history was pruned (``tier="prune"``) or compacted by one tier."""

    type: ClassVar[str] = "compaction"
    tier: str
    tokens_before: int
    """Request tokens before this tier ran (history tokens for ``prune``)."""
    tokens_after: int
    duration: float = 0.0
    """Seconds the tier took."""
    messages_before: int = 0
    messages_after: int = 0


@dataclass(frozen=True, slots=True)
class CustomEvent(Event):
    """Emitted by a tool through ``ToolContext.emit`` (UI updates, progress, warnings)."""

    type: ClassVar[str] = "custom"
    name: str
    data: Any = None


@dataclass(frozen=True, slots=True)
class WarningEvent(Event):
    """Something went wrong that does not end the run (a context provider failed, a skill
    deviates from the spec…)."""

    type: ClassVar[str] = "warning"
    source: str
    message: str


@dataclass(frozen=True, slots=True)
class RunEndEvent(Event):
    type: ClassVar[str] = "run_end"
    result: RunResult[Any]


@dataclass(frozen=True, slots=True)
class StepEvent(Event):
    """Internal: an iteration finished (drives ``on_step``)."""

    type: ClassVar[str] = "step"
    step: Step = field(repr=False)


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Attachment):  # a reference: bytes never go into events
        return value.ref()
    if isinstance(value, ToolResult):
        d = {"name": value.name, "call_id": value.call_id,
             "arguments": _plain(dict(value.arguments)), "result": _plain(value.result),
             "error": value.error, "content": value.content, "traceback": value.traceback,
             "duration": value.duration, "cached": value.cached}
        if value.attachments:
            d["attachments"] = [a.ref() for a in value.attachments]
        return d
    if isinstance(value, ModelResponse):
        return {"text": value.text, "tool_calls": [c.to_dict() for c in value.tool_calls],
                "usage": None if value.usage is None else {
                    "input_tokens": value.usage.input_tokens,
                    "output_tokens": value.usage.output_tokens,
                    "cache_read_tokens": value.usage.cache_read_tokens,
                    "cache_write_tokens": value.usage.cache_write_tokens},
                "finish_reason": value.finish_reason, "model_name": value.model_name}
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, fallback=str)


class Callbacks(Protocol):
    """Any object with some of these methods can be passed as ``Agent(callbacks=[...])``.

    The methods are looked up when a run starts: one assigned to the object during a run is
    used from the next run on."""

    def on_start(self, event: RunStartEvent) -> Any: ...
    def on_action(self, event: ToolCallEvent) -> Any: ...
    def on_observation(self, event: ToolResultEvent | ToolErrorEvent) -> Any: ...
    def on_step(self, step: Step) -> Any: ...
    def on_finish(self, result: RunResult) -> Any: ...
    def on_error(self, error: BaseException) -> Any: ...


_DISPATCH: dict[str, str] = {
    "run_start": "on_start",
    "tool_call": "on_action",
    "tool_result": "on_observation",
    "tool_error": "on_observation",
    "step": "on_step",
    "run_end": "on_finish",
}


class Dispatcher:
    """The callbacks' methods for the events of an iteration (``run_start``, ``tool_call``,
    ``tool_result``/``tool_error``, ``step``), looked up once per run: an event costs a
    lookup and a call per method, no coroutine unless a method returns an awaitable.
    ``run_end`` goes through :func:`dispatch` (``on_error`` first when the run failed)."""

    __slots__ = ("callbacks", "table")

    def __init__(self, callbacks: Sequence[object]) -> None:
        self.callbacks = callbacks
        table: dict[str, tuple[tuple[object, str, Callable[[Any], Any]], ...]] = {}
        for cb in callbacks:
            for kind, name in _ITERATION.items():
                if (m := getattr(cb, name, None)) is not None:
                    table[kind] = (*table.get(kind, ()), (cb, name, m))
        self.table = table

    def send(self, event: Event) -> Awaitable[None] | None:
        """Feed ``event`` to the callbacks; an awaitable to await when a method returned one
        (the methods after it are called once it is done), or when the run ends."""
        handlers = self.table.get(event.type)
        if handlers is None:
            return dispatch(self.callbacks, event) if event.type == "run_end" else None
        arg: Any = event.step if type(event) is StepEvent else event
        for i, (cb, name, method) in enumerate(handlers):
            try:
                out = method(arg)
            except Exception:
                _ignored(cb, name)
                continue
            if out is not None and hasattr(out, "__await__"):
                return _rest(out, handlers[i:], arg)
        return None


async def _rest(out: Awaitable[Any], handlers: Sequence[tuple[object, str, Callable[[Any], Any]]],
                arg: Any) -> None:
    """Await the first handler's ``out``, then call (and await) the others in order."""
    for i, (cb, name, method) in enumerate(handlers):
        try:
            if i:
                out = method(arg)
            if out is not None and hasattr(out, "__await__"):
                await out
        except Exception:
            _ignored(cb, name)


def _ignored(cb: object, name: str) -> None:
    log.warning("callback %s.%s failed; ignored", type(cb).__name__, name, exc_info=True)


_ITERATION = {kind: name for kind, name in _DISPATCH.items() if kind != "run_end"}


async def dispatch(callbacks: Sequence[object], event: Event) -> None:
    """Feed one event to every callback. A failing callback is logged, never raised."""
    kind = event.type
    name = _DISPATCH.get(kind)
    if name is None:
        return
    arg: Any = event
    calls: Iterable[tuple[str, Any]] | None = None
    if kind == "step":
        assert isinstance(event, StepEvent)
        arg = event.step
    elif kind == "run_end":
        assert isinstance(event, RunEndEvent)
        arg = event.result
        if arg.error is not None:
            calls = [("on_error", arg.error), (name, arg)]
    for cb in callbacks:
        for method_name, value in calls or ((name, arg),):
            method = getattr(cb, method_name, None)
            if method is None:
                continue
            try:
                out = method(value)
                if out is not None and hasattr(out, "__await__"):
                    await out
            except Exception:
                log.warning("callback %s.%s failed; ignored", type(cb).__name__, method_name,
                            exc_info=True)
