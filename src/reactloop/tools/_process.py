"""Run a child process in its own process group, with a timeout and capped output.

Used by the workspace tools (``run_command``, ``grep``). Two guarantees:

- no process outlives the call: when the command ends, times out or the calling task is
  cancelled (e.g. by ``Agent(tool_timeout=...)``), the whole process group is killed, so
  children and grandchildren the command started go with it;
- memory stays bounded: of each stream only the first and the last part are kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["CappedBuffer", "ProcessResult", "kill_group", "pump", "run_process"]

_READ_CHUNK = 65_536
_DRAIN_GRACE = 2.0
"""Seconds to wait for the pipes to close after the group was killed. Only a process that left
the group (``setsid``) and still holds a pipe makes this wait run out."""


@dataclass(frozen=True, slots=True)
class ProcessResult:
    """What a finished (or stopped) process produced."""

    exit_code: int | None
    """The exit status; negative for a signal; None when it was killed on timeout."""
    stdout: str
    stderr: str
    timed_out: bool = False


class CappedBuffer:
    """Keeps the first and the last ``limit // 2`` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 2)
        self._head_max = self.limit - self.limit // 2
        self._tail_max = self.limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_max - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            excess = len(self.tail) - self._tail_max
            if excess > 0:
                del self.tail[:excess]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def text(self) -> str:
        """The kept text; when bytes were dropped, a marker in the middle says how many."""
        if not self.truncated:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        head, tail = bytes(self.head), bytes(self.tail)
        # we cut at line ends when one is near, so the model sees whole lines
        cut = head.rfind(b"\n")
        if cut >= len(head) // 2:
            head = head[: cut + 1]
        cut = tail.find(b"\n")
        if 0 <= cut < len(tail) // 2:
            tail = tail[cut + 1 :]
        omitted = self.total - len(head) - len(tail)
        marker = f"[... {omitted} bytes omitted; output is capped at {self.limit} bytes ...]"
        sep = "" if head.endswith(b"\n") else "\n"
        return (head.decode("utf-8", "replace") + sep + marker + "\n"
                + tail.decode("utf-8", "replace"))


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the process group led by ``proc`` (the process alone where groups don't exist)."""
    if hasattr(os, "killpg"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    elif proc.returncode is None:  # pragma: no cover - Windows
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


async def pump(stream: asyncio.StreamReader | None, buf: CappedBuffer) -> None:
    """Read ``stream`` to its end into ``buf``."""
    if stream is None:
        return
    while chunk := await stream.read(_READ_CHUNK):
        buf.add(chunk)


async def run_process(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    timeout: float,  # noqa: ASYNC109 - we must tell a timeout (kill, report) from a cancel
    output_limit: int,
) -> ProcessResult:
    """Run ``argv`` (no shell) in ``cwd`` with ``env``; stdin is empty.

    Raises ``OSError`` (e.g. ``FileNotFoundError``) when the program cannot be started.
    """
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # a new process group, so a kill reaches every descendant
    )
    out, err = CappedBuffer(output_limit), CappedBuffer(output_limit)
    readers = [asyncio.create_task(pump(proc.stdout, out)),
               asyncio.create_task(pump(proc.stderr, err))]
    timed_out = False
    try:
        try:
            async with asyncio.timeout(timeout):
                await proc.wait()
        except TimeoutError:
            # a background child holding the pipes can delay wait(); the command itself
            # finished if it has a return code
            timed_out = proc.returncode is None
    finally:
        # also on cancellation: the command, and whatever it left running, stops here
        kill_group(proc)
        await _finish(proc, readers)
    return ProcessResult(None if timed_out else proc.returncode, out.text(), err.text(),
                         timed_out)


async def _finish(proc: asyncio.subprocess.Process, readers: list[asyncio.Task[None]]) -> None:
    _, pending = await asyncio.wait(readers, timeout=_DRAIN_GRACE)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    if proc.returncode is None:
        await proc.wait()
