"""One conversation class, with or without a store: ``agent.conversation()``, ``agent.session(id)``.

It reaches the agent only through its public entry points (``run``/``stream`` with
``history=`` and the ``on_message`` write-ahead hook), typed as :class:`AgentLike`, so this
package never imports the agent or the loop.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import time
import uuid
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import contextmanager, suppress
from typing import Any, Protocol

from reactloop.approvals import (
    APPROVALS_KEY,
    ASKS,
    Decision,
    PendingApproval,
    apply_decisions,
    pending_approvals,
)
from reactloop.attachments import Prompt
from reactloop.controls._limits import Budget, UsageLimits, outer_budget
from reactloop.errors import SessionBusy, UserError
from reactloop.events import Event, RunEndEvent
from reactloop.messages import Message
from reactloop.result import RunResult
from reactloop.sessions._memory import MemoryStore
from reactloop.sessions._store import SessionStore, SessionWriter, check_session_id

__all__ = ["AgentLike", "Conversation", "Session", "open_store"]

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


class AgentLike(Protocol):
    """What a conversation needs of an agent: :class:`reactloop.Agent`'s ``run`` and
    ``stream``, each taking the earlier ``history`` and an ``on_message`` hook that is called
    with every message the run adds (the prompt first) before the run goes on. An agent whose
    ``run`` also takes ``conversation_id`` is told the session's id (for its traces)."""

    def run(self, prompt: Prompt, *, history: Sequence[Message] = ...,
            on_message: Callable[[Message], None] | None = ...) -> Awaitable[RunResult[Any]]: ...

    def stream(self, prompt: Prompt, *, history: Sequence[Message] = ...,
               on_message: Callable[[Message], None] | None = ...) -> AsyncIterator[Event]: ...

    def resume(self, saved: Sequence[Message], *,
               on_message: Callable[[Message], None] | None = ...
               ) -> Awaitable[RunResult[Any]]: ...

    def resume_stream(self, saved: Sequence[Message], *,
                      on_message: Callable[[Message], None] | None = ...
                      ) -> AsyncIterator[Event]: ...


def _takes(fn: Callable[..., object], name: str) -> bool:
    import inspect

    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin or C callable without a signature
        return False


def open_store(store: SessionStore | str | os.PathLike[str] | None = None) -> SessionStore:
    """The store that ``store`` names.

    ``None``: the default SQLite file (:func:`default_store_path`); a path: a SQLite file; a
    ``postgresql://`` URL: that database (one shared :class:`PostgresStore` per URL in a
    process); a store object: itself. A string with any other ``scheme://`` is an error,
    never a file name.
    """
    if isinstance(store, str) and (scheme := _SCHEME.match(store)):
        from reactloop.sessions import _postgres

        if scheme.group(1).lower() in _postgres.SCHEMES:
            return _postgres.shared_store(store)
        raise UserError(f"unsupported session store URL {_postgres.redact(store)!r}: pass a "
                        "file path (SQLite) or postgresql://user:password@host:port/database "
                        "(to use a file with '://' in its name, pass a pathlib.Path)")
    if store is None or isinstance(store, (str, os.PathLike)):
        from reactloop.sessions._sqlite import SQLiteStore

        return SQLiteStore(store)
    if not isinstance(store, SessionStore):
        raise UserError(f"{store!r} is not a session store: pass a path, a postgresql:// URL, "
                        "a store such as SQLiteStore, or an object with "
                        "get/writer/append/replace/clear/delete/list/close")
    return store


