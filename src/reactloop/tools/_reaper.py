"""The per-command reaper: ``python -I -S _reaper.py STATUS_FD PROGRAM [ARGS...]`` (Linux).

Runs ``PROGRAM`` as its child and makes sure that nothing it started outlives it. The process
makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``), so every descendant that
is orphaned — also one that left the process group with ``setsid`` or double-forked — is
re-parented to this process instead of to init, and stays findable as a descendant. When the
program exits, or when this process gets SIGTERM (a timeout or a cancel in reactloop), it kills
every descendant it still has and reaps them, then reports on ``STATUS_FD``:

- ``X <code>``: the program's exit status (negative: the signal that ended it);
- ``E <errno> <message>``: the program could not be started.

Only the standard library is used (``-S`` skips site-packages), so the start costs ~15 ms.
Why a helper and not reactloop's own process as the subreaper: that would adopt the orphans of
every subprocess of the host application (MCP servers, the user's own) and need a
``waitpid(-1)`` reaper that steals other code's exit statuses.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

_PR_SET_CHILD_SUBREAPER = 36
_SWEEP_ROUNDS = 500


def _become_subreaper() -> None:
    with contextlib.suppress(ImportError, OSError, AttributeError):  # else: kill what we see
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _descendants(root: int) -> list[int]:
    """Living (not zombie) descendants of ``root``, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # it just exited
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()  # after "pid (comm) "
        if fields and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def _sweep() -> None:
    """Kill every descendant until none is left (a process may fork while we look)."""
    me = os.getpid()
    for _ in range(_SWEEP_ROUNDS):
        _reap()
        left = _descendants(me)
        if not left:
            return
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.002)  # let the kernel finish the kills before looking again


def _report(fd: int, line: str) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, line.encode() + b"\n")


def main(argv: list[str]) -> int:
    status_fd = int(argv[0])
    os.set_inheritable(status_fd, False)  # the program must not hold our status pipe

    def stop(signum: int, frame: object) -> None:
        _sweep()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    _become_subreaper()
    try:
        # posix_spawnp looks the program up in this process's PATH, which is the command's
        child = os.posix_spawnp(argv[1], argv[1:], os.environ,
                                setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM))
    except OSError as exc:
        _report(status_fd, f"E {exc.errno} {exc.strerror}")
        return 127
    code: int | None = None
    while code is None:
        try:
            pid, status = os.waitpid(-1, 0)  # orphans adopted meanwhile are reaped too
        except ChildProcessError:  # pragma: no cover - the child was reaped elsewhere
            code = 0
            break
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _sweep()
    _report(status_fd, f"X {code}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
