"""The terminal side of every command: the consoles, ``-v``/``-q``, reading the task, feeding a
run's events with Ctrl-C cancelling that run only, and the one-line error exit."""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any, NoReturn

import click

from reactloop.events import Event, RunEndEvent
from reactloop.result import RunResult

__all__ = ["consoles", "consume", "fail", "read_prompt", "say", "verbosity_of"]


def fail(message: str, code: int = 1) -> NoReturn:
    """``reactloop: MESSAGE`` on stderr, then exit ``code``: how every command fails."""
    click.echo(f"reactloop: {message}", err=True)
    sys.exit(code)


def say(console: Any) -> Callable[[str], None]:
    """Plain lines on ``console`` (no markup, also with ``-q``): questions, one-line errors."""

    def line(text: str) -> None:
        console.print(text, markup=False, highlight=False)

    return line


def read_prompt(task: str | None, *, optional: bool = False,
                stdin_taken: bool = False) -> str | None:
    """The prompt: TASK, with piped stdin appended; ``-`` reads the whole task from stdin.
    ``optional``: None (instead of an error) when there is no task at all. ``stdin_taken``:
    stdin held a file's bytes (``--attach -``), so TASK is the whole prompt."""
    stdin = sys.stdin
    if stdin_taken:
        if task is None or task == "-" or not task.strip():
            raise click.UsageError("--attach - reads a file from stdin: give the TASK as an "
                                   "argument")
        return task
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
    """``QUIET``, ``NORMAL`` or ``VERBOSE`` (see :mod:`reactloop.cli._render`)."""
    from reactloop.cli._render import NORMAL, QUIET, VERBOSE

    if verbose and quiet:
        raise click.UsageError("-v/--verbose and -q/--quiet exclude each other")
    return VERBOSE if verbose else QUIET if quiet else NORMAL


def consoles(verbosity: int) -> tuple[Any, Any]:
    """The console of the trace (stderr), and of the answer (stdout) when it is a terminal."""
    from rich.console import Console

    from reactloop.cli._render import NORMAL

    err = Console(stderr=True, highlight=False, soft_wrap=True)  # lines are never cut
    out = Console(highlight=False) if verbosity >= NORMAL and sys.stdout.isatty() else None
    return err, out


async def consume(events: AsyncIterator[Event], handle: Callable[[Event], None]
                  ) -> tuple[RunResult | None, bool]:
    """Feed ``events`` to ``handle`` in a task that Ctrl-C cancels (this run only).

    Returns the run's result (None if it never arrived) and whether Ctrl-C cancelled it.
    """
    import asyncio

    got: list[RunResult] = []

    async def feed() -> None:
        async for event in events:
            if isinstance(event, RunEndEvent) and event.parent_run_id is None:
                got.append(event.result)
            else:
                handle(event)

    loop = asyncio.get_running_loop()
    task = asyncio.create_task(feed())
    interrupted: list[bool] = []

    def on_sigint() -> None:
        interrupted.append(True)
        task.cancel()

    unsupported = (NotImplementedError, RuntimeError, ValueError)  # Windows, not main thread
    with contextlib.suppress(*unsupported):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        await asyncio.wait({task})  # our own cancellation still propagates from here
    finally:
        with contextlib.suppress(*unsupported):
            loop.remove_signal_handler(signal.SIGINT)
    if not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]
    return (got[0] if got else None), bool(interrupted)
