"""``reactloop worker``: host an agent's workflow and activities on Temporal.

``reactloop worker --agent MODULE:ATTR --task-queue Q [--address HOST:PORT] [--namespace NS]
[--store PATH|URL]`` runs a worker until SIGTERM or SIGINT, which stop it taking work and let
the activities in flight finish (``--drain-timeout``); ``--store`` is where the bytes of the
runs' attachments are. ``run --temporal`` is in :mod:`reactloop.cli._temporal_run`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from datetime import timedelta
from typing import Any

import click

__all__ = ["DEFAULT_ADDRESS", "address_of", "load_durable", "worker_command"]

DEFAULT_ADDRESS = "localhost:7233"


def address_of(value: str | None) -> str:
    """The Temporal address: ``value``, else ``TEMPORAL_ADDRESS``, else localhost:7233."""
    return value or os.environ.get("TEMPORAL_ADDRESS") or DEFAULT_ADDRESS


def _fail(message: str, code: int = 1) -> None:
    click.echo(f"reactloop: {message}", err=True)
    sys.exit(code)


def load_durable(spec: str) -> Any:
    """The object ``--agent`` names, as a TemporalAgent (an Agent, or a function returning
    one, is wrapped). Stored keys (``reactloop keys``) reach the agent's models as in a local
    run, and are never shown."""
    from reactloop.cli._config_files import apply_keys
    from reactloop.cli._load import load_agent, load_object
    from reactloop.cli._observe import register_secrets
    from reactloop.errors import UserError

    try:
        from reactloop.temporal import TemporalAgent
    except UserError as exc:
        _fail(str(exc))
    apply_keys()
    register_secrets()
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
@click.option("--store", metavar="PATH|URL",
              help="Where the bytes of attachments are (the one the runs' starters use): a "
                   "SQLite file (default: the default session store) or a postgresql:// URL.")
@click.option("--drain-timeout", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Seconds the activities in flight may take to finish after SIGTERM.")
@click.option("--max-concurrent-activities", type=click.IntRange(min=1),
              help="Activities this worker runs at once (default: Temporal's).")
@click.option("--sticky-timeout", type=click.FloatRange(min=0, min_open=True),
              help="Seconds a workflow's next task waits for this worker (which caches the "
                   "workflow) before any worker takes it, e.g. after a crash (default 10).")
def worker_command(agent_spec: str, address: str | None, task_queue: str, namespace: str,
                   store: str | None, drain_timeout: float,
                   max_concurrent_activities: int | None, sticky_timeout: float | None) -> None:
    """Host an agent's workflow and activities on Temporal until SIGTERM."""
    from temporalio.service import RPCError

    from reactloop.errors import ReactloopError

    try:
        durable = load_durable(agent_spec)
        if store:
            durable.store = store
        options: dict[str, Any] = {"graceful_shutdown_timeout": timedelta(seconds=drain_timeout)}
        if max_concurrent_activities:
            options["max_concurrent_activities"] = max_concurrent_activities
        if sticky_timeout:
            options["sticky_queue_schedule_to_start_timeout"] = timedelta(seconds=sticky_timeout)
        asyncio.run(_serve(durable, address_of(address), task_queue, namespace, options))
    except (ReactloopError, RPCError) as exc:
        _fail(str(exc))
    except RuntimeError as exc:  # the SDK's: a workflow it cannot host, a lost server
        _fail(f"the worker stopped: {exc}")
    _exit_now()


def _exit_now() -> None:
    """End the process at once after a clean stop. The Temporal SDK's Rust threads can call
    into Python while the interpreter finalizes and abort it ("PyGILState_Release: thread
    state must be current", temporalio/sdk-python#300): a drained worker has nothing left to
    finalize, so it skips that step (the output is flushed first)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


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
