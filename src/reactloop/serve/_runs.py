"""Running one message of a session, at most one at a time per session (the busy map).

Each message opens the session afresh from the store (``agent.session(id, store)``), so the
run starts from exactly what is stored — also what another process wrote — and keeps nothing
in memory between messages. The run is driven by a task of its own that feeds a queue; the
HTTP response reads the queue, writing every event already waiting in one go. When the client
goes away the response cancels the task, the run ends ``CANCELLED`` and what it wrote so far
stays in the store.

A run that reaches a tool call needing approval ends ``WAITING_FOR_APPROVAL``; the calls wait in
the stored history. :meth:`Runs.resume` continues it with decisions (checked against the stored
history before the response starts, so a wrong decision is an HTTP error, not a broken stream);
a new message is refused while calls wait.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from reactloop.approvals import apply_decisions

if TYPE_CHECKING:
    from reactloop.agent import Agent
    from reactloop.approvals import Decision
    from reactloop.attachments import Prompt
    from reactloop.events import Event
    from reactloop.sessions import Session, SessionStore

__all__ = ["KEEPALIVE", "Busy", "Run", "Runs", "Waiting"]

KEEPALIVE: Final = 15.0
"""Seconds of silence after which a stream sends a keep-alive (proxies drop idle streams)."""
_DONE: Final = object()


class Busy(Exception):
    """The session is already running a message in this process."""


class Waiting(Exception):
    """The session has tool calls waiting for approval: decide them before a new message."""


class Runs:
    """The runs of this process, at most one per session."""

    def __init__(self, agent: Agent, store: SessionStore) -> None:
        self.agent = agent
        self.store = store
        self._busy: dict[str, float] = {}

    def running(self, session_id: str) -> bool:
        return session_id in self._busy

    def start(self, session_id: str, text: Prompt) -> Run:
        """Start ``text`` on the session now; :class:`Busy` if it is already running.

        Raises ``UserError`` for an invalid session id (before anything runs)."""
        session = self._open(session_id)
        waiting = session.pending_approvals
        if waiting:
            calls = ", ".join(f"{p.tool_name} ({p.call_id})" for p in waiting)
            raise Waiting(f"session {session_id!r} has tool calls waiting for approval: {calls}; "
                          f"decide them first (POST /api/sessions/{session_id}/approvals)")
        return Run(self, session, text, ())

    def resume(self, session_id: str, decisions: Sequence[Decision]) -> Run:
        """Continue the session's waiting run with ``decisions``; :class:`Busy` if it runs.

        Raises ``ApprovalError`` (before anything runs) when a decision does not match a call
        that waits: the session writer checks them again when it stores them."""
        session = self._open(session_id)
        apply_decisions(session.messages, decisions)
        return Run(self, session, None, decisions)

    def _open(self, session_id: str) -> Session:
        if session_id in self._busy:
            raise Busy(session_id)
        return self.agent.session(session_id, store=self.store)

    def claim(self, session_id: str) -> None:
        self._busy[session_id] = time.time()

    def release(self, session_id: str) -> None:
        self._busy.pop(session_id, None)


class Run:
    """One message being run: iterate :meth:`batches` for the run's events."""

    def __init__(self, runs: Runs, session: Session, text: Prompt | None,
                 decisions: Sequence[Decision]) -> None:
        self.session = session
        self._runs = runs
        self._queue: asyncio.Queue[Any] = asyncio.Queue()  # unbounded: see _produce
        self._failure: BaseException | None = None
        self._begun = asyncio.Event()  # set by the first event, or by the end of the run
        runs.claim(session.id)
        # the run starts now and always ends (releasing the session), even if the response
        # is never read; the queue is unbounded so a vanished reader cannot stall it
        self._task = asyncio.get_running_loop().create_task(self._produce(text, decisions))

    async def _produce(self, text: Prompt | None, decisions: Sequence[Decision]) -> None:
        events = (self.session.stream(text) if text is not None
                  else self.session.resume_stream(decisions))
        try:
            async for event in events:
                self._queue.put_nowait(event)
                self._begun.set()
        except Exception as exc:  # outside the loop's own handling (e.g. the store failed)
            self._failure = exc
        finally:
            self._runs.release(self.session.id)
            self._queue.put_nowait(_DONE)
            self._begun.set()

    async def begun(self) -> None:
        """Wait until the run has produced its first event.

        Raises what stopped it before that (another process writing the session:
        :class:`~reactloop.SessionBusy`), so the caller can answer with a status code instead
        of a stream that only carries the error."""
        await self._begun.wait()
        if self._failure is not None and self._queue.qsize() == 1:  # nothing but the end
            self._queue.get_nowait()
            raise self._failure

    async def stop(self) -> None:
        """Cancel the run and wait until it has ended (``CANCELLED`` stored, the session
        released)."""
        self._task.cancel()
        await asyncio.wait([self._task])

    async def batches(self) -> AsyncIterator[list[Event]]:
        """The run's events in order, in batches of those already waiting (so a busy server
        writes several events at once); an empty batch after :data:`KEEPALIVE` seconds of
        silence.

        Raises what broke the run outside the loop (the loop itself never raises). Leaving
        early (the client disconnected) cancels the run."""
        try:
            done = False
            while not done:
                try:
                    async with asyncio.timeout(KEEPALIVE):
                        item = await self._queue.get()
                except TimeoutError:
                    yield []
                    continue
                batch: list[Event] = []
                while True:
                    if item is _DONE:
                        done = True
                        break
                    batch.append(item)
                    if self._queue.empty():
                        break
                    item = self._queue.get_nowait()
                if batch:
                    yield batch
            if self._failure is not None:
                raise self._failure
        finally:
            if not self._task.done():
                self._task.cancel()
