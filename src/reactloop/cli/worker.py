"""``reactloop worker`` (host an agent on Temporal) and the ``--temporal`` path of ``run``.

``reactloop worker --agent MODULE:ATTR --task-queue Q [--address HOST:PORT] [--namespace NS]``
runs a worker until SIGTERM or SIGINT, which stop it polling and let the activities in flight
finish (``--drain-timeout``). ``reactloop run --temporal [HOST:PORT] --agent MODULE:ATTR
--task-queue Q [--id ID] TASK`` starts the run as a workflow (or attaches to the conversation
``ID``), renders its events live like a local run and exits with the same codes.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from datetime import timedelta
from typing import Any, NoReturn

import click

__all__ = ["DEFAULT_ADDRESS", "address_of", "run_on_temporal", "run_on_temporal_if_asked",
           "temporal_options", "worker_command"]

DEFAULT_ADDRESS = "localhost:7233"


def address_of(value: str | None) -> str:
    """The Temporal address: ``value``, else ``TEMPORAL_ADDRESS``, else localhost:7233."""
    return value or os.environ.get("TEMPORAL_ADDRESS") or DEFAULT_ADDRESS


def temporal_options(f: Any) -> Any:
    """The options ``run`` takes for Temporal."""
    options = [
        click.option("--temporal", is_flag=False, flag_value="", default=None,
                     metavar="[HOST:PORT]",
                     help="Run as a Temporal workflow on the agent's workers (default "
                          "address: $TEMPORAL_ADDRESS, else localhost:7233); needs --agent "
                          "and --task-queue."),
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
    """``run --temporal``: run on Temporal and exit; otherwise take the Temporal options out of
    ``opts`` (refusing those that only apply with ``--temporal``)."""
    temporal, queue, run_id = opts.pop("temporal"), opts.pop("task_queue"), opts.pop("run_id")
    if temporal is None:
        if queue or run_id:
            raise click.UsageError("--task-queue and --id apply to runs on Temporal: add "
                                   "--temporal [HOST:PORT]")
        return
    if any(c.isspace() for c in temporal):
        raise click.BadParameter("takes HOST:PORT (or nothing: put it before another option)",
                                 param_hint="--temporal")
    run_on_temporal(task or "", agent_spec=opts.get("agent_spec"), address=address_of(temporal),
                    task_queue=queue, run_id=run_id, as_json=bool(opts.get("as_json")))


def _fail(message: str, code: int = 1) -> None:
    click.echo(f"reactloop: {message}", err=True)
    sys.exit(code)


def _temporal_agent(spec: str) -> Any:
    """The object ``--agent`` names, as a TemporalAgent (an Agent is wrapped)."""
    from reactloop.cli._load import load_agent
    from reactloop.errors import UserError

    try:
        from reactloop.temporal import TemporalAgent
    except UserError as exc:
        _fail(str(exc))
    from reactloop.cli._load import load_object

    obj = load_object(spec, "--agent")
    if isinstance(obj, TemporalAgent):
        return obj
    return TemporalAgent(load_agent(spec))


@click.command("worker")
@click.option("--agent", "agent_spec", required=True, metavar="MODULE:ATTR",
              help="The Agent (or TemporalAgent) to host.")
@click.option("--address", metavar="HOST:PORT",
              help="The Temporal server (default: $TEMPORAL_ADDRESS, else localhost:7233).")
@click.option("--task-queue", required=True, metavar="QUEUE", help="The task queue to poll.")
@click.option("--namespace", default="default", show_default=True)
@click.option("--drain-timeout", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Seconds the activities in flight may take to finish after SIGTERM.")
@click.option("--max-concurrent-activities", type=click.IntRange(min=1),
              help="Activities this worker runs at once (default: Temporal's).")
@click.option("--sticky-timeout", type=click.FloatRange(min=0, min_open=True),
              help="Seconds a workflow's next task waits for this worker (which caches the "
                   "workflow) before any worker takes it, e.g. after a crash (default 10).")
def worker_command(agent_spec: str, address: str | None, task_queue: str, namespace: str,
                   drain_timeout: float, max_concurrent_activities: int | None,
                   sticky_timeout: float | None) -> None:
    """Host an agent's workflow and activities on Temporal until SIGTERM."""
    from reactloop.errors import ReactloopError

    try:
        durable = _temporal_agent(agent_spec)
        options: dict[str, Any] = {"graceful_shutdown_timeout": timedelta(seconds=drain_timeout)}
        if max_concurrent_activities:
            options["max_concurrent_activities"] = max_concurrent_activities
        if sticky_timeout:
            options["sticky_queue_schedule_to_start_timeout"] = timedelta(seconds=sticky_timeout)
        asyncio.run(_serve(durable, address_of(address), task_queue, namespace, options))
    except ReactloopError as exc:
        _fail(str(exc))


