"""The neutral message model: frozen values that every provider adapter translates.

History is a ``list[Message]``. Sessions, compaction and adapters work on this model only,
and :func:`messages_to_json` / :func:`messages_from_json` round-trip it losslessly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "Message",
    "Role",
    "ToolCall",
    "Usage",
    "message_from_dict",
    "messages_from_json",
    "messages_to_json",
]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to run one tool."""

    name: str
    """The tool's name, as the model wrote it."""
    arguments: Mapping[str, Any]
    """Arguments as parsed JSON (not yet validated)."""
    id: str | None = None
    """Provider call id; the loop fills one in when the provider gives none."""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": dict(self.arguments), "id": self.id}


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
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
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Free-form facts that are not sent to the model (e.g. ``{"kind": "reminder"}``)."""

    @classmethod
    def system(cls, content: str) -> Message:
        return cls("system", content)

    @classmethod
    def user(cls, content: str, **metadata: Any) -> Message:
        return cls("user", content, metadata=metadata)

    @classmethod
    def assistant(cls, content: str | None = None, tool_calls: Iterable[ToolCall] = ()) -> Message:
        return cls("assistant", content or "", tuple(tool_calls))

    @classmethod
    def tool(cls, tool_call_id: str, name: str, content: str, *, is_error: bool = False) -> Message:
        return cls("tool", content, tool_call_id=tool_call_id, name=name, is_error=is_error)

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
        return d


def message_from_dict(d: Mapping[str, Any]) -> Message:
    """Inverse of :meth:`Message.to_dict`."""
    role = d["role"]
    if role not in ("system", "user", "assistant", "tool"):
        raise ValueError(f"unknown message role {role!r}")
    return Message(
        role=role,
        content=d.get("content") or "",
        tool_calls=tuple(
            ToolCall(c["name"], c.get("arguments") or {}, c.get("id"))
            for c in d.get("tool_calls") or ()
        ),
        tool_call_id=d.get("tool_call_id"),
        name=d.get("name"),
        is_error=bool(d.get("is_error", False)),
        metadata=d.get("metadata") or {},
    )


def messages_to_json(messages: Sequence[Message]) -> str:
    return json.dumps([m.to_dict() for m in messages], ensure_ascii=False)


def messages_from_json(text: str) -> list[Message]:
    return [message_from_dict(d) for d in json.loads(text)]
