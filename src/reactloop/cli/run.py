"""``reactloop run``: one task, the answer on stdout, everything else on stderr."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import click

from reactloop.cli._a2a_run import a2a_options, run_on_a2a_if_asked
from reactloop.cli._options import agent_options, run_options
from reactloop.cli._temporal_run import run_on_temporal_if_asked, temporal_options

if TYPE_CHECKING:
    from reactloop.attachments import Attachment, Prompt
    from reactloop.cli._approve import Approver
    from reactloop.cli._build import Setup
    from reactloop.cli._render import Renderer
    from reactloop.result import RunResult

__all__ = ["run_command"]


@click.command("run")
@click.argument("task", required=False)
@agent_options
@run_options
@click.option("--attach", "-a", "attach", multiple=True, metavar="FILE",
              help="Send FILE with the task: a picture (PNG, JPEG, GIF, WebP) or a document "
                   "(PDF, text, Markdown, CSV, HTML, JSON); '-' reads its bytes from stdin. "
                   "Repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print the RunResult as JSON.")
@click.option("--mcp-resource", "mcp_resources", multiple=True, metavar="SERVER:URI",
              help="Attach a resource of an MCP server (of --mcp FILE) to the task as context; "
                   "repeatable.")
@click.option("--output-schema", "output_schema", metavar="FILE.json",
              type=click.Path(exists=True, dir_okay=False),
              help="A JSON Schema the answer must match; the validated JSON is printed.")
@temporal_options
@a2a_options
@click.pass_context
def run_command(ctx: click.Context, /, task: str | None, **opts: Any) -> None:
    """Run TASK to completion and print the answer.

    TASK '-' reads the task from stdin; text piped into stdin is added to the task
    (cat notes.md | reactloop run "summarise this"). Tool calls that need approval are
    asked about on the terminal (or --approve-all / --deny-all); with --session ID or -c
    and no TASK, run decides the calls a stored session has waiting and goes on.
    Exit code: 0 completed, 1 error, 2 max iterations, 3 waiting for the user,
    4 timed out, 5 answer cut off, 6 the last tool step failed, 7 tool calls wait for
    approval, 8 a usage limit was reached (--max-cost, --max-total-tokens, ...), 9 a
    guardrail blocked the run, 130 cancelled.
    """
    run_on_a2a_if_asked(ctx, task, opts)  # --a2a: a remote agent runs it (exits)
    run_on_temporal_if_asked(ctx, task, opts)  # --temporal: the run is a workflow (exits)
    code = _run_locally(ctx, task, opts)
    if code == 130:  # a cancelled local generation may still hold a worker thread: go now
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _run_locally(ctx: click.Context, task: str | None, opts: dict[str, Any]) -> int:
    from reactloop.cli._approve import Approver, load_output_schema, policy_of
    from reactloop.cli._attach import load_attachments
    from reactloop.cli._build import pick_session, prepare, start_tracing
    from reactloop.cli._console import consoles, read_prompt, say, verbosity_of
    from reactloop.cli._render import QUIET, Renderer

    as_json, resources = opts.pop("as_json"), opts.pop("mcp_resources")
    verbosity = verbosity_of(opts.pop("verbose"), opts.pop("quiet"))
    session_id, cont, no_log = opts.pop("session_id"), opts.pop("cont"), opts.pop("no_log")
    # questions need a terminal: piped stdin is the task's text
    terminal = sys.stdin is not None and sys.stdin.isatty()
    policy = policy_of(opts.pop("approve_all"), opts.pop("deny_all"), can_ask=terminal)
    if opts.get("output_schema"):
        opts["output_type"] = load_output_schema(opts["output_schema"])
    attach = opts.pop("attach")
    parts = load_attachments(attach) if attach else ()
    prompt = read_prompt(task, optional=bool(session_id or cont) and not parts,
                         stdin_taken="-" in attach)
    err, out = consoles(QUIET if as_json else verbosity)
    seen: dict[str, Any] = {}
    renderer = Renderer(err, out, verbosity=QUIET if as_json else verbosity, tools_seen=seen)
    stop_tracing = start_tracing(opts.pop("otlp"))
    try:  # a config, key, agent or store that is wrong: one line (the group's error path)
        setup = prepare(ctx, opts, log=False if no_log else (True if session_id or cont
                                                              else None),
                        observer=renderer, seen=seen)
        try:
            renderer.model_spec = setup.model_spec
            sid = pick_session(setup.store, session_id, cont)
            approver = Approver.for_terminal(policy, say(err), terminal=terminal)
            if not opts.get("agent_spec"):  # servers of --mcp FILE: ours to configure
                from reactloop.cli._mcp_client import configure_servers

                configure_servers(setup.agent.mcp_servers, workspace=opts.get("workspace"))
            run = _Run(setup, renderer, as_json, approver)
            run.resources, run.terminal = tuple(resources), terminal
            run.parts = parts
            return asyncio.run(run.main(prompt, sid))
        finally:
            if setup.store is not None:
                setup.store.close()
    finally:
        stop_tracing()  # the last spans go out before the process ends


class _Run:
    """One run of ``reactloop run``: the agent's (or the session's) events rendered, the
    calls it leaves waiting decided, the record logged."""

    def __init__(self, setup: Setup, renderer: Renderer, as_json: bool,
                 approver: Approver) -> None:
        self.setup, self.renderer, self.as_json, self.approver = (setup, renderer, as_json,
                                                                  approver)
        self.session: Any = None
        self.parts: tuple[Attachment, ...] = ()
        """Files sent with the task (``--attach``)."""
        self.resources: tuple[str, ...] = ()
        """``--mcp-resource SERVER:URI``: attached to the prompt as context."""
        self.terminal = False
        """MCP servers' questions can be asked (stdin is a terminal)."""

    async def main(self, prompt: str | None, sid: str | None) -> int:
        from reactloop.cli._build import show_notice
        from reactloop.cli._runlog import log_run, make_record, trace_from_steps

        setup, renderer = self.setup, self.renderer
        show_notice(setup, renderer.err, renderer.verbosity)
        if self.terminal:
            from reactloop.cli._mcp_client import ask_here

            ask_here(self.approver.prompt, self.approver.say, renderer.stop)
        if self.resources:
            prompt = await self._attached(prompt)
        started = time.time()
        try:
            if setup.store is not None:
                self.session = setup.agent.session(sid, setup.store)
            result = await self._turn(prompt)
        finally:
            renderer.stop()
        if isinstance(result, int):  # nothing was run (see _turn)
            return result
        if result is None:
            renderer.err.print("reactloop: cancelled", highlight=False)
            return 130
        if self.as_json:
            click.echo(result.to_json(indent=2))
        outcome = renderer.finish(result, model=setup.agent.model, answer=not self.as_json,
                                  footer=self._footer(result.run_id))
        trace = renderer.trace if not self.as_json else trace_from_steps(
            result, renderer.trace, setup.tools_seen.get)
        record = make_record(result, outcome, prompt=prompt or "(decisions on waiting calls)",
                             model=setup.model_spec, started=started, trace=trace,
                             cost=renderer.cost)
        log_run(setup.store, getattr(self.session, "id", None), result, record)
        return int(outcome.code)

    async def _turn(self, prompt: str | None) -> RunResult[Any] | int | None:
        """Decide what a continued session has waiting, run ``prompt``, decide what its run
        leaves waiting; the final result (None: cancelled), or an exit code when nothing
        ran."""
        from reactloop.result import RunState

        session, say = self.session, self.approver.say
        waiting = list(session.pending_approvals) if session is not None else []
        result = None
        if waiting:  # a stored session's calls are decided before anything else
            result = await self.approver.settle(None, waiting, self)
            if session.pending_approvals:
                say(f"reactloop: {len(session.pending_approvals)} tool call(s) of session "
                    f"{session.id} still wait for approval; the task was not sent")
                return 7
        if prompt is None:
            if waiting:
                return result
            say("reactloop: give a TASK: this session has no tool calls waiting for approval")
            return 2
        target = session if session is not None else self.setup.agent
        sent: Prompt = [prompt, *self.parts] if self.parts else prompt
        # --json runs as before, without streaming (servers and scripts that never stream)
        result = await self._drive(_ended(target, sent) if self.as_json
                                   else target.stream(sent))
        if result is None or result.state is not RunState.WAITING_FOR_APPROVAL:
            return result
        return await self.approver.settle(result, result.pending_approvals, self)

    async def _attached(self, prompt: str | None) -> str:
        from reactloop.cli._mcp_client import attach, read_resource_spec
        from reactloop.errors import UserError

        if prompt is None:
            raise UserError("--mcp-resource needs a TASK to attach the resources to")
        servers = self.setup.agent.mcp_servers
        return attach(prompt, [await read_resource_spec(servers, spec)
                               for spec in self.resources])

    async def resume(self, last: RunResult[Any] | None, decisions: list[Any]
                     ) -> RunResult[Any] | None:
        """Go on with the waiting run (the session's, else ``last``) (see _approve)."""
        if self.session is not None:
            return await self._drive(self.session.resume_stream(decisions))
        return await self._drive(self.setup.agent.resume_stream(last, decisions=decisions))

    async def _drive(self, events: AsyncIterator[Any]) -> RunResult[Any] | None:
        from reactloop.cli._console import consume

        result, _ = await consume(events, self.renderer.handle)
        self.renderer.stop()  # before a question, the progress line goes
        return result

    def _footer(self, run_id: str) -> str:
        parts = [f"run {run_id}"] if run_id else []
        if self.session is not None:
            parts.append(f"session {self.session.id}")
        return " · ".join(parts)


async def _ended(target: Any, prompt: Prompt) -> AsyncIterator[Any]:
    """A non-streaming run (``session.send`` / ``agent.run``) as its one ``run_end`` event."""
    from reactloop.events import RunEndEvent

    send = target.send if hasattr(target, "send") else target.run
    result = await send(prompt)
    yield RunEndEvent(result.run_id, result)
