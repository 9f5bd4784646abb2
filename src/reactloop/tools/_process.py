"""Run a child process in its own process group, with a timeout and capped output.

Used by the workspace tools (``run_command``, ``grep``). Two guarantees:

- no process outlives the call: when the command ends, times out or the calling task is
  cancelled (e.g. by ``Agent(tool_timeout=...)``), every process it started is killed. On
  Linux the command runs under a small reaper (``_reaper.py``, a child subreaper) that finds
  and kills its descendants even when they left the process group (``setsid``, a daemon's
  double fork); elsewhere the process group is killed, which misses those;
- a command that exits returns at once, even while a background child still holds its
  stdout (that child is killed with the rest);
- memory stays bounded: of each stream only the first and the last part are kept.

Process trees are not fenced in by other means: cgroups would need privileges or a systemd
delegation that a library cannot count on; the subreaper needs neither.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CappedBuffer", "ProcessResult", "kill_group", "pump", "run_process"]

_READ_CHUNK = 65_536
_DRAIN_GRACE = 2.0
"""Seconds to wait for the pipes to close after the command and its descendants were killed.
Only a process that escaped both (see below) and still holds a pipe makes this wait run out."""
_REAPER_GRACE = 5.0
"""Seconds the reaper gets to kill the command's descendants before its group is SIGKILLed."""
_REAPER = Path(__file__).with_name("_reaper.py")


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
    reaper = _reaper_command()
    out, err, status = CappedBuffer(output_limit), CappedBuffer(output_limit), CappedBuffer(512)
    pipes = _Pipes(3 if reaper else 2)
    try:
        proc = await _spawn([*reaper, str(pipes.write_ends[-1]), *argv] if reaper else argv,
                            cwd, env, pipes)
    except BaseException:
        pipes.close_all()
        raise
    timed_out = False
    readers: list[asyncio.Task[None]] = []
    try:
        streams = await pipes.open_readers()
        readers = [asyncio.create_task(pump(reader, buf)) for reader, buf
                   in zip(streams, (out, err, status)[: len(streams)], strict=True)]
        try:
            async with asyncio.timeout(timeout):
                await proc.wait()
        except TimeoutError:
            timed_out = proc.returncode is None
    finally:
        # also on cancellation: the command, and whatever it left running, stops here
        await _stop(proc, reaper=bool(reaper))
        await _drain(readers)
        await pipes.close_readers()
    code = None if timed_out else _exit_code(proc, status.text(), argv[0], reaper=bool(reaper))
    return ProcessResult(code, out.text(), err.text(), timed_out)


def _reaper_command() -> list[str]:
    """How to start the reaper (``_reaper.py``), or [] where it cannot work (not Linux)."""
    if not sys.platform.startswith("linux") or not sys.executable or not _REAPER.is_file():
        return []
    return [sys.executable, "-I", "-S", str(_REAPER)]


async def _spawn(argv: Sequence[str], cwd: str | os.PathLike[str], env: Mapping[str, str],
                 pipes: _Pipes) -> asyncio.subprocess.Process:
    try:
        return await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            # our own pipes, not asyncio's: its Process.wait() also waits for the pipes to
            # close, which a detached child holding them would delay until it ends
            stdout=pipes.write_ends[0],
            stderr=pipes.write_ends[1],
            pass_fds=pipes.write_ends[2:],
            start_new_session=True,  # a new process group, so a kill reaches every descendant
        )
    finally:
        pipes.close_write_ends()  # the child holds them now; EOF comes when it (and its own) end


async def _stop(proc: asyncio.subprocess.Process, *, reaper: bool) -> None:
    """End ``proc`` and everything it started, and wait for it."""
    if reaper and proc.returncode is None:
        # the reaper kills every descendant, including those that left the process group;
        # SIGKILL would orphan them, so it gets SIGTERM and a moment to sweep
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        waiting = asyncio.ensure_future(proc.wait())
        await asyncio.wait({waiting}, timeout=_REAPER_GRACE)
        if not waiting.done():
            waiting.cancel()
    kill_group(proc)
    if proc.returncode is None:
        await proc.wait()


async def _drain(readers: list[asyncio.Task[None]]) -> None:
    if not readers:
        return
    _, pending = await asyncio.wait(readers, timeout=_DRAIN_GRACE)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


def _exit_code(proc: asyncio.subprocess.Process, status: str, program: str, *,
               reaper: bool) -> int | None:
    """The program's exit status; raises ``OSError`` when the reaper could not start it."""
    if not reaper:
        return proc.returncode
    kind, _, rest = status.strip().partition(" ")
    if kind == "E":
        number, _, message = rest.partition(" ")
        raise OSError(int(number), message, program)
    if kind == "X":
        return int(rest)
    return proc.returncode  # the reaper itself was killed


class _Pipes:
    """``count`` OS pipes: write ends for the child, read ends as asyncio streams for us.

    We own them so that we can close them ourselves: a subprocess transport left to the
    garbage collector is finalised after ``asyncio.run`` closed the loop and prints
    "Event loop is closed" on stderr."""

    def __init__(self, count: int) -> None:
        pairs = [os.pipe() for _ in range(count)]
        self.read_ends = [r for r, _ in pairs]
        self.write_ends = [w for _, w in pairs]
        self._transports: list[asyncio.BaseTransport] = []

    async def open_readers(self) -> list[asyncio.StreamReader]:
        loop = asyncio.get_running_loop()
        readers = []
        while self.read_ends:
            reader = asyncio.StreamReader(limit=_READ_CHUNK, loop=loop)
            protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
            pipe = os.fdopen(self.read_ends.pop(0), "rb", buffering=0)  # owns the fd now
            try:
                transport, _ = await loop.connect_read_pipe(functools.partial(_same, protocol), pipe)
            except BaseException:
                pipe.close()
                raise
            self._transports.append(transport)
            readers.append(reader)
        return readers

    def close_write_ends(self) -> None:
        for fd in self.write_ends:
            os.close(fd)
        self.write_ends = []

    def close_all(self) -> None:
        for fd in [*self.read_ends, *self.write_ends]:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.read_ends = self.write_ends = []

    async def close_readers(self) -> None:
        self.close_all()  # read ends not handed to a transport yet
        for transport in self._transports:
            transport.close()
        self._transports = []
        await asyncio.sleep(0)  # the transports close their files in a callback: let it run


def _same(protocol: asyncio.StreamReaderProtocol) -> asyncio.StreamReaderProtocol:
    return protocol
