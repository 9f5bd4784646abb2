"""A persistent multi-turn conversation: ``agent.session(id)``."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING

from reactloop.context._units import repair
from reactloop.errors import UserError
from reactloop.events import Event, RunEndEvent
from reactloop.messages import Message
from reactloop.result import RunResult
from reactloop.sessions._sqlite import SQLiteStore, check_session_id
from reactloop.sessions._store import SessionStore

if TYPE_CHECKING:
    from reactloop.agent import Agent

__all__ = ["Session", "open_store"]


def open_store(store: SessionStore | str | os.PathLike[str] | None = None) -> SessionStore:
    """``store`` itself, a :class:`SQLiteStore` at a path, or the default SQLite store."""
    if store is None or isinstance(store, (str, os.PathLike)):
        return SQLiteStore(store)
    if not isinstance(store, SessionStore):
        raise UserError(f"{store!r} is not a session store: pass a path, a SQLiteStore or an "
                        "object with get/append/replace/clear/delete/list/close")
    return store


class Session:
    """A conversation whose history is stored as it happens (see ``Agent.session``).

    Every message is appended to the store the moment the run produces it, in its own
    transaction, so a process killed at any point loses at most the step in flight. Opening
    the same id again — in this process or another — continues the conversation. If the last
    run ended ``WAITING_FOR_USER`` (the agent asked a question), the next :meth:`send` is the
    answer. A tool call that a crash interrupted is answered with an error result on resume.
    """

    def __init__(self, agent: Agent, session_id: str | None = None,
                 store: SessionStore | str | os.PathLike[str] | None = None) -> None:
        self.agent = agent
        self.id = check_session_id(session_id) if session_id is not None else uuid.uuid4().hex
        self.store = open_store(store)
        self.messages: list[Message] = self._load()
        self.last: RunResult | None = None
        """The result of the latest :meth:`send` in this process."""
        self._busy = False

    def _load(self) -> list[Message]:
        stored = self.store.get(self.id)
        fixed = repair(stored)
        if not _same(fixed, stored):
            if _same(fixed[:len(stored)], stored):
                self.store.append(self.id, fixed[len(stored):])
            else:
                self.store.replace(self.id, fixed)
        return fixed

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

    async def _events(self, text: str, *, stream: bool) -> AsyncIterator[Event]:
        if self._busy:
            raise UserError(f"session {self.id!r} is already running a message; wait for it "
                            "to finish before sending the next one")
        self._busy = True
        history = self.messages
        written: list[Message] = []
        ended = False

        def write(message: Message) -> None:  # the write-ahead: stored before the run goes on
            self.store.append(self.id, [message])
            written.append(message)

        try:
            events: AsyncGenerator[Event, None] = (
                self.agent.stream(text, history=history, on_message=write) if stream
                else self._run_events(text, history, write))
            async with aclosing(events) as running:
                async for event in running:
                    if isinstance(event, RunEndEvent):
                        self._settle(event.result, [*history, *written])
                        ended = True
                    yield event
        finally:
            self._busy = False
            if not ended:  # abandoned or failed: the store holds whatever was written
                self.messages = self._load()

    async def _run_events(self, text: str, history: Sequence[Message],
                          write: Callable[[Message], None]) -> AsyncGenerator[Event, None]:
        result = await self.agent.run(text, history=history, on_message=write)
        yield RunEndEvent(result.run_id, result)

    def _settle(self, result: RunResult, stored: Sequence[Message]) -> None:
        messages = list(result.messages)
        if not _same(messages, stored):  # pruned or compacted: store the new history
            self.store.replace(self.id, messages)
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


def _same(a: Sequence[Message], b: Sequence[Message]) -> bool:
    return len(a) == len(b) and all(x is y or x == y for x, y in zip(a, b, strict=True))
