"""``reactloop run --temporal``, once asked for: start or attach, follow, render, exit
(see :mod:`reactloop.cli._temporal_run`)."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from collections.abc import AsyncIterator
from typing import Any, NoReturn

import click

from reactloop.cli._approve import Policy
from reactloop.cli._outcome import Outcome, judge
from reactloop.cli._render import NORMAL, QUIET, Renderer
from reactloop.cli._temporal_questions import EXIT_WAITING, Questions, Unanswered
from reactloop.events import RunEndEvent
from reactloop.result import RunResult, RunState

__all__ = ["run_on_temporal"]


def run_on_temporal(prompt: Any, agent_spec: str, *, address: str, task_queue: str,
                    run_id: str | None, verbosity: int, as_json: bool,
                    command: str, policy: Policy = "never", store: str | None = None) -> NoReturn:
    """Start (or attach to) the run, show it, and exit with the local run's code.

    ``prompt``: text, a list of text and attachments, or ``None`` (follow ``run_id``);
    ``store``: the attachment store (``--store``), when not the agent's own."""
    from temporalio.service import RPCError

    from reactloop.cli._outcome import explain_error
    from reactloop.cli.worker import load_durable
    from reactloop.errors import ReactloopError

    durable = load_durable(agent_spec)
    if store:
        durable.store = store
    try:
        code = asyncio.run(_follow(durable, prompt, address, task_queue, run_id,
                                   QUIET if as_json else verbosity, as_json, command, policy))
    except (ReactloopError, RPCError) as exc:  # the server's refusals are one line too
        click.echo(f"reactloop: {explain_error(exc)}", err=True)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # nothing is left to clean up; skipping interpreter shutdown avoids a rare abort there
    # (the Temporal SDK's native threads, with native model libraries loaded)
    os._exit(code)


class _Renderer(Renderer):
    """The local renderer, with the way to answer a waiting run on Temporal."""

    again = decide = ""

    def finish(self, result: RunResult, *, model: Any = None, footer: str = "",
               answer: bool = True) -> Outcome:
        if result.state not in (RunState.WAITING_FOR_USER, RunState.WAITING_FOR_APPROVAL):
            return super().finish(result, model=model, footer=footer, answer=answer)
        self.stop()  # (a waiting run has no tool errors or cut answer to judge)
        outcome = judge(result, truncated=False, model=model, model_spec=self.model_spec)
        if result.state is RunState.WAITING_FOR_USER:
            outcome.notes[0] = f"the agent asked a question; answer it with: {self.again}"
        else:
            calls = ", ".join(f"{p.tool_name} ({p.call_id})" for p in result.pending_approvals)
            outcome.notes[0] = (f"tool calls wait for approval in the workflow: {calls}; "
                                f"decide with: {self.decide} --approve-all (or --deny-all, or "
                                "without either on a terminal)")
        if answer:
            self.print_answer(result, outcome)
        if self.verbosity >= NORMAL:
            self.print_summary(result, outcome, footer)
        else:
            self.err.print(f"reactloop: run ended {outcome.label}: {outcome.notes[0]}",
                           markup=False, highlight=False)
        return outcome


async def _follow(durable: Any, prompt: Any, address: str, task_queue: str,
                  run_id: str | None, verbosity: int, as_json: bool, command: str,
                  policy: Policy) -> int:
    from reactloop.cli._console import consoles, consume

    if prompt is None:
        assert run_id is not None
        handle = await durable.attach(run_id, client=address)
    else:
        handle = await durable.start(prompt, client=address, task_queue=task_queue, id=run_id)
    err, out = consoles(verbosity)
    if prompt is not None and not handle.sent:
        err.print(f"reactloop: attached to {handle.id}, whose turn is running or which has "
                  "ended; the task was not sent", markup=False, highlight=False)
    renderer = _Renderer(err, out, verbosity=verbosity,
                         model_spec=str(getattr(durable.agent.model, "name", "MODEL")))
    renderer.decide = f"{command} --id {shlex.quote(handle.id)}"
    renderer.again = f'{renderer.decide} "ANSWER"'
    questions = _questions(handle, renderer, command)
    try:
        result, interrupted = await consume(
            _ended(handle, questions) if as_json else _events(handle, questions),
            renderer.handle)
    except Unanswered as exc:  # an MCP server's question, and no terminal to ask it on
        renderer.stop()
        err.print(f"reactloop: {exc}", markup=False, highlight=False)
        return EXIT_WAITING
    renderer.stop()
    if not interrupted and result is None:  # its events were no longer kept: the result is
        result = await handle.result()
    if not interrupted and result is not None \
            and result.state is RunState.WAITING_FOR_APPROVAL:
        result, interrupted = await _settle(handle, result, renderer, policy, as_json)
    if interrupted:
        err.print(f"reactloop: stopped following; the run goes on in workflow {handle.id} "
                  f"(follow it again: {command} --id {handle.id})", markup=False,
                  highlight=False)
        return 130
    assert result is not None
    if as_json:
        click.echo(result.to_json(indent=2))
    outcome = renderer.finish(result, model=durable.agent.model, answer=not as_json,
                              footer=f"workflow {handle.id}")
    return outcome.code


async def _settle(handle: Any, result: RunResult, renderer: _Renderer, policy: Policy,
                  as_json: bool) -> tuple[RunResult, bool]:
    """Decide the calls the turn left waiting (see :class:`reactloop.cli._approve.Approver`),
    each decision a turn of the workflow; the last result, and whether Ctrl-C stopped it."""
    from reactloop.cli._approve import Approver
    from reactloop.cli._console import say

    workflow = _Workflow(handle, renderer, as_json)
    approver = Approver.for_terminal(policy, say(renderer.err), terminal=policy == "ask")
    last = await approver.settle(result, result.pending_approvals, workflow)
    return (last if last is not None else result), workflow.stopped


class _Workflow:
    """The workflow's waiting turn, going on with decisions (a :class:`Resumable`)."""

    def __init__(self, handle: Any, renderer: _Renderer, as_json: bool) -> None:
        self.handle, self.renderer, self.as_json = handle, renderer, as_json
        self.stopped = False
        """Ctrl-C stopped following."""

    async def resume(self, last: RunResult | None, decisions: list[Any]) -> RunResult | None:
        from reactloop.cli._console import consume

        await self.handle.decide(decisions)
        events = _ended(self.handle) if self.as_json else _events(self.handle)
        out, interrupted = await consume(events, self.renderer.handle)
        self.renderer.stop()  # before a question, the progress line goes
        if interrupted:
            self.stopped = True
            return None
        return out if out is not None else await self.handle.result()


def _questions(handle: Any, renderer: _Renderer, command: str) -> Questions:
    from reactloop.cli._console import say

    return Questions(handle, terminal=sys.stdin is not None and sys.stdin.isatty(),
                     say=say(renderer.err), before_asking=renderer.stop, command=command)


async def _events(handle: Any, questions: Questions | None = None) -> AsyncIterator[Any]:
    async for _, event in handle.events():
        yield event
        if questions is not None:  # an MCP server's question waits in the workflow
            await questions.seen(event)


async def _ended(handle: Any, questions: Questions | None = None) -> AsyncIterator[Any]:
    """``--json``: the turn's result alone, as its ``run_end`` event (MCP servers' questions
    asked meanwhile, as without ``--json``)."""
    if questions is not None:
        async for _, event in handle.events():
            await questions.seen(event)
    result = await handle.result()
    yield RunEndEvent(result.run_id, result)
