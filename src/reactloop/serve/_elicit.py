"""MCP servers' questions (elicitation) during served runs: asked, waited for, answered.

A served run installs :meth:`Questions.handler` as the elicitation handler of the MCP servers
it opens (those without a handler of their own), so a server that asks the user while its tool
runs (``elicitation/create`` inside an open ``tools/call``) reaches the clients of
``reactloop serve``:

- the run's stream gets a ``custom`` event named :data:`REQUESTED` whose data is the question
  (``id``, ``server``, ``message``, ``mode``, ``url``, ``tool``, ``schema``), live, while the
  tool call waits: the dev UI draws a form from the schema; AG-UI ends the response with an
  ``interrupt``; A2A sets the task ``input-required``;
- the answer (``accept`` with the form's values, ``decline`` or ``cancel``) comes from
  ``POST /api/sessions/{id}/elicitations``, an AG-UI ``resume`` entry or the next A2A message
  of the task, is checked against the schema, and goes to the server, which goes on;
- nobody answering within the wait limit (``create_app(elicitation_timeout=...)``, 600 s by
  default) answers ``cancel``: the server hears it and the run goes on to a clear ending. The
  run's own deadline, a cancel or a sessions-API client that goes away end the wait too; with
  ``elicitation_timeout=None`` and no deadline a question nobody answers waits while the
  server runs.

This is the classic, *live* form: the wait is in this process (it holds the connection). A
server restart loses it like any interrupted tool call.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from reactloop.mcp._elicitation import Elicitation, ElicitationAnswer, Elicitor

__all__ = ["DEFAULT_TIMEOUT", "REQUESTED", "Question", "Questions"]

REQUESTED: Final = "mcp_elicitation_request"
"""The name of the ``custom`` event announcing a question (its data: :meth:`Question.to_dict`)."""
DEFAULT_TIMEOUT: Final = 600.0
"""Seconds a question waits for an answer before it is answered ``cancel``."""


@dataclass
class Question:
    """One question of an MCP server, waiting for its answer."""

    id: str
    session_id: str
    request: Elicitation
    answer: asyncio.Future[ElicitationAnswer]
    asked: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, **self.request.to_dict(), "asked": self.asked}


class Questions:
    """The questions waiting in this process, by session (a run asks through
    :meth:`handler`; clients answer with :meth:`answer`)."""

    def __init__(self, timeout: float | None = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout
        self._waiting: dict[str, Question] = {}

    def pending(self, session_id: str) -> list[Question]:
        """The session's questions without an answer, oldest first."""
        return [q for q in self._waiting.values() if q.session_id == session_id]

    def handler(self, session_id: str, announce: Callable[[Question], None]) -> Elicitor:
        """The elicitation handler of one run of ``session_id``: ``announce`` puts the question
        in the run's stream; the answer is awaited (bounded by :attr:`timeout`)."""

        async def ask(request: Elicitation) -> ElicitationAnswer:
            loop = asyncio.get_running_loop()
            question = Question(uuid.uuid4().hex, session_id, request, loop.create_future())
            self._waiting[question.id] = question
            try:
                announce(question)
                async with asyncio.timeout(self.timeout):
                    return await question.answer
            except TimeoutError:  # nobody answered: the server hears "cancel", the run goes on
                return ElicitationAnswer.cancel()
            finally:
                self._waiting.pop(question.id, None)

        return ask

    def answer(self, session_id: str, question_id: str, answer: ElicitationAnswer) -> Question:
        """Give ``answer`` to the question; ``KeyError`` (with a message for the client) when
        the session has no such question waiting (answered already, timed out, or the run
        ended)."""
        question = self._waiting.get(question_id)
        if question is None or question.session_id != session_id \
                or question.answer.done():
            ids = ", ".join(q.id for q in self.pending(session_id)) or "none"
            raise KeyError(f"no question {question_id!r} of an MCP server waits in session "
                           f"{session_id!r} (answered already, timed out, or its run ended); "
                           f"waiting: {ids}")
        self._waiting.pop(question_id, None)
        question.answer.set_result(answer)
        return question
