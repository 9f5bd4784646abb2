"""A persistent multi-turn conversation: ``agent.session(id)``."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING

from reactloop.context._units import repair
from reactloop.errors import SessionBusy, SessionStoreError, UserError
from reactloop.events import Event, RunEndEvent
from reactloop.messages import Message
from reactloop.result import RunResult
from reactloop.sessions._sqlite import SQLiteStore
from reactloop.sessions._store import SessionStore, SessionWriter, check_session_id

if TYPE_CHECKING:
    from reactloop.agent import Agent

__all__ = ["Session", "open_store"]


def open_store(store: SessionStore | str | os.PathLike[str] | None = None) -> SessionStore:
    """``store`` itself, a :class:`SQLiteStore` at a path, or the default SQLite store."""
    if store is None or isinstance(store, (str, os.PathLike)):
        return SQLiteStore(store)
    if not isinstance(store, SessionStore):
        raise UserError(f"{store!r} is not a session store: pass a path, a SQLiteStore or an "
                        "object with get/writer/append/replace/clear/delete/list/close")
    return store


class Session:
    """A conversation whose history is stored as it happens (see ``Agent.session``).

    Every message is appended to the store the moment the run produces it, in its own
    transaction, so a process killed at any point loses at most the step in flight. Opening
    the same id again — in this process or another — continues the conversation. If the last
    run ended ``WAITING_FOR_USER`` (the agent asked a question), the next :meth:`send` is the
    answer. A tool call that a crash interrupted is answered with an error result on resume.

    A session has one writer at a time, across processes: each :meth:`send` holds the store's
    writer lock for the session (``store.writer(id)``) from before the prompt is written until
    the run has ended, and re-reads the stored history under it, so runs of several processes
    on one session follow each other and never interleave. While another writer holds the
    session, :meth:`send` waits up to :attr:`wait` seconds, then raises
    :class:`~reactloop.SessionBusy`.
    """

    def __init__(self, agent: Agent, session_id: str | None = None,
                 store: SessionStore | str | os.PathLike[str] | None = None, *,
                 wait: float = 0.0) -> None:
        self.agent = agent
        self.id = check_session_id(session_id) if session_id is not None else uuid.uuid4().hex
        self.store = open_store(store)
        self.wait = wait
        """Seconds :meth:`send` waits for another writer of this session (default: none)."""
        self.messages: list[Message] = self._open()
        self.last: RunResult | None = None
        """The result of the latest :meth:`send` in this process."""

    def _open(self) -> list[Message]:
        stored = self.store.get(self.id)
        if _same(repair(stored), stored):
            return stored
        try:  # a crash left tool calls unanswered: answer them, unless their writer is alive
            with self.store.writer(self.id) as writer:
                return _repaired(writer)
        except SessionBusy:
            return stored  # the calls are in flight, not interrupted: the next send repairs

    @property
    def waiting_for(self) -> str | None:
        """The question the agent asked (``ask_question``) when it is waiting for an answer."""
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "tool" and last.name == "ask_question" \
                and not last.is_error:
            return last.content
        return None

    async def send(self, text: str) -> RunResult:
        """Run the agent on ``text`` after the stored history; return the result."""
        result: RunResult | None = None
        async for event in self._events(text, stream=False):
            if isinstance(event, RunEndEvent):
                result = event.result
        assert result is not None
        return result

    def send_sync(self, text: str) -> RunResult:
        """Blocking :meth:`send`."""
        return asyncio.run(self.send(text))

    async def stream(self, text: str) -> AsyncIterator[Event]:
        """Like :meth:`send`, yielding the run's events; the last one is ``run_end``."""
        async for event in self._events(text, stream=True):
            yield event

    async def _writer(self) -> SessionWriter:
        """The session's writer lock, waiting up to :attr:`wait` seconds for another writer."""
        deadline = time.monotonic() + self.wait
        delay = 0.002
        while True:
            try:
                return self.store.writer(self.id)
            except SessionBusy:
                if time.monotonic() + delay > deadline:
                    raise
            await asyncio.sleep(delay)  # polling: the other writer may be in another process
            delay = min(delay * 2, 0.1)

    async def _events(self, text: str, *, stream: bool) -> AsyncIterator[Event]:
        writer = await self._writer()
        history: list[Message] = []
        written: list[Message] = []
        failed: list[Exception] = []
        ended = False

        def write(message: Message) -> None:  # the write-ahead: stored before the run goes on
            if failed:  # never a gap: after a failed write nothing more is stored
                raise failed[0]
            try:
                writer.append([message])
            except Exception as exc:
                failed.append(exc)
                raise
            written.append(message)

        try:
            history = self.messages = _repaired(writer)  # another process may have written
            source = (self.agent.stream(text, history=history, on_message=write) if stream
                      else self._run_events(text, history, write))
            try:
                async for event in source:
                    if isinstance(event, RunEndEvent):
                        if failed:  # the run went on without its store: report the store
                            raise failed[0]
                        self._settle(writer, event.result, [*history, *written])
                        ended = True
                    yield event
            finally:  # the run is closed before the lock is released
                aclose = getattr(source, "aclose", None)
                if aclose is not None:
                    await aclose()
        finally:
            try:
                if not ended:  # abandoned or failed: keep what was written, calls answered
                    self.messages = [*history, *written]
                    if not failed:
                        with suppress(SessionStoreError):  # then the next send repairs it
                            self.messages = _repaired(writer)
            finally:
                writer.close()

    async def _run_events(self, text: str, history: Sequence[Message],
                          write: Callable[[Message], None]) -> AsyncIterator[Event]:
        result = await self.agent.run(text, history=history, on_message=write)
        yield RunEndEvent(result.run_id, result)

    def _settle(self, writer: SessionWriter, result: RunResult,
                stored: Sequence[Message]) -> None:
        messages = list(result.messages)
        if not _same(messages, stored):  # pruned or compacted: store the new history
            writer.replace(messages)
        self.messages = messages
        self.last = result

    def clear(self) -> None:
        """Forget the history (the session id stays)."""
        self.store.clear(self.id)
        self.messages = []

    def delete(self) -> None:
        """Remove the session from the store."""
        self.store.delete(self.id)
        self.messages = []

    def __repr__(self) -> str:
        return f"Session({self.id!r}, messages={len(self.messages)}, store={self.store!r})"


def _repaired(writer: SessionWriter) -> list[Message]:
    """The stored history with every tool call answered, the repair stored (under the lock)."""
    stored = writer.get()
    fixed = repair(stored)
    if not _same(fixed, stored):
        if _same(fixed[:len(stored)], stored):
            writer.append(fixed[len(stored):])
        else:
            writer.replace(fixed)
    return fixed


def _same(a: Sequence[Message], b: Sequence[Message]) -> bool:
    return len(a) == len(b) and all(x is y or x == y for x, y in zip(a, b, strict=True))
