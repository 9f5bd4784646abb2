"""How a history splits into pieces that can be dropped or summarized without breaking it.

A *unit* is the smallest piece: an assistant message that calls tools together with the tool
messages answering it, or any other single message. Removing whole units never separates a
tool call from its result. A *turn* starts at a user prompt (not a reminder or a summary) and
runs until the next one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reactloop.approvals import APPROVALS_KEY
from reactloop.messages import Message

__all__ = [
    "INTERRUPTED",
    "Unit",
    "check_pairs",
    "is_prompt",
    "latest_prompt",
    "repair",
    "units",
]

INTERRUPTED = (
    "Error: this tool call was interrupted before it finished (the process running the agent "
    "stopped). Call it again if you still need its result."
)
_NOT_PROMPTS = frozenset({"reminder", "note", "summary"})


@dataclass(frozen=True, slots=True)
class Unit:
    """Messages ``start`` (inclusive) to ``stop`` (exclusive) of a history."""

    start: int
    stop: int

    def __len__(self) -> int:
        return self.stop - self.start


def is_prompt(message: Message) -> bool:
    """A user message that the user wrote (not a loop reminder, note or summary)."""
    return message.role == "user" and message.metadata.get("kind") not in _NOT_PROMPTS


def latest_prompt(messages: Sequence[Message]) -> int | None:
    """Index of the latest user prompt, or ``None``."""
    for i in range(len(messages) - 1, -1, -1):
        if is_prompt(messages[i]):
            return i
    return None


def units(messages: Sequence[Message]) -> list[Unit]:
    """Split ``messages`` into units, in order; every message is in exactly one unit."""
    out: list[Unit] = []
    i, n = 0, len(messages)
    while i < n:
        m = messages[i]
        j = i + 1
        if m.role == "assistant" and m.tool_calls:
            ids = {c.id for c in m.tool_calls}
            while j < n and messages[j].role == "tool" and messages[j].tool_call_id in ids:
                j += 1
        out.append(Unit(i, j))
        i = j
    return out


def check_pairs(messages: Sequence[Message]) -> list[str]:
    """Problems with tool-call pairing: a call without its result right after it, or a tool
    message without the call it answers. Empty when the history is well formed."""
    problems: list[str] = []
    for u in units(messages):
        head = messages[u.start]
        if head.role == "tool":
            problems.append(f"message {u.start}: tool result {head.tool_call_id!r} has no call")
        elif head.role == "assistant" and head.tool_calls:
            answered = {messages[k].tool_call_id for k in range(u.start + 1, u.stop)}
            missing = [c.id for c in head.tool_calls if c.id not in answered]
            if missing:
                problems.append(f"message {u.start}: calls {missing} have no result")
    return problems


def repair(messages: Sequence[Message]) -> list[Message]:
    """A copy of ``messages`` in which every tool call has a result.

    A process killed while tools ran leaves calls without results; providers reject such a
    history, so each missing result becomes an error result saying the call was interrupted.
    Calls waiting for a person's approval (``reactloop.approvals``) are not interrupted: they
    keep waiting. A call decided but without a result was interrupted while it ran, and is
    answered so: never run twice. Tool results whose call is missing are dropped.
    Well-formed histories come back equal.
    """
    out: list[Message] = []
    for u in units(messages):
        head = messages[u.start]
        if head.role == "tool":
            continue
        out.extend(messages[u.start:u.stop])
        if head.role == "assistant" and head.tool_calls:
            answered = {messages[k].tool_call_id for k in range(u.start + 1, u.stop)}
            waiting = _waiting(head)
            for c in head.tool_calls:
                if c.id not in answered and c.id not in waiting:
                    out.append(Message.tool(c.id or "", c.name, INTERRUPTED, is_error=True))
    return out


def _waiting(message: Message) -> set[str]:
    """Ids of the message's calls that wait for an approval decision."""
    entries = message.metadata.get(APPROVALS_KEY) if message.metadata else None
    if not isinstance(entries, dict):
        return set()
    return {cid for cid, e in entries.items() if isinstance(e, dict) and e.get("decision") is None}
