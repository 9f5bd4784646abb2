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

An MCP server that asks the user while its tool runs (elicitation) does not end the run: the
run waits, live, for the answer (:mod:`reactloop.serve._elicit`). A reader that hands the
question to a client which answers on a later request (AG-UI, A2A) reads with ``pause=True``:
it stops after the question and leaves the run going (*detached*); the request carrying the
answer takes the run back with :meth:`Runs.attach` and reads on. A run nobody takes back still
ends (the question times out as ``cancel``), releasing the session.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from reactloop.approvals import apply_decisions
from reactloop.serve._elicit import REQUESTED, Questions

if TYPE_CHECKING:
    from reactloop.agent import Agent
    from reactloop.approvals import Decision
    from reactloop.attachments import Prompt
    from reactloop.events import Event
    from reactloop.serve._elicit import Question
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

    def __init__(self, agent: Agent, store: SessionStore,
                 questions: Questions | None = None) -> None:
        self.agent = agent
        self.store = store
        self.questions = questions or Questions()
        """MCP servers' questions waiting for an answer (elicitation)."""
        self._busy: dict[str, float] = {}
        self._live: dict[str, Run] = {}

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

    def attach(self, session_id: str) -> Run:
        """The session's run that a reader left waiting for an answer (``pause``), to read on;
        :class:`Busy` when another reader follows it, ``KeyError`` when none runs."""
        run = self._live.get(session_id)
        if run is None:
            raise KeyError(f"session {session_id!r} runs nothing that waits for an answer")
        if not run.detached:
            raise Busy(session_id)
        run.detached = False
        return run

    def answer(self, session_id: str, answers: Sequence[tuple[str, str, Any]], *,
               take_run: bool = False) -> tuple[list[dict[str, Any]], Run | None]:
        """Give ``answers`` (question id, action, content) to the MCP servers' questions
        waiting in the session, all checked first (nothing is given if one is wrong); with
        ``take_run`` the run is taken back (:meth:`attach`) before. The answers given (as
        JSON values) and the run taken.

        Raises:
            KeyError: no such question waits (or, with ``take_run``, no run waits).
            ValueError: an answer the requested schema refuses (naming the field).
            Busy: ``take_run`` while another reader follows the run.
        """
        from reactloop.mcp._elicitation import checked_answer

        waiting = {q.id: q for q in self.questions.pending(session_id)}
        checked = []
        for question_id, action, content in answers:
            question = waiting.get(question_id)
            if question is None:
                raise KeyError(f"no question {question_id!r} of an MCP server waits in session "
                               f"{session_id!r} (answered already, timed out, or its run "
                               f"ended); waiting: {', '.join(waiting) or 'none'}")
            try:
                checked.append((question_id, checked_answer(question.request, action, content)))
            except ValueError as exc:
                raise ValueError(f"answering {question.request.message!r}: {exc}") from None
        run = self.attach(session_id) if take_run else None
        for question_id, given in checked:
            self.questions.answer(session_id, question_id, given)
        return [{"id": question_id, "action": given.action,
                 "content": None if given.content is None else dict(given.content)}
                for question_id, given in checked], run

    def _open(self, session_id: str) -> Session:
        if session_id in self._busy:
            waiting = self.questions.pending(session_id)
            if waiting:
                q = waiting[0]
                raise Waiting(
                    f"session {session_id!r} waits for an answer to MCP server "
                    f"{q.request.server!r}'s question {q.request.message!r}; answer it first "
                    f"(POST /api/sessions/{session_id}/elicitations with id {q.id!r}, an AG-UI "
                    "resume of its interrupt, or the A2A task's next message)")
            raise Busy(session_id)
        return self.agent.session(session_id, store=self.store)

    def claim(self, run: Run) -> None:
        self._busy[run.session.id] = time.time()
        self._live[run.session.id] = run

    def release(self, session_id: str) -> None:
        self._busy.pop(session_id, None)
        self._live.pop(session_id, None)


class Run:
    """One message being run: iterate :meth:`batches` for the run's events."""

    def __init__(self, runs: Runs, session: Session, text: Prompt | None,
                 decisions: Sequence[Decision]) -> None:
        self.session = session
        self._runs = runs
        self._queue: asyncio.Queue[Any] = asyncio.Queue()  # unbounded: see _produce
        self._failure: BaseException | None = None
        self._begun = asyncio.Event()  # set by the first event, or by the end of the run
        self._shown: set[str] = set()  # questions a pausing reader has handed on
        self.run_id = ""
        self.detached = False
        """A reader paused on a question and left the run going (see :meth:`Runs.attach`)."""
        self.paused = False
        """The last :meth:`batches` stopped at a question (its reader hands it on)."""
        runs.claim(self)
        # the run starts now and always ends (releasing the session), even if the response
        # is never read; the queue is unbounded so a vanished reader cannot stall it
        self._task = asyncio.get_running_loop().create_task(self._produce(text, decisions))

    async def _produce(self, text: Prompt | None, decisions: Sequence[Decision]) -> None:
        from reactloop.mcp._elicitation import default_elicitor

        # the MCP servers this run opens ask their questions through this server's clients
        default_elicitor.set(self._runs.questions.handler(self.session.id, self._announce))
        events = (self.session.stream(text) if text is not None
                  else self.session.resume_stream(decisions))
        try:
            async for event in events:
                self.run_id = self.run_id or event.run_id
                self._queue.put_nowait(event)
                self._begun.set()
        except Exception as exc:  # outside the loop's own handling (e.g. the store failed)
            self._failure = exc
        finally:
            self._runs.release(self.session.id)
            self._queue.put_nowait(_DONE)
            self._begun.set()

    def _announce(self, question: Question) -> None:
        """Put an MCP server's question in the run's stream (a ``custom`` event)."""
        from reactloop.events import CustomEvent

        self._queue.put_nowait(CustomEvent(self.run_id, REQUESTED, question.to_dict()))

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

    async def batches(self, *, pause: bool = False) -> AsyncIterator[list[Event]]:
        """The run's events in order, in batches of those already waiting (so a busy server
        writes several events at once); an empty batch after :data:`KEEPALIVE` seconds of
        silence.

        ``pause``: stop after the first question of an MCP server not handed on before (the
        caller hands on every question waiting, ``Runs.questions.pending``), leaving the run
        going: :attr:`paused` says so, and :meth:`Runs.attach` reads on later.

        Raises what broke the run outside the loop (the loop itself never raises). Leaving
        early (the client disconnected) cancels the run."""
        self.paused = False
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
                    if not (pause and self._asks(item, batch)):
                        batch.append(item)
                    if self.paused or self._queue.empty():  # paused: the rest is the next
                        break                                # reader's
                    item = self._queue.get_nowait()
                if batch:
                    yield batch
                if self.paused:
                    return
            if self._failure is not None:
                raise self._failure
        finally:
            if not self._task.done() and not self.detached:
                self._task.cancel()

    def _asks(self, event: Any, batch: list[Event]) -> bool:
        """True for a question already handed on (skipped); a new one ends the batch with it
        and pauses (the reader leaves the run going)."""
        if getattr(event, "name", None) != REQUESTED or event.type != "custom":
            return False
        if event.data["id"] in self._shown:
            return True
        waiting = {q.id for q in self._runs.questions.pending(self.session.id)}
        if event.data["id"] not in waiting:  # answered already (the sessions API): read on
            return False
        batch.append(event)
        self._shown.update(waiting)
        self.paused = self.detached = True
        return True
