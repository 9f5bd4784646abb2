"""``reactloop run --temporal``: the run as a Temporal workflow, shown like a local run.

``reactloop run --temporal [HOST:PORT] --agent MODULE:ATTR --task-queue Q [--id ID] TASK``
starts the run on the agent's workers (``reactloop worker``), or attaches to the conversation
``ID`` (giving it TASK when it waits for an answer; without TASK, following its current
turn); renders its events live with the local
run's renderer (the answer on stdout, the trace and summary on stderr), and exits with the
local run's codes. Ctrl-C stops following; the run goes on in its workflow. Tool calls that
wait for approval are decided as on a local run (asked on a terminal, ``--approve-all`` /
``--deny-all``); undecided, they wait in the workflow (exit 7) for ``--id ID --approve-all``
(or a terminal) later, from any machine. ``--attach FILE`` sends files with the task: their
bytes go to the attachment store (``--store PATH|URL``, the one the workers use; default: the
default SQLite file), the workflow carries references.

This module is imported with the CLI (the options of ``run``): the rest, which needs rich and
the Temporal SDK, is in :mod:`reactloop.cli._temporal_follow`.
"""

from __future__ import annotations

import shlex
import sys
from typing import Any

import click
from click.core import ParameterSource

__all__ = ["run_on_temporal_if_asked", "temporal_options"]

_APPLY = frozenset({"task", "agent_spec", "as_json", "verbose", "quiet", "temporal",
                    "task_queue", "run_id", "approve_all", "deny_all", "attach", "store_path"})
"""The options of ``run`` that apply to a run on Temporal (the agent is the workers')."""


def temporal_options(f: Any) -> Any:
    """The options ``run`` takes for Temporal."""
    options = [
        click.option("--temporal", is_flag=False, flag_value="", default=None,
                     metavar="[HOST:PORT]",
                     help="Run as a Temporal workflow on the agent's workers (reactloop "
                          "worker; address: $TEMPORAL_ADDRESS, else localhost:7233); needs "
                          "--agent and --task-queue."),
        click.option("--task-queue", metavar="QUEUE",
                     help="With --temporal: the task queue the agent's workers poll."),
        click.option("--id", "run_id", metavar="ID",
                     help="With --temporal: the workflow id; an existing conversation is "
                          "attached to (and given TASK if it waits for an answer)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def run_on_temporal_if_asked(ctx: click.Context, task: str | None, opts: dict[str, Any]) -> None:
    """``run --temporal``: run on Temporal and exit. Otherwise take the Temporal options out
    of ``opts``, refusing those that only apply with ``--temporal``."""
    temporal, queue, run_id = opts.pop("temporal"), opts.pop("task_queue"), opts.pop("run_id")
    if temporal is None:
        if queue or run_id:
            raise click.UsageError("--task-queue and --id apply to runs on Temporal: add "
                                   "--temporal [HOST:PORT]")
        return
    if any(c.isspace() for c in temporal):
        raise click.BadParameter("takes HOST:PORT (or nothing: put it before another option)",
                                 param_hint="--temporal")
    params = {p.name: p for p in ctx.command.params}
    given = [max(params[name].opts, key=len) for name in ctx.params if name not in _APPLY
             and ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE]
    if given:
        raise click.UsageError(f"--temporal runs the agent its workers host (--agent) and keeps "
                               f"the conversation in its workflow (--id); drop "
                               f"{', '.join(given)}")
    if not opts.get("agent_spec") or not queue:
        raise click.UsageError("--temporal needs --agent MODULE:ATTR and --task-queue QUEUE "
                               "(the workers')")
    from reactloop.cli._approve import policy_of
    from reactloop.cli._attach import load_attachments
    from reactloop.cli._console import read_prompt, verbosity_of
    from reactloop.cli._render import NORMAL
    from reactloop.cli._temporal_follow import run_on_temporal
    from reactloop.cli.worker import address_of

    verbosity = verbosity_of(bool(opts.get("verbose")), bool(opts.get("quiet")))
    if verbosity > NORMAL:
        raise click.UsageError("-v shows model requests, which are made on the workers under "
                               "--temporal; drop -v")
    # tool calls waiting for approval: asked about on a terminal, as a local run does
    policy = policy_of(bool(opts.get("approve_all")), bool(opts.get("deny_all")),
                       can_ask=sys.stdin is not None and sys.stdin.isatty())
    # --attach: the files' bytes go to the attachment store (--store), the workflow gets
    # references (see reactloop.temporal._blobs)
    attach = tuple(opts.get("attach") or ())
    parts = load_attachments(attach) if attach else ()
    # with --id and no TASK: follow the conversation's current turn
    prompt: Any = None if task is None and run_id and not parts else read_prompt(
        task, optional=bool(parts), stdin_taken="-" in attach)
    if parts:
        prompt = [*([prompt] if prompt else []), *parts]
    run_on_temporal(prompt, opts["agent_spec"], address=address_of(temporal),
                    task_queue=queue, run_id=run_id, verbosity=verbosity,
                    as_json=bool(opts.get("as_json")), command=_command(temporal, opts, queue),
                    policy=policy, store=opts.get("store_path"))


def _command(temporal: str, opts: dict[str, Any], queue: str) -> str:
    """The command that continues a conversation (without its ``--id`` and answer)."""
    where = f" {temporal}" if temporal else ""
    return (f"reactloop run --temporal{where} --agent {shlex.quote(opts['agent_spec'])} "
            f"--task-queue {shlex.quote(queue)}")
