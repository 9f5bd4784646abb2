"""Writer locks for a file store: one small lock file per session, held with ``flock``.

Why an OS lock and not a lease row in the database: the kernel drops an ``flock`` the moment
its process dies, whatever killed it (SIGKILL, OOM, power of the container), so there is no
expiry to tune, no heartbeat to keep renewing during a long tool call, and no stale lease that
a reused pid could make look alive. ``flock`` locks belong to one open file (not to the
process, unlike ``fcntl`` record locks), so two writers in one process exclude each other too,
and Python opens files non-inheritable, so a tool's child process never keeps a lock alive.

:func:`held` is the waiting form, for a short read-modify-write of a file that several
processes share (the MCP login file).

The lock file holds a line about its holder (pid, host, since) for the busy message. A lock
file is removed only by a holder (when its session is deleted); a writer checks after locking
that the file it locked is still the one at the path, so removal never lets two writers in.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["held", "holder", "release", "remove", "try_lock"]

_NOTE_SIZE = 256

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

    def _wait(fd: int) -> None:
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # it tries for 10 s, then raises
            except OSError:
                continue
            return

    _NOTE_AT = 16  # byte 0 is the locked byte; Windows locks are mandatory
else:
    import fcntl

    def _try(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

    def _wait(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    _NOTE_AT = 0


def try_lock(path: Path) -> int | None:
    """Lock ``path`` (created if missing) without waiting: the open descriptor holding the
    lock, or ``None`` when another writer holds it."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if not _try(fd):
                os.close(fd)
                return None
            if _still_there(fd, path):
                note = json.dumps({"pid": os.getpid(), "host": socket.gethostname()[:100],
                                   "since": time.time()}).encode()
                os.lseek(fd, _NOTE_AT, os.SEEK_SET)
                os.write(fd, note.ljust(_NOTE_SIZE))  # overwrite, no truncate: it is slow
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # its holder removed the file after we opened it: lock the new one


@contextmanager
def held(path: Path) -> Iterator[None]:
    """Hold the lock of ``path`` (created if missing, never removed), waiting for it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _wait(fd)
    except BaseException:
        os.close(fd)
        raise
    try:
        yield
    finally:
        release(fd)


def _still_there(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def release(fd: int) -> None:
    """Give up the lock held by ``fd`` (closing it releases the lock)."""
    try:
        _unlock(fd)
    finally:
        os.close(fd)


def remove(fd: int, path: Path) -> None:
    """Remove the lock file of a lock we hold (its session is gone), then release it."""
    try:
        if sys.platform != "win32":  # an open file cannot be removed on Windows: keep it
            path.unlink(missing_ok=True)
    finally:
        release(fd)


def holder(path: Path) -> str:
    """Who holds the lock, as well as the lock file says (``"another writer"`` when unknown)."""
    try:
        with open(path, "rb") as f:
            f.seek(_NOTE_AT)
            note = json.loads(f.read(_NOTE_SIZE))
        since = time.strftime("%H:%M:%S", time.localtime(float(note["since"])))
        return f"another writer (pid {int(note['pid'])} on {note['host']}, since {since})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another writer"
