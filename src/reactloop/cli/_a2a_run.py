"""``reactloop run --a2a URL TASK``: TASK sent to any A2A agent, its answer on stdout.

The remote's updates go to stderr as one line each (its state changes; for a reactloop server
also its tool calls), unless ``-q``; ``--json`` prints the reply (state, output, task and
context ids, usage) as JSON. ``--session ID`` is the A2A context id: the same id continues the
conversation with the remote (without it, a new one each time; the reply names it). A
remote's question (``input-required``) is printed and exits 3; answer it with
``--session CONTEXT --task-id TASK "answer"``. Exit codes: 0 completed, 1 failed or
unreachable, 3 waiting for input, 130 cancelled.

This module is imported with the CLI (the options of ``run``); ``reactloop.a2a`` and the SDK
load when ``--a2a`` is given.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import click
from click.core import ParameterSource

__all__ = ["a2a_options", "run_on_a2a_if_asked"]

_APPLY = frozenset({"task", "a2a", "a2a_token", "a2a_task_id", "session_id", "as_json",
                    "verbose", "quiet", "max_execution_time"})
"""The options of ``run`` that apply to a remote A2A agent (the rest configure a local one)."""


def a2a_options(f: Any) -> Any:
    """The options ``run`` takes for A2A."""
    options = [
        click.option("--a2a", metavar="URL", default=None,
                     help="Send TASK to the A2A agent at URL (its card at "
                          "/.well-known/agent-card.json) instead of running one here; "
                          "--session ID is the A2A context (the conversation)."),
        click.option("--a2a-token", envvar="REACTLOOP_A2A_TOKEN", show_envvar=True,
                     metavar="TOKEN", help="With --a2a: sent as 'Authorization: Bearer TOKEN'."),
        click.option("--task-id", "a2a_task_id", metavar="ID",
                     help="With --a2a: the task that asked a question (TASK answers it)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def run_on_a2a_if_asked(ctx: click.Context, task: str | None, opts: dict[str, Any]) -> None:
    """``run --a2a``: send TASK and exit. Otherwise take the A2A options out of ``opts``,
    refusing those that only apply with ``--a2a``."""
    url, token, task_id = opts.pop("a2a"), opts.pop("a2a_token"), opts.pop("a2a_task_id")
    if url is None:
        if task_id:
            raise click.UsageError("--task-id applies to A2A agents: add --a2a URL")
        return
    params = {p.name: p for p in ctx.command.params}
    given = [max(params[name].opts, key=len) for name in ctx.params if name not in _APPLY
             and ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE]
    if given:
        raise click.UsageError(f"--a2a sends the task to a remote agent, which has its own "
                               f"model and tools; drop {', '.join(given)}")
    from reactloop.cli._console import read_prompt
    from reactloop.errors import UserError

    prompt = read_prompt(task)
    assert prompt is not None
    quiet, as_json = bool(opts.get("quiet")), bool(opts.get("as_json"))
    try:
        code = asyncio.run(_send(url, token, prompt, opts.get("session_id"), task_id,
                                 quiet=quiet or as_json, as_json=as_json,
                                 seconds=opts.get("max_execution_time")))
    except UserError as exc:
        raise click.UsageError(str(exc)) from None
    except KeyboardInterrupt:
        click.echo("reactloop: cancelled", err=True)
        code = 130
    sys.exit(code)


async def _send(url: str, token: str | None, prompt: str, context_id: str | None,
                task_id: str | None, *, quiet: bool, as_json: bool,
                seconds: float | None) -> int:
    from reactloop.a2a import A2AAgent
    from reactloop.errors import ToolRetry

    remote = A2AAgent(url, token, timeout=seconds or 300.0)
    try:
        reply = await remote.send(prompt, context_id=context_id, task_id=task_id,
                                  on_update=None if quiet else _Progress().show)
    except ToolRetry as exc:
        click.echo(f"reactloop: {exc.message}", err=True)
        return 1
    if as_json:
        click.echo(json.dumps({"state": reply.state, "output": reply.output,
                               "task_id": reply.task_id, "context_id": reply.context_id,
                               "usage": reply.usage}, ensure_ascii=False, indent=2))
    else:
        out = reply.output
        click.echo(out if isinstance(out, str) else json.dumps(out, ensure_ascii=False))
    if reply.waiting:
        if not as_json:
            click.echo(f"reactloop: the agent waits for an answer: reactloop run --a2a {url} "
                       f"--session {reply.context_id} --task-id {reply.task_id} \"ANSWER\"",
                       err=True)
        return 3
    if reply.state != "TASK_STATE_COMPLETED":
        click.echo(f"reactloop: the task ended {reply.state}", err=True)
        return 1
    if not quiet:
        click.echo(f"reactloop: context {reply.context_id} · task {reply.task_id}", err=True)
    return 0


class _Progress:
    """One stderr line per state change, and per tool call of a reactloop remote."""

    def __init__(self) -> None:
        self.state = ""

    def show(self, data: dict[str, Any]) -> None:
        body: Any = next(iter(data.values()), {})
        if not isinstance(body, dict):
            return
        state = (body.get("status") or {}).get("state", "")
        if state and state != self.state:
            self.state = state
            click.echo(f"  · {state.removeprefix('TASK_STATE_').lower().replace('_', '-')}",
                       err=True)
        event = ((body.get("metadata") or {}).get("reactloop") or {}).get("event") or {}
        if event.get("type") == "tool_call":
            call = event.get("call") or {}
            args = json.dumps(call.get("arguments") or {}, ensure_ascii=False)
            click.echo(f"  → {call.get('name')} {args[:200]}", err=True)