class Session:
    """A multi-turn conversation: each :meth:`send` continues the history of the ones before.

    ``agent.conversation()`` keeps the history in memory (a :class:`MemoryStore`);
    ``agent.session(id, store)`` keeps it in a store, message by message as the run produces
    it, each in its own transaction, so a process killed at any point loses at most the step
    in flight, and opening the same id again — in this process or another — continues the
    conversation. If the last run ended ``WAITING_FOR_USER`` (the agent asked a question), the
    next :meth:`send` is the answer. A tool call that a crash interrupted is answered with an
    error result on resume.

    A session has one writer at a time, across processes: each :meth:`send` holds the store's
    writer lock for the session (``store.writer(id)``) from before the prompt is written until
    the run has ended, and re-reads the stored history under it, so runs of several processes
    on one session follow each other and never interleave. While another writer holds the
    session, :meth:`send` waits up to :attr:`wait` seconds, then raises
    :class:`~reactloop.SessionBusy`.

    Args:
        agent: a :class:`reactloop.Agent` (anything with its ``run`` and ``stream``).
        session_id: the session to continue or start; ``None``: a new random id.
        store: a :class:`SessionStore` or the path of a SQLite file; ``None``: in memory.
        history: earlier messages to start a new session with.
        wait: seconds :meth:`send` waits for another writer of the session.

    Set :attr:`usage_limits` to hold the whole session (every send, in this process) to
    :class:`~reactloop.UsageLimits`; each run also keeps its agent's own limits.
    """

    def __init__(self, agent: AgentLike, session_id: str | None = None,
                 store: SessionStore | str | os.PathLike[str] | None = None, *,
                 history: Sequence[Message] = (), wait: float = 0.0) -> None:
        self.agent = agent
        self.id = check_session_id(session_id) if session_id is not None else uuid.uuid4().hex
        self._tell: dict[str, str] = (
            {"conversation_id": self.id} if _takes(agent.run, "conversation_id") else {})
        self.store: SessionStore = MemoryStore() if store is None else open_store(store)
        self.wait = wait
        self.last: RunResult | None = None
        """The result of the latest :meth:`send` in this process."""
        self.usage_limits: UsageLimits | None = None
        """Limits on the session's total usage (its sends in this process); a send that
        would pass one ends ``RunState.USAGE_LIMIT``."""
        self._spent = Budget()
        if history:
            self._start(history)
        self._messages: list[Message] = self._open()

    def _start(self, history: Sequence[Message]) -> None:
        with self.store.writer(self.id) as writer:
            stored = writer.get()
            if stored:
                raise UserError(f"session {self.id!r} already has {len(stored)} messages in "
                                f"{self.store!r}: pass history only to start a new session")
            writer.append(history)

    def _open(self) -> list[Message]:
        from reactloop.context import repair  # lazy: keeps `import reactloop` light

        stored = self.store.get(self.id)
        if _same(repair(stored), stored):
            return stored
        try:  # a crash left tool calls unanswered: answer them, unless their writer is alive
            with self.store.writer(self.id) as writer:
                return _repaired(writer)
        except SessionBusy:
            return stored  # the calls are in flight, not interrupted: the next send repairs

    @property
    def wait(self) -> float:
        """Seconds :meth:`send` waits for another writer of this session (default 0: none)."""
        return self._wait

    @wait.setter
    def wait(self, seconds: float) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) \
                or not math.isfinite(seconds) or seconds < 0:
            raise UserError(f"wait must be a finite number of seconds (at least 0), got "
                            f"{seconds!r}")
        self._wait = float(seconds)

    @property
    def usage(self) -> dict[str, Any]:
        """What the session's runs used in this process: ``requests``, ``tool_calls``,
        ``input_tokens``, ``output_tokens`` and ``cost_usd`` (None: unknown)."""
        return self._spent.to_dict()

    @contextmanager
    def _in_budget(self) -> Iterator[None]:
        """Runs started inside count toward the session's limits (from what the session
        used before)."""
        if self.usage_limits is None:
            yield
            return
        token = outer_budget.set(self._spent.seeded(self.usage_limits))
        try:
            yield
        finally:
            outer_budget.reset(token)

    @property
    def messages(self) -> list[Message]:
        """The history (a copy): as stored after the latest send, or when opened."""
        return list(self._messages)

    @property
    def waiting_for(self) -> str | None:
        """The question the agent asked (``ask_question``) when it is waiting for an answer."""
        last = self._messages[-1] if self._messages else None
        if last is not None and last.role == "tool" and last.name == "ask_question" \
                and not last.is_error:
            return last.content
        entries = last.metadata.get(APPROVALS_KEY) if last is not None else None
        if isinstance(entries, Mapping):  # a sub-agent (an agent called as a tool) asked
            for entry in entries.values():
                if isinstance(entry, Mapping) and entry.get(ASKS) and \
                        entry.get("decision") is None:
                    return str(entry[ASKS])
        return None

    async def send(self, text: Prompt) -> RunResult:
        """Run the agent on ``text`` (a string, or a list of strings and attachments) after the
        stored history; return the result."""
        result: RunResult | None = None
        async for event in self._events(text, stream=False):
            if isinstance(event, RunEndEvent) and event.parent_run_id is None:
                result = event.result
        assert result is not None
        return result

    def send_sync(self, text: Prompt) -> RunResult:
        """Blocking :meth:`send`."""
        return asyncio.run(self.send(text))

    async def stream(self, text: Prompt) -> AsyncIterator[Event]:
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

    @property
    def pending_approvals(self) -> list[PendingApproval]:
        """Tool calls waiting for a decision (the last run ended ``WAITING_FOR_APPROVAL``);
        stored with the history, so also after a crash and in another process."""
        return pending_approvals(self._messages)

    async def resume(self, decisions: Iterable[Decision | Mapping[str, Any]]) -> RunResult[Any]:
        """Apply ``decisions`` (``pending.approve()``, ``.deny(reason)``, ``.edit(args)``) and
        go on with the waiting run. The decisions are stored before any call runs, so a crash
        never runs a call twice (it is answered as interrupted)."""
        result: RunResult[Any] | None = None
        async for event in self._events(None, stream=False, decisions=decisions):
            if isinstance(event, RunEndEvent) and event.parent_run_id is None:
                result = event.result
        assert result is not None
        return result

    def resume_sync(self, decisions: Iterable[Decision | Mapping[str, Any]]) -> RunResult[Any]:
        """Blocking :meth:`resume`."""
        return asyncio.run(self.resume(decisions))

    async def resume_stream(self, decisions: Iterable[Decision | Mapping[str, Any]]
                            ) -> AsyncIterator[Event]:
        """Like :meth:`resume`, yielding the run's events; the last one is ``run_end``."""
        async for event in self._events(None, stream=True, decisions=decisions):
            yield event

    async def _events(self, text: Prompt | None, *, stream: bool,
                      decisions: Iterable[Decision | Mapping[str, Any]] = ()
                      ) -> AsyncIterator[Event]:
        writer = await self._writer()
        history: list[Message] = self._messages
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
            history = self._messages = _repaired(writer)  # another process may have written
            if text is None:  # decisions: checked, and stored before anything runs
                history = self._messages = apply_decisions(history, decisions)
                writer.replace(history)
            source = (self._run_events(text, history, write) if not stream
                      else self._started(self.agent.resume_stream(
                          history, on_message=write, **self._tell)) if text is None
                      else self._started(self.agent.stream(
                          text, history=history, on_message=write, **self._tell)))
            try:
                async for event in source:
                    if isinstance(event, RunEndEvent) and event.parent_run_id is None:
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
                    self._messages = [*history, *written]
                    if not failed:
                        with suppress(Exception):  # else the next send repairs it
                            self._messages = _repaired(writer)
            finally:
                writer.close()

    async def _run_events(self, text: Prompt | None, history: Sequence[Message],
                          write: Callable[[Message], None]) -> AsyncIterator[Event]:
        with self._in_budget():
            result = await (self.agent.resume(history, on_message=write, **self._tell)
                            if text is None
                            else self.agent.run(text, history=history, on_message=write,
                                                **self._tell))
        yield RunEndEvent(result.run_id, result)

    async def _started(self, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
        """``events``, the run started (its first event) inside the session's budget."""
        try:
            with self._in_budget():
                try:
                    first = await anext(aiter(events))
                except StopAsyncIteration:
                    return
            yield first
            async for event in events:
                yield event
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()

    def _settle(self, writer: SessionWriter, result: RunResult,
                stored: Sequence[Message]) -> None:
        messages = list(result.messages)
        if not _same(messages, stored):  # pruned or compacted: store the new history
            writer.replace(messages)
        self._messages = messages
        self.last = result
        self._spent.add(result.metrics)

    def clear(self) -> None:
        """Forget the history (the session id stays)."""
        self.store.clear(self.id)
        self._messages = []

    def delete(self) -> None:
        """Remove the session from the store."""
        self.store.delete(self.id)
        self._messages = []

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.id!r}, messages={len(self._messages)}, "
                f"store={self.store!r})")


class Conversation(Session):
    """A :class:`Session` opened history-first: ``Conversation(agent, history)``, in memory
    unless a ``store`` is given (what ``agent.conversation(history)`` returns)."""

    def __init__(self, agent: AgentLike, history: Sequence[Message] = (), *,
                 session_id: str | None = None,
                 store: SessionStore | str | os.PathLike[str] | None = None,
                 wait: float = 0.0) -> None:
        super().__init__(agent, session_id, store, history=history, wait=wait)


def _repaired(writer: SessionWriter) -> list[Message]:
    """The stored history with every tool call answered, the repair stored (under the lock)."""
    from reactloop.context import repair

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
