"""Sessions in this process's memory: the store of a conversation that has none."""

from __future__ import annotations

import builtins
import threading
import time
from collections.abc import Callable, Sequence

from reactloop.errors import SessionBusy, UserError
from reactloop.messages import Message
from reactloop.sessions import _codec
from reactloop.sessions._store import SessionInfo, StoreBase, check_session_id

__all__ = ["MemoryStore", "MemoryWriter"]


class MemoryStore(StoreBase):
    """A :class:`~reactloop.sessions.SessionStore` in memory, for this process only.

    ``agent.conversation()`` uses one; it keeps the same one-writer rule as the file and
    database stores (between tasks and threads of this process), and forgets everything when
    the process ends.
    """

    def __init__(self) -> None:
        self._messages: dict[str, builtins.list[Message]] = {}
        self._infos: dict[str, SessionInfo] = {}
        self._writers: set[str] = set()
        self._lock = threading.Lock()

    def get(self, session_id: str) -> builtins.list[Message]:
        with self._lock:
            return builtins.list(self._messages.get(session_id, ()))

    def writer(self, session_id: str) -> MemoryWriter:
        check_session_id(session_id)
        with self._lock:
            if session_id in self._writers:
                raise SessionBusy(
                    f"session {session_id!r} is busy: another send is running on it in this "
                    "process; wait for it to finish, or let send() wait with "
                    "session.wait = SECONDS")
            self._writers.add(session_id)
        return MemoryWriter(self, session_id, self._write, self._release)

    def clear(self, session_id: str) -> None:
        with self.writer(session_id):
            self._write(session_id, [], replace=True, title="")

    def delete(self, session_id: str) -> bool:
        with self.writer(session_id), self._lock:
            self._messages.pop(session_id, None)
            return self._infos.pop(session_id, None) is not None

    def close(self) -> None:
        """Nothing to release."""

    def list(self) -> builtins.list[SessionInfo]:
        with self._lock:
            return sorted(self._infos.values(), key=lambda i: (-i.updated, i.id))

    def _write(self, session_id: str, messages: Sequence[Message], *, replace: bool,
               title: str | None = None) -> None:
        with self._lock:
            stored = [] if replace else self._messages.get(session_id, [])
            history = self._messages[session_id] = [*stored, *messages]
            now, old = time.time(), self._infos.get(session_id)
            if title is None:
                title = old.title if old is not None and old.title else _codec.title(history)
            self._infos[session_id] = SessionInfo(
                session_id, old.created if old is not None else now, now, len(history), title)

    def _release(self, session_id: str) -> None:
        with self._lock:
            self._writers.discard(session_id)

    def __repr__(self) -> str:
        return f"MemoryStore(sessions={len(self._infos)})"


class MemoryWriter:
    """The one writer of a session in a :class:`MemoryStore` (see ``SessionWriter``)."""

    def __init__(self, store: MemoryStore, session_id: str, write: Callable[..., None],
                 release: Callable[[str], None]) -> None:
        self.session_id = session_id
        self._store: MemoryStore | None = store
        self._write, self._release = write, release  # the store's unlocked write, its unlock

    def _open(self) -> MemoryStore:
        if self._store is None:
            raise UserError(f"the writer of session {self.session_id!r} is closed; take a new "
                            "one with store.writer(session_id)")
        return self._store

    def get(self) -> builtins.list[Message]:
        return self._open().get(self.session_id)

    def append(self, messages: Sequence[Message]) -> None:
        self._open()
        self._write(self.session_id, messages, replace=False)

    def replace(self, messages: Sequence[Message]) -> None:
        self._open()
        self._write(self.session_id, messages, replace=True)

    def close(self) -> None:
        store, self._store = self._store, None
        if store is not None:
            self._release(self.session_id)

    def __enter__(self) -> MemoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
