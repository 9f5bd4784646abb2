"""The neutral message model: frozen values that every provider adapter translates.

History is a ``list[Message]``. Sessions, compaction and adapters work on this model only,
and :func:`messages_to_json` / :func:`messages_from_json` round-trip it losslessly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat
from typing import Any, Literal, NoReturn

from reactloop.attachments import Attachment, attachment_from_ref

__all__ = [
    "FinishReason",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OutputMode",
    "OutputSchema",
    "Role",
    "TextDelta",
    "ToolCall",
    "ToolChoice",
    "ToolSpec",
    "Usage",
    "attachment_blobs",
    "message_from_dict",
    "messages_from_json",
    "messages_to_json",
]

Role = Literal["system", "user", "assistant", "tool"]


class _NoMetadata(dict[str, Any]):
    """The one empty ``metadata`` every message without metadata shares (an empty dict
    per message was 64 bytes of every history entry): equal to ``{}``, shown as ``{}``,
    saved and pickled as ``{}``; it refuses to be changed, as a frozen message's field."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a Message's metadata cannot be changed: build the message with "
                        "metadata={...} (or dataclasses.replace(message, metadata=...))")

    __setitem__ = __delitem__ = __ior__ = _refuse
    update = setdefault = pop = popitem = clear = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return _no_metadata, ()

    def __copy__(self) -> _NoMetadata:
        return self

    def __deepcopy__(self, memo: Any) -> _NoMetadata:
        return self


_NO_METADATA = _NoMetadata()


