"""Memory limits (feature M2, seed 002's ``ConversationMemory.Prune``).

:func:`prune` drops the oldest turns first, whole, until the history is within
``max_messages`` and ``max_tokens``; if the current turn alone is still too big, it drops the
current turn's oldest steps. It never separates a tool call from its results (it removes whole
units, see :mod:`reactloop.context._units`) and never drops a system message, the latest user
prompt or the most recent step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from reactloop.context._tokens import PER_MESSAGE, estimate_tokens
from reactloop.context._units import Unit, is_prompt, latest_prompt, units
from reactloop.messages import Message

__all__ = ["prune"]


def _estimate(message: Message) -> int:
    return PER_MESSAGE + estimate_tokens(message.content) + sum(
        estimate_tokens(c.name + str(c.arguments)) for c in message.tool_calls)


def _removal_groups(messages: Sequence[Message]) -> list[list[Unit]]:
    """Groups of units in the order they may be removed: each older turn as one group, then
    each step of the current turn alone. Protected units are in no group."""
    all_units = units(messages)
    latest = latest_prompt(messages)
    last = all_units[-1] if all_units else None
    groups: list[list[Unit]] = []
    current: list[Unit] = []
    for u in all_units:
        head = messages[u.start]
        if latest is not None and u.start < latest and is_prompt(head) and current:
            groups.append(current)  # an older turn starts: close the previous one
            current = []
        if head.role == "system" or u.start == latest or u is last:
            continue
        if latest is None or u.start > latest:
            if current:
                groups.append(current)
                current = []
            groups.append([u])
        else:
            current.append(u)
    if current:
        groups.append(current)
    return groups


def prune(messages: Sequence[Message], *, max_messages: int | None = None,
          max_tokens: int | None = None, count: Callable[[Message], int] | None = None,
          ) -> list[Message]:
    """``messages`` within the limits, oldest turns removed first (see the module docstring).

    Args:
        max_messages: the most messages to keep.
        max_tokens: the most history tokens to keep (as measured by ``count``).
        count: tokens of one message (default: the 4-characters-a-token estimate).

    Returns the input list itself when nothing had to go. When the protected messages alone
    exceed a limit, as much as allowed is removed and the rest is returned.
    """
    count = count or _estimate
    n_messages = len(messages)
    n_tokens = sum(count(m) for m in messages) if max_tokens is not None else 0

    def over() -> bool:
        return ((max_messages is not None and n_messages > max_messages)
                or (max_tokens is not None and n_tokens > max_tokens))

    if not over():
        return messages if isinstance(messages, list) else list(messages)
    dropped: set[int] = set()
    for group in _removal_groups(messages):
        if not over():
            break
        for u in group:
            for i in range(u.start, u.stop):
                dropped.add(i)
                n_messages -= 1
                if max_tokens is not None:
                    n_tokens -= count(messages[i])
    return [m for i, m in enumerate(messages) if i not in dropped]
