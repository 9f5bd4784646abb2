"""Running one message of a session, at most one at a time per session (the busy map).

Each message opens the session afresh from the store (``agent.session(id, store)``), so the
run starts from exactly what is stored — also what another process wrote — and keeps nothing
in memory between messages. The run is driven by a task of its own that feeds a queue; the
HTTP response reads the queue, writing every event already waiting in one go. When the client goes away the response cancels the task, the
run ends ``CANCELLED`` and what it wrote so far stays in the store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from reactloop.agent import Agent
    from reactloop.events import Event
    from reactloop.sessions import Session, SessionStore

__all__ = ["KEEPALIVE", "Busy", "Run", "Runs"]

KEEPALIVE: Final = 15.0
"""Seconds of silence after which a stream sends a keep-alive (proxies drop idle streams)."""
_DONE: Final = object()


class Busy(Exception):
    """The session is already running a message in this process."""


class Runs:
    """The runs of this process, at most one per session."""

    def __init__(self, agent: Agent, store: SessionStore) -> None:
        self.agent = agent
        self.store = store
        self._busy: dict[str, float] = {}

    def running(self, session_id: str) -> bool:
        return session_id in self._busy

    def start(self, session_id: str, text: str) -> Run:
        """Start ``text`` on the session now; :class:`Busy` if it is already running.

        Raises ``UserError`` for an invalid session id (before anything runs)."""
        if session_id in self._busy:
            raise Busy(session_id)
        session = self.agent.session(session_id, store=self.store)
        return Run(self, session, text)

    def claim(self, session_id: str) -> None:
        self._busy[session_id] = time.time()

    def release(self, session_id: str) -> None:
        self._busy.pop(session_id, None)


class Run:
    """One message being run: iterate :meth:`batches` for the run's events."""

    def __init__(self, runs: Runs, session: Session, text: str) -> None:
        self.session = session
        self._runs = runs
        self._queue: asyncio.Queue[Any] = asyncio.Queue()  # unbounded: see _produce
        self._failure: BaseException | None = None
        self._begun = asyncio.Event()  # set by the first event, or by the end of the run
        runs.claim(session.id)
        # the run starts now and always ends (releasing the session), even if the response
        # is never read; the queue is unbounded so a vanished reader cannot stall it
        self._task = asyncio.get_running_loop().create_task(self._produce(text))

    async def _produce(self, text: str) -> None:
        try:
            async for event in self.session.stream(text):
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
