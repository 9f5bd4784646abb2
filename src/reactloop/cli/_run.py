"""``reactloop run``: one task, the answer on stdout, everything else on stderr."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import click

from reactloop.approvals import Decision
from reactloop.cli._approve import Policy
from reactloop.cli._render import NORMAL, QUIET, VERBOSE, Renderer
from reactloop.cli._setup import (
    Setup,
    consume,
    fail,
    pick_session,
    prepare,
    show_notice,
    start_tracing,
)
from reactloop.events import Event, RunEndEvent
from reactloop.result import RunResult, RunState

__all__ = ["read_prompt", "run_command"]


def read_prompt(task: str | None, *, optional: bool = False) -> str | None:
    """The prompt: TASK, with piped stdin appended; ``-`` reads the whole task from stdin.
    ``optional``: None (instead of an error) when there is no task at all."""
    stdin = sys.stdin
    piped = stdin is not None and not stdin.closed and not stdin.isatty()
    if task == "-":
        text = stdin.read() if stdin is not None and not stdin.closed else ""
        if not text.strip():
            raise click.UsageError("'reactloop run -' reads the task from stdin, which was empty")
        return text.strip()
    extra = stdin.read() if piped else ""
    if task is None or not task.strip():
        if extra.strip():
            return extra.strip()
        if optional and task is None:
            return None
        raise click.UsageError("give a TASK, or '-' to read it from stdin (or pipe text in)")
    return f"{task}\n\n{extra.strip()}" if extra.strip() else task


def verbosity_of(verbose: bool, quiet: bool) -> int:
    if verbose and quiet:
        raise click.UsageError("-v/--verbose and -q/--quiet exclude each other")
    return VERBOSE if verbose else QUIET if quiet else NORMAL


def run_command(ctx: click.Context, task: str | None, opts: dict[str, Any]) -> None:
    from reactloop.cli._approve import load_output_schema, policy_of
    from reactloop.cli._outcome import explain_error
    from reactloop.errors import ReactloopError

    as_json = opts.pop("as_json")
    verbosity = verbosity_of(opts.pop("verbose"), opts.pop("quiet"))
    session_id, cont, no_log = opts.pop("session_id"), opts.pop("cont"), opts.pop("no_log")
    # questions need a terminal: piped stdin is the task's text
    policy = policy_of(opts.pop("approve_all"), opts.pop("deny_all"),
                       can_ask=sys.stdin is not None and sys.stdin.isatty())
    if opts.get("output_schema"):
        opts["output_type"] = load_output_schema(opts["output_schema"])
    prompt = read_prompt(task, optional=bool(session_id or cont))
    try:
        stop_tracing = start_tracing(opts.pop("otlp"))
        setup = prepare(ctx, opts, log=False if no_log else (True if session_id or cont
                                                              else None))
        sid = pick_session(setup.store, session_id, cont)
    except ReactloopError as exc:
        fail(explain_error(exc))
    try:
        code = asyncio.run(_run(setup, prompt, sid, QUIET if as_json else verbosity, as_json,
                                policy))
    finally:
        stop_tracing()  # the last spans go out before the process ends
    if code == 130:  # a cancelled local generation may still hold a worker thread: go now
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def consoles(verbosity: int) -> tuple[Any, Any]:
    from rich.console import Console

    err = Console(stderr=True, highlight=False, soft_wrap=True)  # lines are never cut
    out = Console(highlight=False) if verbosity >= NORMAL and sys.stdout.isatty() else None
    return err, out


def observe(setup: Setup, renderer: Renderer) -> None:
    """Watch the agent's model calls and tool sources through its runtime (progress,
    tokens/s, ``-v``, MCP filters and writing tools)."""
    from reactloop.cli._observe import ObservedRuntime

    runtime = setup.agent.runtime
    if isinstance(runtime, ObservedRuntime):
        runtime = runtime.inner
    setup.agent.runtime = ObservedRuntime(runtime, renderer, setup.tools_seen,
                                          include=setup.include, exclude=setup.exclude)


async def _run(setup: Setup, prompt: str | None, sid: str | None, verbosity: int,
               as_json: bool, policy: Policy) -> int:
    from reactloop.cli._outcome import explain_error
    from reactloop.cli._runlog import log_run, make_record, trace_from_steps
    from reactloop.errors import ReactloopError

    err, out = consoles(verbosity)
    renderer = Renderer(err, out, verbosity=verbosity, tools_seen=setup.tools_seen,
                        model_spec=setup.model_spec)
    observe(setup, renderer)
    show_notice(setup, err, verbosity)
    started = time.time()
    session = None
    try:
        if setup.store is not None:
            session = setup.agent.session(sid, setup.store)
        try:
            result = await _run_turn(setup, session, prompt, renderer, as_json, policy)
        except ReactloopError as exc:  # a busy session, a failing store: one line
            renderer.stop()
            err.print(f"reactloop: {explain_error(exc)}", markup=False, highlight=False)
            return 1
        renderer.stop()
        if isinstance(result, int):  # nothing was run (see _run_turn)
            return result
        if result is None:
            err.print("reactloop: cancelled", highlight=False)
            return 130
        if as_json:
            click.echo(result.to_json(indent=2))
        outcome = renderer.finish(result, model=setup.agent.model, answer=not as_json,
                                  footer=_footer(result.run_id, session))
        trace = renderer.trace if not as_json else trace_from_steps(
            result, renderer.trace, setup.tools_seen.get)
        record = make_record(result, outcome, prompt=prompt or "(decisions on waiting calls)",
                             model=setup.model_spec, started=started, trace=trace,
                             cost=renderer.cost)
        log_run(setup.store, getattr(session, "id", None), result, record)
        return outcome.code
    finally:
        renderer.stop()
        if setup.store is not None:
            setup.store.close()


async def _run_turn(setup: Setup, session: Any, prompt: str | None, renderer: Renderer,
                    as_json: bool, policy: Policy) -> RunResult[Any] | int | None:
    """Decide what a continued session has waiting, run ``prompt``, decide what its run
    leaves waiting; the final result (None: cancelled), or an exit code when nothing ran."""
    from reactloop.cli._approve import line_prompt, settle, terminal_prompt

    err = renderer.err

    def say(text: str) -> None:
        err.print(text, markup=False, highlight=False)

    async def drive(events: AsyncIterator[Event]) -> RunResult[Any] | None:
        result, _ = await consume(events, renderer.handle)
        renderer.stop()  # before a question, the progress line goes
        return result

    ask = terminal_prompt() if policy == "ask" else line_prompt(say)
    waiting = list(session.pending_approvals) if session is not None else []
    result: RunResult[Any] | None = None
    if waiting:  # a stored session's calls are decided before anything else
        result = await settle(None, waiting, lambda _, d: session.resume_stream(d), drive,
                              policy, ask, say)
        if session.pending_approvals:
            say(f"reactloop: {len(session.pending_approvals)} tool call(s) of session "
                f"{session.id} still wait for approval; the task was not sent")
            return 7
    if prompt is None:
        if waiting:
            return result
        say("reactloop: give a TASK: this session has no tool calls waiting for approval")
        return 2
    target = session if session is not None else setup.agent
    # --json runs as before, without streaming (servers and scripts that never stream)
    result = await drive(_ended(target, prompt) if as_json else target.stream(prompt))
    if result is None or result.state is not RunState.WAITING_FOR_APPROVAL:
        return result

    def resume(last: RunResult[Any] | None, decisions: list[Decision]) -> AsyncIterator[Event]:
        if session is not None:
            return session.resume_stream(decisions)  # type: ignore[no-any-return]
        return setup.agent.resume_stream(last, decisions=decisions)  # type: ignore[no-any-return]

    return await settle(result, result.pending_approvals, resume, drive, policy, ask, say)


async def _ended(target: Any, prompt: str) -> AsyncIterator[Event]:
    """A non-streaming run (``session.send`` / ``agent.run``) as its one ``run_end`` event."""
    send = target.send if hasattr(target, "send") else target.run
    result = await send(prompt)
    yield RunEndEvent(result.run_id, result)


def _footer(run_id: str, session: Any) -> str:
    parts = [f"run {run_id}"] if run_id else []
    if session is not None:
        parts.append(f"session {session.id}")
    return " · ".join(parts)
