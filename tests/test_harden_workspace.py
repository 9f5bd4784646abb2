"""Hardening of the workspace tools (issue 10): the secrets filter of ``run_command``, process
clean-up, bounded reads of huge lines, NaN/infinite timeouts, hard links.

Every tool call goes through a real run (``Agent`` + ``ScriptedModel``), as a model makes it.
No test waits a fixed time: process deaths are observed through pidfds.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, ModelResponse, ToolCall
from reactloop.result import ToolResult
from reactloop.testing import ScriptedModel
from reactloop.tools.workspace import Workspace


def call(ws: Workspace, name: str = "run_command", **arguments: Any) -> ToolResult:
    """One tool call made by a scripted model in a real run; its result as the model saw it."""
    model = ScriptedModel([ModelResponse(tool_calls=[ToolCall(name, arguments)]),
                           ModelResponse(text="done")])
    result = Agent(model=model, workspace=ws).run_sync("go")
    [tool_result] = result.steps[0].results
    return tool_result


def py(code: str) -> str:
    """A ``python -c`` command line (``python`` is mapped to this interpreter)."""
    return f"python -c {shlex.quote(code)}"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(root)


# -- 1. the secrets filter -------------------------------------------------------------------
SECRET_NAMES = [
    "GITHUB_PAT", "SLACK_WEBHOOK_URL", "HF_HUB_KEY_X", "PRIVATE_KEY_PEM", "OPENAI_API_KEY",
    "npm_authToken", "AOC_SESSION", "DB_PASSWD", "SMTP_PASSWORD", "SMTP_PASS",
    "GOOGLE_APPLICATION_CREDENTIALS", "FLASK_SESSION_COOKIE", "STRIPE_SECRETKEY", "BASIC_AUTH",
    "SIGNING_KEY2", "AZURE_DEVOPS_PAT", "MONGODB_URI", "SENTRY_DSN", "AWS_REGION",
    "DEPLOY_KEYS", "TLS_CERT_P12", "PROXY_AUTHORIZATION", "GH_TOKEN", "SSH_AUTH_SOCK",
    "MY_PRIVATEKEY", "GITLAB_ACCESS_TOKENS", "AWSACCESSKEY",
]
HARMLESS_NAMES = [
    "PATH", "HOME", "LANG", "LC_ALL", "TERM", "TZ", "USER", "PYTHONPATH", "MANPATH", "EDITOR",
    "GIT_AUTHOR_NAME", "KEYBOARD_LAYOUT", "XDG_SESSION_TYPE", "DBUS_SESSION_BUS_ADDRESS",
    "PATCH_LEVEL", "COMPASS_HOME", "TOKENIZERS_PARALLELISM", "GOPRIVATE", "ORACLE_SID",
]


def test_secret_names_are_stripped_and_harmless_ones_kept(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in SECRET_NAMES:
        monkeypatch.setenv(name, "s3cr3t-value")
    for name in HARMLESS_NAMES:
        if name not in os.environ:
            monkeypatch.setenv(name, "harmless")
    result = call(ws, command=py("import json, os; print(json.dumps(sorted(os.environ)))"))
    assert result.error is None, result.error
    seen = set(json.loads(result.result["stdout"]))
    assert not seen & set(SECRET_NAMES)
    assert set(HARMLESS_NAMES) <= seen | {"PWD"}
    assert "s3cr3t-value" not in result.result["stdout"]


def test_env_allow_passes_named_secrets_only(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_PAT", "ghp-allowed")
    monkeypatch.setenv("SLACK_WEBHOOK_URL", "https://hooks.example/x")
    allowed = Workspace(ws.root, env_allow=["github_pat"])
    result = call(allowed, command=py(
        "import os; print(os.environ.get('GITHUB_PAT'), os.environ.get('SLACK_WEBHOOK_URL'))"))
    assert result.result["stdout"] == "ghp-allowed None\n"


# -- 2. process clean-up ---------------------------------------------------------------------
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
DETACHED = ("import subprocess, sys; "
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)'], "
            "start_new_session=True{pipes}); print(p.pid, flush=True)")


@needs_pidfd
@pytest.mark.parametrize("pipes", ["", ", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL"],
                         ids=["holding-stdout", "without-pipes"])
def test_a_setsid_grandchild_does_not_survive_the_timeout(ws: Workspace, pipes: str) -> None:
    code = DETACHED.format(pipes=pipes) + "; import time; time.sleep(3600)"
    result = call(ws, command=py(code), timeout=2)
    assert result.error is not None and "timed out after 2 s" in result.error
    grandchild = int(result.error.split("stdout so far:\n")[1].split()[0])
    assert exits_within(grandchild)


@needs_pidfd
def test_a_command_returns_when_it_exits_though_a_detached_child_holds_stdout(
    ws: Workspace,
) -> None:
    # the child sleeps an hour: the call returns long before its 60 s timeout only if it
    # does not wait for the child's end (it used to wait for the timeout, then 2 s more)
    result = call(ws, command=py(DETACHED.format(pipes="")), timeout=60)
    assert result.error is None, result.error
    assert result.result["exit_code"] == 0
    assert exits_within(int(result.result["stdout"]))


def test_no_event_loop_closed_message_after_a_detached_child(tmp_path: Path) -> None:
    script = tmp_path / "run.py"
    script.write_text(
        "import shlex, sys\n"
        "from reactloop import Agent, ModelResponse, ToolCall\n"
        "from reactloop.testing import ScriptedModel\n"
        f"code = {DETACHED.format(pipes='')!r}\n"
        "model = ScriptedModel([ModelResponse(tool_calls=[ToolCall('run_command', "
        "{'command': 'python -c ' + shlex.quote(code), 'timeout': 3})]), "
        "ModelResponse(text='done')])\n"
        f"result = Agent(model=model, workspace={str(tmp_path)!r}).run_sync('go')\n"
        "print(result.state.value)\n"
    )
    proc = subprocess.run([sys.executable, "-X", "dev", str(script)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.stdout.strip() == "completed", proc.stderr
    assert "Event loop is closed" not in proc.stderr
    assert "Exception ignored" not in proc.stderr
    assert "unclosed" not in proc.stderr  # no ResourceWarning for a pipe or transport


def test_exit_status_and_start_errors_survive_the_reaper(ws: Workspace) -> None:
    killed = call(ws, command=py("import os, signal; os.kill(os.getpid(), signal.SIGTERM)"))
    assert killed.result["exit_code"] == -15
    (ws.root / "script.sh").write_text("#!/bin/sh\necho hi\n")  # not executable
    denied = call(ws, command="./script.sh")
    assert denied.error is not None and "cannot be executed (permission denied)" in denied.error
    missing = call(ws, command="no-such-program-here")
    assert missing.error is not None and "Command not found: 'no-such-program-here'" in missing.error


# -- 3. bounded reads ------------------------------------------------------------------------
def test_read_file_on_a_100_mb_line_holds_only_what_it_shows(ws: Workspace) -> None:
    big = ws.root / "one-line.txt"
    with big.open("wb") as f:
        for _ in range(100):
            f.write(b"a" * 1_000_000)  # 100 MB, no newline anywhere
    tracemalloc.start()
    try:
        result = call(ws, "read_file", path="one-line.txt")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.error is None, result.error
    assert result.result == "     1\t" + "a" * 2000 + " [... line cut at 2000 chars]"
    assert peak < 10_000_000  # reading the line whole took more than 100 MB


def test_lines_after_a_long_line_keep_their_numbers(ws: Workspace) -> None:
    (ws.root / "mixed.txt").write_text("short\n" + "b" * 300_000 + "\r\nafter\nlast")
    result = call(ws, "read_file", path="mixed.txt", offset=2, limit=2)
    assert result.result == ("     2\t" + "b" * 2000 + " [... line cut at 2000 chars]\n"
                             "     3\tafter\n[lines 2-3 of 4; call read_file with offset=4 "
                             "for more]")


# -- 6. hard links ---------------------------------------------------------------------------
def test_hard_links_are_read_as_documented(ws: Workspace, tmp_path: Path) -> None:
    """A hard link is the same file under an inside name; read_file reads it (the README and
    the module say so: refusing st_nlink > 1 would break uv venvs, pnpm and local clones)."""
    outside = tmp_path / "outside.txt"
    outside.write_text("outside content\n")
    os.link(outside, ws.root / "linked.txt")
    result = call(ws, "read_file", path="linked.txt")
    assert result.result == "     1\toutside content"
    import reactloop.tools.workspace as module

    assert "Hard links are not seen by the path checks" in (module.__doc__ or "")
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert "a hard link inside the workspace to a file outside\nit is that file" in readme
