"""The worker threads reactloop runs blocking code on (sync tools): a pool reactloop owns.

Why not ``asyncio.to_thread``: it uses the event loop's default executor, and

- ``asyncio.run`` joins that executor when it closes, so ``Agent.run_sync`` (and every
  command) waited for a tool the run had already given up on — past its deadline, or forever
  for a tool that never returns; ``concurrent.futures`` also joins its workers when the
  interpreter exits, so the process could not end either;
- a call that timed out keeps its thread, so a few stuck tools fill the default executor
  (``min(32, cpus + 4)`` threads: 6 on 2 cores) and every other run's sync tools wait behind
  them until their own timeouts expire, without ever running.

Here the threads are daemon threads that nobody joins. A call whose caller stopped waiting (a
tool timeout, the run's deadline, a cancel) is *abandoned*: its thread is counted as stuck
and no longer counts toward the pool's size, so a fresh thread takes its place — as long as
there are fewer than :data:`MAX_STUCK` stuck threads (a tool that never returns must not grow
the process without bound; past the cap, calls wait for a free thread). When an abandoned call
returns after all, its thread goes back to work or ends. :func:`thread_stats` tells how many
threads are stuck; ``reactloop serve`` shows it in ``GET /api/info``.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["MAX_STUCK", "POOL_SIZE", "ThreadStats", "abandon", "run_in_thread", "start",
           "thread_stats"]

T = TypeVar("T")

POOL_SIZE = 32
"""Threads that serve calls at once (started on demand; sync tools mostly wait on I/O)."""
MAX_STUCK = 64
"""Abandoned threads replaced at most; past this, calls wait for a free thread."""

_PENDING, _RUNNING, _DONE = 0, 1, 2


@dataclass(frozen=True)
class ThreadStats:
    """A snapshot of the threads sync tools run on."""

    threads: int
    """Threads alive (serving, idle or stuck)."""
    busy: int
    """Threads running a call someone still waits for."""
    stuck: int
    """Threads still running a call that was abandoned (timed out or cancelled)."""
    queued: int
    """Calls waiting for a free thread."""
    abandoned: int
    """Calls abandoned while running, since the process started."""
    size: int = POOL_SIZE
    """Threads that serve calls at once, stuck ones not counted."""
    max_stuck: int = MAX_STUCK
    """Stuck threads replaced at most."""


class _Job:
    __slots__ = ("abandoned", "args", "context", "fn", "future", "kwargs", "loop", "state")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any],
                 fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]
                 ) -> None:
        self.loop, self.future, self.fn, self.args, self.kwargs = loop, future, fn, args, kwargs
        self.context = contextvars.copy_context()  # as asyncio.to_thread does
        self.state = _PENDING
        self.abandoned = False

    def call(self) -> tuple[Any, BaseException | None]:
        try:
            return self.context.run(self.fn, *self.args, **self.kwargs), None
        except BaseException as exc:  # handed to the caller, as executors do
            return None, exc

    def deliver(self, result: Any, error: BaseException | None) -> None:
        self.fn = self.args = self.kwargs = None  # type: ignore[assignment]
        try:  # noqa: SIM105 - not contextlib.suppress: three calls fewer per tool call
            self.loop.call_soon_threadsafe(_settle, self.future, result, error)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # the caller stopped waiting
        return
    if error is None:
        future.set_result(result)
    elif isinstance(error, StopIteration):  # a future refuses it (it would end a generator)
        future.set_exception(RuntimeError(f"the function raised StopIteration({error})"))
    else:
        future.set_exception(error)


class _Pool:
    """Daemon threads started on demand, stuck ones replaced (see the module docstring).

    Jobs go through a ``queue.SimpleQueue`` (C: a blocked worker wakes without Python-level
    condition variables); a job abandoned while it waits stays there, marked done, and the
    worker that takes it skips it. A worker counts itself idle *before* it hands a result
    back, so the caller's next call finds it idle instead of starting another thread."""

    def __init__(self, size: int = POOL_SIZE, max_stuck: int = MAX_STUCK) -> None:
        self.size, self.max_stuck = size, max_stuck
        self.after_fork()
        self._abandoned = 0

    def stats(self) -> ThreadStats:
        with self._lock:
            return ThreadStats(self._threads, self._busy, self._stuck, self._queued,
                               self._abandoned, self.size, self.max_stuck)

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """See :func:`run_in_thread`."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        job = _Job(loop, future, fn, args, kwargs)
        self.submit(job)
        try:
            return await future
        except asyncio.CancelledError:
            self.abandon(job)
            raise

    def submit(self, job: _Job) -> None:
        with self._lock:
            self._queued += 1
            if self._idle < self._queued:
                self._start_thread()
            alive = self._threads > 0
        self._jobs.put(job)
        if not alive:  # no thread could be started at all (interpreter shutdown)
            self._fail(job, RuntimeError("reactloop could not start a thread for the tool"))

    def abandon(self, job: _Job) -> None:
        """The caller of ``job`` stopped waiting for it."""
        with self._lock:
            if job.state == _PENDING:  # left in the queue: the worker that takes it skips it
                job.state = _DONE
                self._queued -= 1
            elif job.state == _RUNNING and not job.abandoned:
                job.abandoned = True
                self._abandoned += 1
                self._busy -= 1
                self._stuck += 1
                if self._idle < self._queued:
                    self._start_thread()  # the stuck thread's replacement

    def _start_thread(self) -> bool:
        """Start a worker if the caps allow (called with the lock held); it counts as idle."""
        serving = self._threads - self._stuck
        if serving >= self.size or self._threads >= self.size + self.max_stuck:
            return False
        try:
            threading.Thread(target=self._work, name="reactloop-tool", daemon=True).start()
        except RuntimeError:  # "can't start new thread" / interpreter shutdown
            return False
        self._threads += 1
        self._idle += 1
        return True

    def _work(self) -> None:
        jobs, lock = self._jobs, self._lock
        while True:
            job = jobs.get()
            with lock:
                self._idle -= 1
                if job.state != _PENDING:  # abandoned while it waited
                    self._idle += 1
                    continue
                job.state = _RUNNING
                self._queued -= 1
                self._busy += 1
            result, error = job.call()
            with lock:
                job.state = _DONE
                if job.abandoned:
                    self._stuck -= 1
                else:
                    self._busy -= 1
                leave = self._threads - self._stuck > self.size  # replaced while stuck
                if leave:
                    self._threads -= 1
                else:
                    self._idle += 1
            job.deliver(result, error)
            del job, result, error  # an idle thread holds on to nothing
            if leave:
                return

    def _fail(self, job: _Job, error: BaseException) -> None:
        with self._lock:
            if job.state != _PENDING:
                return
            job.state = _DONE
            self._queued -= 1
        job.deliver(None, error)

    def after_fork(self) -> None:
        """In a forked child the threads are gone: start afresh (also the initial state)."""
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._threads = self._idle = self._busy = self._stuck = self._queued = 0


_pool = _Pool()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pool.after_fork)


def run_in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any
                  ) -> Coroutine[Any, Any, T]:
    """``fn(*args, **kwargs)`` on one of reactloop's worker threads, with the caller's
    context variables (like ``asyncio.to_thread``), to await. Cancelling the caller abandons
    the call: the result is dropped and nothing waits for the thread, at run end or at exit.
    (A plain function returning the pool's coroutine: one coroutine less per call.)"""
    return _pool.run(fn, *args, **kwargs)


def start(fn: Callable[..., Any], kwargs: Mapping[str, Any]) -> _Job:
    """:func:`run_in_thread` for a caller that awaits ``job.future`` itself and calls
    :func:`abandon` when it is cancelled meanwhile (a sync tool's call: one coroutine less)."""
    loop = asyncio.get_running_loop()
    job = _Job(loop, loop.create_future(), fn, (), kwargs)
    _pool.submit(job)
    return job


def abandon(job: _Job) -> None:
    """The caller of a :func:`start` ed job stopped waiting for it."""
    _pool.abandon(job)


def thread_stats() -> ThreadStats:
    """How many of the threads sync tools run on are alive, busy and stuck."""
    return _pool.stats()