def _no_metadata() -> _NoMetadata:
    return _NO_METADATA


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to run one tool."""

    name: str
    """The tool's name, as the model wrote it."""
    arguments: Mapping[str, Any]
    """Arguments as parsed JSON (not yet validated)."""
    id: str | None = None
    """Provider call id; the loop fills one in when the provider gives none."""
    provider_details: Mapping[str, Any] | None = None
    """What a provider needs back on the next turn for this call (e.g. Gemini's thought
    signature), keyed by provider; JSON values only. Other adapters ignore it."""

    def to_dict(self) -> dict[str, Any]:
        args = self.arguments
        d: dict[str, Any] = {"name": self.name, "id": self.id,
                             "arguments": dict(args) if isinstance(args, Mapping) else args}
        if self.provider_details:
            d["provider_details"] = dict(self.provider_details)
        return d


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call."""

    input_tokens: int = 0
    """Every input token, those served from or written to a prompt cache included."""
    output_tokens: int = 0
    cache_read_tokens: int = 0
    """Input tokens served from the provider's prompt cache (part of ``input_tokens``), when
    the provider reports them."""
    cache_write_tokens: int = 0
    """Input tokens written to the provider's prompt cache (part of ``input_tokens``), when
    the provider reports them."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation (seed 000's ``Message``).

    Build them with :meth:`system`, :meth:`user`, :meth:`assistant` and :meth:`tool`.
    """

    role: Role
    """``"system"``, ``"user"``, ``"assistant"`` or ``"tool"``."""
    content: str = ""
    """The text ("" for an assistant message that only calls tools)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Assistant messages: the tools called."""
    tool_call_id: str | None = None
    """Tool messages: the id of the call this answers."""
    name: str | None = None
    """Tool messages: the tool's name."""
    is_error: bool = False
    """Tool messages: whether the tool failed."""
    metadata: Mapping[str, Any] = field(default_factory=repeat(_NO_METADATA).__next__)
    """Free-form facts that are not sent to the model (e.g. ``{"kind": "reminder"}``)."""
    provider_details: Mapping[str, Any] | None = None
    """What a provider needs back on the next turn (thought signatures, reasoning ids),
    keyed by provider; JSON values only. Stored and serialised with the message."""
    attachments: tuple[Attachment, ...] = ()
    """User and tool messages: images and documents sent with ``content`` (after it).
    Serialised as references (:meth:`Attachment.ref`); stores keep the bytes once per hash."""

    @classmethod
    def system(cls, content: str) -> Message:
        return cls("system", content)

    @classmethod
    def user(cls, content: str, **metadata: Any) -> Message:
        """A user message (with attachments: ``Message("user", text, attachments=...)``)."""
        return cls("user", content, metadata=metadata or _NO_METADATA)

    @classmethod
    def assistant(cls, content: str | None = None, tool_calls: Iterable[ToolCall] = (),
                  provider_details: Mapping[str, Any] | None = None,
                  metadata: Mapping[str, Any] | None = None) -> Message:
        return cls("assistant", content or "", tuple(tool_calls),
                   provider_details=provider_details or None, metadata=metadata or _NO_METADATA)

    @classmethod
    def tool(cls, tool_call_id: str, name: str, content: str, *, is_error: bool = False,
             attachments: Iterable[Attachment] = ()) -> Message:
        return cls("tool", content, (), tool_call_id, name, is_error, _NO_METADATA, None,
                   tuple(attachments))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict holding only the fields that are set."""
        d: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            d["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            d["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            d["name"] = self.name
        if self.is_error:
            d["is_error"] = True
        if self.metadata:
            d["metadata"] = dict(self.metadata)
        if self.provider_details:
            d["provider_details"] = dict(self.provider_details)
        if self.attachments:
            d["attachments"] = [a.ref() for a in self.attachments]
        return d


def message_from_dict(d: Mapping[str, Any],
                      blobs: Mapping[str, bytes] | None = None) -> Message:
    """Inverse of :meth:`Message.to_dict`; attachments get their bytes from ``blobs``
    (by sha256) when given, else stay references (see :func:`attachment_blobs`)."""
    role = d["role"]
    if role not in ("system", "user", "assistant", "tool"):
        raise ValueError(f"unknown message role {role!r}")
    return Message(
        role=role,
        content=d.get("content") or "",
        tool_calls=tuple(
            ToolCall(c["name"], c.get("arguments") or {}, c.get("id"),
                     c.get("provider_details") or None)
            for c in d.get("tool_calls") or ()
        ),
        tool_call_id=d.get("tool_call_id"),
        name=d.get("name"),
        is_error=bool(d.get("is_error", False)),
        metadata=d.get("metadata") or _NO_METADATA,
        provider_details=d.get("provider_details") or None,
        attachments=tuple(attachment_from_ref(a, blobs) for a in d.get("attachments") or ()),
    )


def attachment_blobs(messages: Iterable[Message]) -> dict[str, Attachment]:
    """The attachments of ``messages`` that have bytes, once each, by sha256."""
    return {a.sha256: a for m in messages for a in m.attachments if a.data is not None}


def messages_to_json(messages: Sequence[Message]) -> str:
    """The history as JSON: a list of messages, attachments as references (their bytes are
    not in it; keep them with :func:`attachment_blobs`, as saved runs and stores do)."""
    return json.dumps([m.to_dict() for m in messages], ensure_ascii=False)


def messages_from_json(text: str, blobs: Mapping[str, bytes] | None = None) -> list[Message]:
    return [message_from_dict(d, blobs) for d in json.loads(text)]


# -- what goes to a model and comes back: values too, so events and results can hold them --

FinishReason = Literal["stop", "length", "tool_calls", "error"]
ToolChoice = Literal["auto", "required", "none"]
OutputMode = Literal["native", "tool", "prompted"]
"""How a typed final answer is enforced: ``"native"`` by the model itself (a grammar, a
JSON-schema response format, a provider's structured output), ``"tool"`` through a
``final_answer`` tool, ``"prompted"`` by the schema in the system prompt."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What the model is told about one tool. Derived from the tool that executes."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    """JSON schema of the arguments object."""
    internal: bool = False
    """The tool touches only the run's own state (``Tool.internal``): adapters that offer a
    subset of the tools (the embedded model's tool limit) always keep it."""
    choices: tuple[tuple[str, str], ...] = ()
    """What the tool can load, as (value of its one required argument, what that value
    brings) pairs — ``load_skill``'s skills with their descriptions and tools. Never sent to
    a provider; a model that ranks tools ranks these too (the embedded model's guidance)."""


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
class OutputSchema:
    """The typed final answer a run wants (``Agent(output_type=...)``).

    Adapters act on it only when :attr:`mode` is ``"native"``: they translate it to the
    provider's own enforcement (a JSON-schema response format, structured output, a grammar).
    In the other modes the loop handles it (a tool, or the system prompt) and adapters ignore it.
    """

    name: str
    """A name for the schema (``[A-Za-z0-9_-]``; providers want one)."""
    schema: Mapping[str, Any]
    """JSON schema of the answer; always an object (non-object types are wrapped in
    ``{"result": ...}``)."""
    mode: OutputMode = "native"


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
    output_schema: OutputSchema | None = None
    """The typed final answer wanted, when the agent has an ``output_type``: a text answer
    must be JSON matching it (the model may still call tools first)."""
    cache_key: str | None = None
    """Stable for the whole conversation (the session's id, else the run's): adapters route
    requests that share a prompt prefix to the same provider cache with it (OpenAI's
    ``prompt_cache_key``, hashed)."""

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
    provider_details: Mapping[str, Any] | None = None
    """Provider facts to keep with the assistant message (see :attr:`Message.provider_details`)."""

    def __post_init__(self) -> None:
        if not isinstance(self.tool_calls, tuple):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of streamed text."""

    text: str
