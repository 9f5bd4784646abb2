"""Workspace ``run_command`` (T5): no shell, timeouts that kill the process group, output cap,
secrets stripped from the environment, the workspace as working directory.

Calls go through ``ToolRegistry.execute``. No test waits a fixed time: a process's death is
observed through a pidfd, synchronisation with a running command goes through a FIFO.
"""

from __future__ import annotations

import asyncio
import os
import select
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from reactloop import ToolCall
from reactloop.result import ToolResult
from reactloop.tools import ToolRegistry
from reactloop.tools._process import CappedBuffer
from reactloop.tools.workspace import Workspace, strip_secrets

PY = shlex.quote(sys.executable)


def execute(ws: Workspace, name: str = "run_command", **arguments: Any) -> ToolResult:
    [result] = asyncio.run(ToolRegistry(ws.tools()).execute([ToolCall(name, arguments, "c1")]))
    return result


def py(code: str) -> str:
    """A ``python -c`` command line (``python`` is mapped to this interpreter)."""
    return f"python -c {shlex.quote(code)}"


def exits_within(pid: int, seconds: float = 30) -> bool:
    """True once ``pid`` has exited; a pidfd turns readable on exit (no polling, no sleep)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], seconds)
        return bool(ready)
    finally:
        os.close(fd)


needs_pidfd = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfds")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(root)


# -- basics ----------------------------------------------------------------------------------
def test_result_has_exit_code_and_both_streams(ws: Workspace) -> None:
    result = execute(ws, command=py("import sys; print('out'); print('err', file=sys.stderr); "
                                    "sys.exit(3)"))
    assert result.error is None  # a failing program is a result the model reads, not an error
    assert result.result == {"exit_code": 3, "stdout": "out\n", "stderr": "err\n"}


def test_cwd_is_the_workspace_and_relative_scripts_run(ws: Workspace) -> None:
    (ws.root / "hello.py").write_text("import os; print('cwd=' + os.getcwd())\n")
    result = execute(ws, command="python hello.py")
    assert result.result["stdout"] == f"cwd={ws.root}\n"
    pwd = execute(ws, command=py("import os; print(os.environ['PWD'])"))
    assert pwd.result["stdout"] == f"{ws.root}\n"


def test_args_are_passed_verbatim(ws: Workspace) -> None:
    result = execute(ws, command="python", args=["-c", "import sys; print(sys.argv[1:])",
                                                 "a b", "$HOME", "*"])
    assert result.result["stdout"] == "['a b', '$HOME', '*']\n"


def test_python_may_also_resolve_through_path(ws: Workspace) -> None:
    plain = Workspace(ws.root, python=None)
    result = execute(plain, command=f"{PY} -c 'print(42)'")
    assert result.result["stdout"] == "42\n"


# -- no shell --------------------------------------------------------------------------------
def test_no_shell_by_default(ws: Workspace) -> None:
    victim = ws.root / "x"
    victim.mkdir()
    result = execute(ws, command="echo hi; rm -rf x")
    assert result.error is None
    assert result.result["stdout"] == "hi; rm -rf x\n"  # echo got the rest as plain words
    assert "without a shell" in result.result["note"]
    assert victim.is_dir()
    piped = execute(ws, command="echo $HOME | cat > out.txt")
    assert piped.result["stdout"] == "$HOME | cat > out.txt\n"
    assert not (ws.root / "out.txt").exists()


def test_shell_is_opt_in(ws: Workspace) -> None:
    shell = Workspace(ws.root, allow_shell=True)
    result = execute(shell, command="echo one && echo two > two.txt; cat two.txt")
    assert result.result == {"exit_code": 0, "stdout": "one\ntwo\n", "stderr": ""}


@pytest.mark.parametrize(
    ("command", "fragment"),
    [
        ("no-such-program-here --version", "Command not found: 'no-such-program-here'"),
        ("echo 'unbalanced", "Cannot parse the command"),
        ("   ", "command is empty"),
    ],
)
def test_bad_commands_are_error_results(ws: Workspace, command: str, fragment: str) -> None:
    result = execute(ws, command=command)
    assert result.error is not None and fragment in result.error


def test_timeout_argument_must_be_positive(ws: Workspace) -> None:
    result = execute(ws, command="echo hi", timeout=0)
    assert result.error is not None and "timeout must be a positive number" in result.error


# -- timeouts and process groups -------------------------------------------------------------
def test_timeout_returns_an_error(ws: Workspace) -> None:
    result = execute(ws, command=py("import time; time.sleep(60)"), timeout=1)
    assert result.error is not None
    assert result.error.startswith("Command timed out after 1 s and was stopped")


def test_workspace_default_timeout_applies(ws: Workspace) -> None:
    quick = Workspace(ws.root, command_timeout=1)
    result = execute(quick, command=py("import time; time.sleep(60)"))
    assert result.error is not None and "timed out after 1 s" in result.error


@needs_pidfd
def test_timeout_kills_the_whole_process_group(ws: Workspace) -> None:
    code = ("import subprocess, sys, time; "
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
            "print(p.pid, flush=True); print('partial', flush=True); time.sleep(60)")
    result = execute(ws, command=py(code), timeout=3)
    assert result.error is not None and "timed out" in result.error
    assert "stdout so far:" in result.error and "partial" in result.error  # partial output
    grandchild = int(result.error.split("stdout so far:\n")[1].split()[0])
    assert exits_within(grandchild)


@needs_pidfd
def test_no_process_outlives_a_finished_command(ws: Workspace) -> None:
    # the command exits at once, leaving a background child that holds no pipe
    code = ("import subprocess, sys; "
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], "
            "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)")
    result = execute(ws, command=py(code))
    assert result.error is None and result.result["exit_code"] == 0
    assert exits_within(int(result.result["stdout"]))


@needs_pidfd
def test_cancelling_the_call_kills_the_process_group(ws: Workspace) -> None:
    """What ``Agent(tool_timeout=...)`` and run cancellation do to a running command."""
    fifo = ws.root / "started.fifo"
    os.mkfifo(fifo)
    code = ("import os, subprocess, sys, time; "
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
            "f = open('started.fifo', 'w'); f.write(f'{os.getpid()} {p.pid}'); f.close(); "
            "time.sleep(60)")

    def read_pids() -> list[int]:
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            data = b""
            while not data.endswith(b"\n") and select.select([fd], [], [], 30)[0]:
                chunk = os.read(fd, 100)
                if not chunk:  # the writer closed: everything is here
                    break
                data += chunk
            return [int(x) for x in data.split()]
        finally:
            os.close(fd)

    async def scenario() -> list[int]:
        registry = ToolRegistry(ws.tools())
        task = asyncio.create_task(registry.execute(
            [ToolCall("run_command", {"command": py(code), "timeout": 120}, "c1")]))
        pids = await asyncio.to_thread(read_pids)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pids

    pids = asyncio.run(scenario())
    assert len(pids) == 2
    assert all(exits_within(pid) for pid in pids)


# -- output cap ------------------------------------------------------------------------------
def test_output_is_capped_with_head_tail_and_marker(ws: Workspace) -> None:
    capped = Workspace(ws.root, output_limit=1000)
    result = execute(capped, command=py("for i in range(10000): print(f'line {i}')"))
    out = result.result["stdout"]
    assert len(out) < 1200
    assert out.startswith("line 0\nline 1\n")
    assert out.endswith("line 9999\n")
    assert "bytes omitted; output is capped at 1000 bytes" in out
    assert result.result["exit_code"] == 0


def test_capped_buffer_keeps_everything_under_the_limit() -> None:
    buf = CappedBuffer(10)
    for piece in (b"abc", b"defg", b"hij"):
        buf.add(piece)
    assert buf.text() == "abcdefghij" and not buf.truncated
    buf.add(b"k")
    assert buf.truncated
    assert buf.text() == "abcde\n[... 1 bytes omitted; output is capped at 10 bytes ...]\nghijk"


# -- environment -----------------------------------------------------------------------------
def test_secrets_are_stripped(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOO_API_KEY", "sk-123")
    monkeypatch.setenv("HARMLESS_SETTING", "visible")
    result = execute(ws, command=py("import os; print(os.environ.get('FOO_API_KEY')); "
                                    "print(os.environ.get('HARMLESS_SETTING'))"))
    assert result.result["stdout"] == "None\nvisible\n"


def test_env_allow_and_extra_env(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOO_API_KEY", "sk-123")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-1")
    allowed = Workspace(ws.root, env_allow=["foo_api_key"], env={"BOOK_FLIGHT_NOW": "x"})
    result = execute(allowed, command=py(
        "import os; print(os.environ.get('FOO_API_KEY'), os.environ.get('GITHUB_TOKEN'), "
        "os.environ['BOOK_FLIGHT_NOW'])"))
    assert result.result["stdout"] == "sk-123 None x\n"


def test_strip_secrets_patterns() -> None:
    env = {name: "v" for name in (
        "OPENAI_API_KEY", "anthropic_api_key", "GH_TOKEN", "HF_TOKEN", "AWS_REGION",
        "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "CLIENT_SECRET_ID", "STRIPE_KEY",
        "DATABASE_URL", "SSH_AUTH_SOCK", "GOOGLE_APPLICATION_CREDENTIALS", "SMTP_PASS",
        "PATH", "HOME", "LANG", "LC_ALL", "TERM", "USER", "PWD", "VIRTUAL_ENV",
        "GIT_AUTHOR_NAME", "PYTHONPATH", "TZ",
    )}
    kept = strip_secrets(env)
    assert sorted(kept) == ["GIT_AUTHOR_NAME", "HOME", "LANG", "LC_ALL", "PATH", "PWD",
                            "PYTHONPATH", "TERM", "TZ", "USER", "VIRTUAL_ENV"]
    assert "AWS_REGION" in strip_secrets(env, allow=["AWS_*"])
