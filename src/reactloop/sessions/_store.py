"""The session store protocol: a small interface so that other backends can follow SQLite."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from reactloop.messages import Message

__all__ = ["SessionInfo", "SessionStore"]


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One stored session, as :meth:`SessionStore.list` reports it."""

    id: str
    created: float
    """Unix timestamp of the first message."""
    updated: float
    """Unix timestamp of the latest write."""
    messages: int
    """Number of stored messages."""
    title: str = ""
    """The first user message, shortened."""


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions keep their history. Every method is a complete, atomic operation: a
    process killed at any point leaves each session either before or after it.

    Stores hold messages only — never the agent's configuration, so never an API key.
    """

    def get(self, session_id: str) -> list[Message]:
        """The session's messages in order (empty for an unknown session)."""
        ...

    def append(self, session_id: str, messages: Sequence[Message]) -> None:
        """Add ``messages`` at the end (creating the session), in one transaction."""
        ...

    def replace(self, session_id: str, messages: Sequence[Message]) -> None:
        """Make ``messages`` the whole history, in one transaction (after compaction)."""
        ...

    def clear(self, session_id: str) -> None:
        """Remove the session's messages; the session stays listed."""
        ...

    def delete(self, session_id: str) -> bool:
        """Remove the session entirely; False when there was no such session."""
        ...

    def close(self) -> None:
        """Release the store's resources; safe to call more than once."""
        ...

    def list(self) -> list[SessionInfo]:
        """Every session, most recently updated first."""
        ...
