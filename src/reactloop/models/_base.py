"""The provider-agnostic model interface (feature P1).

A :class:`Model` turns one :class:`ModelRequest` (system prompt, history, tool specs,
volatile notes, settings) into one :class:`ModelResponse` (text, tool calls, usage).
Adapters translate these neutral values to one wire API each and do nothing else.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from reactloop.messages import Message, ToolCall, Usage

__all__ = [
    "FinishReason",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "TextDelta",
    "ToolChoice",
    "ToolSpec",
]

FinishReason = Literal["stop", "length", "tool_calls", "error"]
ToolChoice = Literal["auto", "required", "none"]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What the model is told about one tool. Derived from the tool that executes."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    """JSON schema of the arguments object."""


@dataclass(frozen=True, slots=True)
class ModelSettings:
    max_tokens: int | None = None
    """Upper bound on generated tokens (None: the adapter's default)."""
    temperature: float | None = None
    tool_choice: ToolChoice = "auto"
    """``"required"`` forces a tool call, ``"none"`` forbids one."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Provider-specific request fields, passed through unchanged."""


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """An immutable snapshot of everything sent to the model for one call.

    The request is assembled so that its prefix (``system``, ``tools``, ``messages``) only ever
    grows between iterations; everything that changes per iteration lives in ``notes``, which
    adapters place at the very end.
    """

    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    """The tools the model may call in this request."""
    notes: tuple[str, ...] = ()
    """Volatile text for this call only (budget notes, plan, retrieved context)."""
    settings: ModelSettings = ModelSettings()
    declared_tools: tuple[ToolSpec, ...] = ()
    """All tools of the run. On the forced last iteration ``tools`` shrinks (to nothing, or
    ``task_completion``); adapters that can keep the tool list and restrict the choice instead
    (``tool_choice``) send these, so the request prefix — and the provider's prompt cache —
    survives. Empty means "same as ``tools``"."""

    @property
    def all_tools(self) -> tuple[ToolSpec, ...]:
        """The run's full, stable tool list (``declared_tools`` or ``tools``)."""
        return self.declared_tools or self.tools

    def messages_with_notes(self) -> tuple[Message, ...]:
        """History plus the notes as one trailing user message (what most adapters send)."""
        if not self.notes:
            return self.messages
        note = Message.user("\n\n".join(self.notes), kind="note")
        return (*self.messages, note)

    def with_settings(self, **changes: Any) -> ModelRequest:
        return replace(self, settings=replace(self.settings, **changes))


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """What the model answered: text, tool calls, or both."""

    text: str | None = None
    tool_calls: Sequence[ToolCall] = ()
    usage: Usage | None = None
    finish_reason: FinishReason | None = None
    """``"length"`` when the output-token limit cut the response off."""
    model_name: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.tool_calls, tuple):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of streamed text."""

    text: str


class Model:
    """Base class of every model. Subclasses implement :meth:`request` (and may :meth:`stream`)."""

    name: str = "model"
    context_window: int | None = None
    """Tokens the model can attend to, when known (used by compaction)."""

    async def request(self, request: ModelRequest) -> ModelResponse:
        raise NotImplementedError

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        """Yield :class:`TextDelta` pieces, then exactly one final :class:`ModelResponse`.

        The default streams nothing and yields the whole response at once.
        """
        response = await self.request(request)
        if response.text:
            yield TextDelta(response.text)
        yield response

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text``; the default is a documented estimate (4 characters a token)."""
        return (len(text) + 3) // 4

    async def aclose(self) -> None:
        """Release clients or weights. Safe to call more than once."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
