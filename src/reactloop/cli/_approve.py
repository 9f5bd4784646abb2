"""Approvals and typed answers on the command line.

A run that ends ``WAITING_FOR_APPROVAL`` asks, per waiting call: ``y`` approves, ``n`` denies
(with a reason the model reads), ``e`` approves with edited JSON arguments. ``--approve-all``
and ``--deny-all`` decide without asking (scripts). ``run`` asks only on a terminal (piped
stdin is the task's text); ``chat`` asks on its terminal, or reads the answers as the next
lines of piped input. With no decision (no terminal, end of input, Ctrl-C at the question)
the calls keep waiting — in the session, when there is one — and ``run`` exits 7.

``--output-schema FILE.json`` makes the answer JSON validated against that schema
(``Agent(output_type=<the schema>)``); ``run`` prints it on stdout.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import click

from reactloop.approvals import Decision, PendingApproval
from reactloop.result import RunResult, RunState

__all__ = ["Approver", "Policy", "Prompt", "Resumable", "ask", "decide", "line_prompt",
           "load_output_schema", "policy_of", "terminal_prompt"]

Policy = Literal["ask", "approve", "deny", "never"]
"""``never``: nobody can be asked (no terminal): the calls keep waiting."""
Prompt = Callable[[str], Awaitable[str]]
"""Asks a question and returns the answer line; raises ``EOFError`` at the end of input."""


def policy_of(approve_all: bool, deny_all: bool, *, can_ask: bool = True) -> Policy:
    if approve_all and deny_all:
        raise click.UsageError("--approve-all and --deny-all exclude each other")
    return "approve" if approve_all else "deny" if deny_all else "ask" if can_ask else "never"


def load_output_schema(path: str) -> dict[str, Any]:
    """The schema in ``path`` (a click error naming the problem when it is not JSON)."""
    try:
        schema = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise click.BadParameter(f"{path} is not a JSON file: {exc}",
                                 param_hint="--output-schema") from None
    if not isinstance(schema, dict):
        raise click.BadParameter(f"{path} holds no JSON Schema object",
                                 param_hint="--output-schema")
    return schema


def _arguments(p: PendingApproval) -> str:
    return json.dumps(dict(p.arguments), ensure_ascii=False)


async def ask(p: PendingApproval, prompt: Prompt, say: Callable[[str], None]) -> Decision:
    """One person's decision on ``p``: y / n (then a reason) / e (then JSON arguments)."""
    say(f"{p.tool_name}({_arguments(p)}) needs your approval.")
    while True:
        answer = (await prompt("approve? [y]es / [n]o / [e]dit: ")).strip().lower()
        if answer in ("y", "yes"):
            return p.approve()
        if answer in ("n", "no"):
            return p.deny((await prompt("reason: ")).strip())
        if answer in ("e", "edit"):
            text = await prompt(f"arguments (JSON, was {_arguments(p)}): ")
            try:
                edited = json.loads(text)
            except ValueError as exc:
                say(f"not JSON ({exc}); try again")
                continue
            if isinstance(edited, dict):
                return p.edit(edited)
            say("the arguments are a JSON object, e.g. {\"path\": \"a.txt\"}; try again")
        else:
            say("answer y, n or e")


async def decide(pending: Sequence[PendingApproval], policy: Policy, prompt: Prompt,
                 say: Callable[[str], None]) -> list[Decision] | None:
    """Decisions for every waiting call, or None when nobody decided (the calls wait)."""
    if policy == "approve":
        return [p.approve() for p in pending]
    if policy == "deny":
        return [p.deny("denied by --deny-all") for p in pending]
    if policy == "never":
        return None
    try:
        return [await ask(p, prompt, say) for p in pending]
    except (EOFError, KeyboardInterrupt):
        return None


class Resumable(Protocol):
    """A waiting run that goes on with decisions (a session, an agent's run, a workflow)."""

    async def resume(self, last: RunResult[Any] | None, decisions: list[Decision]
                     ) -> RunResult[Any] | None:
        """Continue ``last`` (None: the session's waiting run) with ``decisions``, render
        its events, and return its result (None when it was cancelled)."""
        ...


@dataclass(frozen=True)
class Approver:
    """Who decides the calls that wait for approval: ``policy``, and for ``ask`` the
    ``prompt`` the questions go through; ``say`` writes a line for the person."""

    policy: Policy
    prompt: Prompt
    say: Callable[[str], None]

    @classmethod
    def for_terminal(cls, policy: Policy, say: Callable[[str], None], *,
                     terminal: bool) -> Approver:
        """Questions on the terminal when there is one, else on the next lines of stdin."""
        return cls(policy, terminal_prompt() if terminal else line_prompt(say), say)

    async def settle(self, result: RunResult[Any] | None,
                     pending: Sequence[PendingApproval], run: Resumable
                     ) -> RunResult[Any] | None:
        """While calls wait (``pending``: those of ``result``, or of a session opened with
        calls waiting): decide and continue ``run``; the final result (``result`` unchanged
        when nobody decided)."""
        while pending:
            decisions = await decide(pending, self.policy, self.prompt, self.say)
            if decisions is None:
                self.say("no decision: the calls keep waiting")
                return result
            result = await run.resume(result, decisions)
            if result is None or result.state is not RunState.WAITING_FOR_APPROVAL:
                return result
            pending = result.pending_approvals
        return result


def terminal_prompt() -> Prompt:
    """Questions on the terminal (prompt_toolkit), drawn on stderr so stdout keeps only the
    answer. Ctrl-C and Ctrl-D end the questions (the calls keep waiting)."""
    sessions: list[Any] = []  # made at the first question: prompt_toolkit loads slowly

    async def prompt(question: str) -> str:
        if not sessions:
            from prompt_toolkit import PromptSession
            from prompt_toolkit.output import create_output

            sessions.append(PromptSession(output=create_output(stdout=sys.stderr)))
        answer: str = await sessions[0].prompt_async(question)
        return answer

    return prompt


def line_prompt(say: Callable[[str], None]) -> Prompt:
    """Questions answered by the next lines of (piped) stdin."""

    async def prompt(question: str) -> str:
        say(question)
        line: str = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            raise EOFError
        return line.rstrip("\n")

    return prompt