async def _serve(durable: Any, address: str, task_queue: str, namespace: str,
                 options: dict[str, Any]) -> None:
    from reactloop.temporal._handle import connect

    client = await connect(address, namespace)
    worker = durable.worker(client, task_queue, **options)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    click.echo(f"reactloop worker: {durable.names.workflow} on task queue {task_queue!r} at "
               f"{address} (pid {os.getpid()}); SIGTERM stops it", err=True)
    running = asyncio.create_task(worker.run())
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({running, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if not running.done():  # stop polling; activities in flight finish (or drain times out)
        drain = options["graceful_shutdown_timeout"].total_seconds()
        click.echo(f"reactloop worker: stopping: no new work; activities in flight may take "
                   f"{drain:g} s more to finish", err=True)
        await worker.shutdown()
    try:
        await running
    finally:
        stopped.cancel()
        await durable.aclose()
    click.echo("reactloop worker: stopped", err=True)


def run_on_temporal(task: str, *, agent_spec: str | None, address: str, task_queue: str | None,
                    run_id: str | None, as_json: bool) -> NoReturn:
    """``reactloop run --temporal``: render (or print as JSON) the run's result, then exit
    with the same code as a local run."""
    from reactloop.errors import ReactloopError

    if not agent_spec or not task_queue:
        raise click.UsageError("--temporal needs --agent MODULE:ATTR and --task-queue QUEUE "
                               "(the worker's)")
    durable = _temporal_agent(agent_spec)
    try:
        result = asyncio.run(_follow(durable, task, address, task_queue, run_id, as_json))
    except ReactloopError as exc:
        _fail(str(exc))
    from reactloop.cli._outcome import EXIT_CODES

    code = EXIT_CODES.get(result.state.value, 1)
    if code:
        reason = f"{result.error}" if result.error else result.output
        click.echo(f"reactloop: run ended {result.state.value}: "
                   f"{' '.join(reason.split())[:300]}", err=True)
    sys.stdout.flush()
    sys.stderr.flush()
    # nothing is left to clean up; skipping interpreter shutdown avoids a rare abort there
    # (the Temporal SDK's native threads, with native model libraries loaded)
    os._exit(code)


async def _follow(durable: Any, task: str, address: str, task_queue: str, run_id: str | None,
                  as_json: bool) -> Any:
    from reactloop.events import RunEndEvent

    handle = await durable.start(task, client=address, task_queue=task_queue, id=run_id)
    if not handle.sent:
        click.echo(f"reactloop: attached to {handle.id} (a turn is running or it has ended); "
                   "the task was not sent", err=True)
    if as_json:
        result = await handle.result()
        click.echo(result.to_json(indent=2))
        return result
    from rich.console import Console

    from reactloop.cli._render import Renderer

    renderer = Renderer(Console(stderr=False, highlight=False))
    result = None
    try:
        async for _, event in handle.events():
            if isinstance(event, RunEndEvent):
                result = event.result
            else:
                renderer.handle(event)
    finally:
        renderer.stop()
    if result is None:  # its events were no longer kept: the result still is
        result = await handle.result()
    renderer.finish(result)
    click.echo(f"[conversation {handle.id}]", err=True)
    return result
