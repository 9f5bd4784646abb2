"""Shared fixtures. Each area appends its own clearly delimited block below."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion (we use no async pytest plugin)."""
    return asyncio.run(coro)


@pytest.fixture
def arun():
    return run


# ---- MCP (issue 6) ------------------------------------------------------------------------
# Helpers for tests/test_mcp_*.py: the test process's descendants (psutil if installed, else
# /proc) to prove that no server process outlives its connection, and a loopback HTTP server.

import os as _os  # noqa: E402 - this block is appended
import socket as _socket  # noqa: E402 - this block is appended
import subprocess as _subprocess  # noqa: E402 - this block is appended
import sys as _sys  # noqa: E402 - this block is appended
import time as _time  # noqa: E402 - this block is appended
from pathlib import Path as _Path  # noqa: E402 - this block is appended

MCP_DEMO_SERVER = str(_Path(__file__).with_name("mcp_demo_server.py"))


def descendant_pids(root: int | None = None) -> set[int]:
    """Living descendants of ``root`` (default: this process)."""
    root = _os.getpid() if root is None else root
    try:
        import psutil
    except ImportError:
        children: dict[int, list[int]] = {}
        for entry in _os.listdir("/proc"):
            if entry.isdigit():
                stat = _proc_stat(int(entry))
                if stat is not None and stat[0] != "Z":
                    children.setdefault(stat[1], []).append(int(entry))
        out: set[int] = set()
        todo = [root]
        while todo:
            for child in children.get(todo.pop(), []):
                if child not in out:
                    out.add(child)
                    todo.append(child)
        return out
    try:
        procs = psutil.Process(root).children(recursive=True)
    except psutil.NoSuchProcess:
        return set()
    return {p.pid for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE}


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting to be reaped counts as dead)."""
    stat = _proc_stat(pid)
    if stat is not None:
        return stat[0] != "Z"
    try:
        _os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _os.path.isdir("/proc")  # /proc exists but has no entry: gone


def _proc_stat(pid: int) -> tuple[str, int] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    fields = data.rsplit(")", 1)[1].split()  # the command name may contain spaces
    return fields[0], int(fields[1])


def free_port() -> int:
    with _socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_demo_http(port: int) -> _subprocess.Popen[bytes]:
    """Start tests/mcp_demo_server.py over streamable HTTP and wait until it accepts."""
    proc = _subprocess.Popen(
        [_sys.executable, MCP_DEMO_SERVER, "--http", str(port)],
        stdout=_subprocess.DEVNULL,
        stderr=_subprocess.DEVNULL,
    )
    deadline = _time.monotonic() + 60
    while True:
        try:
            _socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            if proc.poll() is not None or _time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"the demo HTTP server did not start on port {port}") from None
            _time.sleep(0.05)  # polling for a condition, not waiting a fixed time


@pytest.fixture
def demo_http():
    """``start(port)`` for demo HTTP servers, all stopped after the test."""
    procs: list[_subprocess.Popen[bytes]] = []

    def start(port: int) -> _subprocess.Popen[bytes]:
        proc = start_demo_http(port)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


# ---- end MCP ------------------------------------------------------------------------------


# ---- Sessions (issues 10, 18) -------------------------------------------------------------
# One throw-away PostgreSQL cluster per test session (see tests/_postgres.py), a fresh database
# per test, and `store_arg`: the same session test on SQLite and on PostgreSQL.

import uuid as _uuid  # noqa: E402 - this block is appended


@pytest.fixture(scope="session")
def postgres_server():
    """Base URL ``postgresql://postgres@127.0.0.1:PORT`` of the session's cluster."""
    import _postgres

    reason = _postgres.missing()
    if reason is not None:
        if _os.environ.get("CI"):
            pytest.fail(f"CI must run the PostgreSQL tests: {reason}")
        pytest.skip(reason)
    with _postgres.cluster() as url:
        yield url


@pytest.fixture
def postgres_url(postgres_server):
    """A new empty database on the cluster, dropped after the test."""
    import _postgres

    name = f"t_{_uuid.uuid4().hex[:16]}"
    url = _postgres.create_database(postgres_server, name)
    yield url
    from reactloop.sessions import _postgres as store_module

    shared = store_module._stores.pop(url, None)  # this process's pool for it, if any
    if shared is not None:
        shared.close()
    _postgres.drop_database(postgres_server, name)


@pytest.fixture(params=["sqlite", "postgres"])
def store_arg(request, tmp_path):
    """What a user passes as ``store=``: a SQLite file path or a postgresql:// URL."""
    if request.param == "sqlite":
        return str(tmp_path / "sessions.sqlite3")
    return request.getfixturevalue("postgres_url")


# ---- end Sessions -------------------------------------------------------------------------
