"""``reactloop run --temporal``: the questions MCP servers ask in the resumable form, which
wait durably in the workflow (``mcp_input_required`` events, see
``reactloop.temporal._elicitation``).

On a terminal each is asked there, field by field (the terminal form of a local run), and the
answer sent through the handle. Without a terminal nobody can answer: the command stops
following, saying where the run waits and how to answer, and exits 3 (waiting for the user),
never a hang.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from reactloop.events import CustomEvent, Event

__all__ = ["Questions", "Unanswered"]

EXIT_WAITING = 3
"""The exit code of a run waiting for the user (as a local run's)."""


class Unanswered(Exception):
    """A question waits and there is no terminal to ask it on (the message says how)."""


class Questions:
    """Answers the questions of the turn being followed."""

    def __init__(self, handle: Any, *, terminal: bool, say: Callable[[str], None],
                 before_asking: Callable[[], None], command: str) -> None:
        self.handle, self.terminal, self.say = handle, terminal, say
        self.before_asking, self.command = before_asking, command
        self._prompt: Any = None

    async def seen(self, event: Event) -> None:
        """Ask the question ``event`` carries, if it is one that still waits."""
        if not (isinstance(event, CustomEvent) and event.name == "mcp_input_required"
                and isinstance(event.data, dict)):
            return
        from reactloop.temporal._elicitation import question_of

        qid = str(event.data.get("id"))
        if qid not in await self.handle.pending_inputs():  # answered already (re-attached)
            return
        question = question_of(event.data)
        if not self.terminal:
            raise Unanswered(
                f"MCP server {question.server!r} asks: {question.message} — the run waits for "
                f"the answer in workflow {self.handle.id}; answer it on a terminal "
                f"({self.command} --id {shlex.quote(self.handle.id)}) or from Python "
                f"(RunHandle.answer({qid!r}, ElicitationAnswer...))")
        from reactloop.cli._approve import terminal_prompt
        from reactloop.mcp._ask_terminal import form_elicitor
        from reactloop.mcp._elicitation import answer_of

        if self._prompt is None:
            self._prompt = terminal_prompt()
        self.before_asking()  # the live progress line goes before a question
        answer = await answer_of(form_elicitor(self._prompt, self.say), question)
        await self.handle.answer(qid, answer)
