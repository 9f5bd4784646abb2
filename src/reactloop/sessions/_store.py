"""The session store protocol: a small interface so that other backends can follow SQLite."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from reactloop.errors import UserError
from reactloop.messages import Message

__all__ = ["SessionInfo", "SessionStore", "SessionWriter", "StoreBase", "check_session_id"]


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
class SessionWriter(Protocol):
    """The one writer of a session, from :meth:`SessionStore.writer` until :meth:`close`.

    While it is open no other writer — in this process, another process or another machine
    sharing the store — can write the session. Use it as a context manager.
    """

    session_id: str

    def get(self) -> list[Message]:
        """The session's messages, read under the lock."""
        ...

    def append(self, messages: Sequence[Message]) -> None:
        """Add ``messages`` at the end, in one transaction."""
        ...

    def replace(self, messages: Sequence[Message]) -> None:
        """Make ``messages`` the whole history, in one transaction."""
        ...

    def close(self) -> None:
        """Give up the lock; safe to call more than once."""
        ...

    def __enter__(self) -> SessionWriter: ...

    def __exit__(self, *exc: object) -> None: ...


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions keep their history. Every method is a complete, atomic operation: a
    process killed at any point leaves each session either before or after it.

    A session has one writer at a time (:meth:`writer`); the other writing methods take the
    session's lock for their transaction, so they raise :class:`~reactloop.SessionBusy` while
    another writer holds it. A writer killed by any signal loses its lock at once.

    Stores hold messages only — never the agent's configuration, so never an API key.
    """

    def get(self, session_id: str) -> list[Message]:
        """The session's messages in order (empty for an unknown session)."""
        ...

    def writer(self, session_id: str) -> SessionWriter:
        """Become the session's only writer, without waiting.

        Raises:
            SessionBusy: another writer holds the session; the message says which.
        """
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


class StoreBase:
    """What every store of reactloop derives from its :meth:`writer`: the one-shot writes."""

    def writer(self, session_id: str) -> SessionWriter:
        raise NotImplementedError

    def append(self, session_id: str, messages: Sequence[Message]) -> None:
        """Add ``messages`` at the end (creating the session), as the session's writer."""
        with self.writer(session_id) as w:
            w.append(messages)

    def replace(self, session_id: str, messages: Sequence[Message]) -> None:
        """Make ``messages`` the whole history, as the session's writer."""
        with self.writer(session_id) as w:
            w.replace(messages)


def check_session_id(session_id: object, *, what: str = "session id") -> str:
    """``session_id`` if it is a valid session id, else a :class:`UserError`.

    The one rule for ids, in every store and on every route of ``reactloop serve``: 1 to 200
    characters, not all blank, none a control character below U+0020 or a lone surrogate
    (no database column or URL takes those safely), and not ``.`` or ``..`` (browsers and
    proxies collapse those path segments, so no URL reaches them). ``/`` is allowed (the
    server takes it percent-encoded). ``what`` names the id in the message (``"run id"``)."""
    if session_id in (".", ".."):
        raise UserError(f"a {what} cannot be {session_id!r} (a URL cannot name it): "
                        "choose another id")
    if (not isinstance(session_id, str) or not session_id.strip() or len(session_id) > 200
            or any(ord(ch) < 32 or 0xD800 <= ord(ch) < 0xE000
                   for ch in session_id)):
        shown = repr(session_id)
        if len(shown) > 80:
            shown = f"{shown[:60]}… ({len(str(session_id))} characters)"
        raise UserError(f"a {what} is a non-empty string of at most 200 printable "
                        f"characters, got {shown}")
    return session_id
