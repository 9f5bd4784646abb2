"""Hardening of the command line (issue 10): workspace options, bad option values, ``--tools``
modules that fail on import, and MCP servers that print garbage.

Runs that need a model talk to a loopback server replaying OpenAI chat completions
(``--model openai:fake --base-url ...``), so the real adapter and the real CLI are exercised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _recorded_server import RecordedServer, Reply, recorded_server


def reactloop(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
              timeout: float = 300) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    return subprocess.run([sys.executable, "-m", "reactloop", *args], capture_output=True,
                          text=True, timeout=timeout, check=False, cwd=cwd, env=full_env)


def completion(text: str | None = None, calls: list[tuple[str, dict[str, Any]]] = ()) -> Reply:
    """An OpenAI chat completion answering ``text`` or calling ``calls``."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(calls)
        ]
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "fake",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    return Reply(200, json.dumps(body).encode())


@pytest.fixture(scope="module")
def server() -> Any:
    pytest.importorskip("openai")
    with recorded_server() as s:
        yield s


def tool_messages(server: RecordedServer) -> list[str]:
    """The tool results the model was sent, in order."""
    return [m["content"] for r in server.requests for m in r.body["messages"]
            if m["role"] == "tool"]


# -- 1. --env-allow --------------------------------------------------------------------------
def test_env_allow_passes_a_secret_to_workspace_commands(server: RecordedServer,
                                                         tmp_path: Path) -> None:
    server.requests.clear()
    code = "import os; print(os.environ.get('GITHUB_PAT'), os.environ.get('SLACK_WEBHOOK_URL'))"
    server.queue(completion(calls=[("run_command", {"command": "python", "args": ["-c", code]})]),
                 completion("done"))
    proc = reactloop("run", "--model", "openai:fake", "--base-url", f"{server.url}/v1",
                     "--workspace", str(tmp_path), "--env-allow", "GITHUB_PAT", "--json", "go",
                     env={"GITHUB_PAT": "ghp-visible", "SLACK_WEBHOOK_URL": "https://hook/x"})
    assert proc.returncode == 0, proc.stderr
    [result] = tool_messages(server)
    assert "ghp-visible None" in result


def test_env_allow_needs_a_workspace() -> None:
    proc = reactloop("run", "--env-allow", "GITHUB_PAT", "hi")
    assert proc.returncode == 1
    assert proc.stderr.strip() == ("reactloop: --env-allow only applies to --workspace "
                                   "commands; add --workspace DIR")


# -- 5. --tools modules that fail on import ---------------------------------------------------
@pytest.mark.parametrize(("source", "expected"), [
    ("import os\nraise RuntimeError('no config found')\n",
     "reactloop: --tools broken_tools: importing it failed: RuntimeError: no config found "
     "({path}, line 2)"),
    ("import sys\nsys.exit(0)\n",
     "reactloop: --tools broken_tools: the module called sys.exit(0) while being imported; a "
     "tools module should only define tools (put script code under "
     "'if __name__ == \"__main__\":')"),
    ("import not_installed_anywhere_xyz\n",
     "reactloop: --tools broken_tools: importing it failed: ModuleNotFoundError: No module "
     "named 'not_installed_anywhere_xyz' ({path}, line 1)"),
    ("def f(:\n    pass\n",
     "reactloop: --tools broken_tools: importing it failed: SyntaxError: invalid syntax "
     "(broken_tools.py, line 1)"),
], ids=["raises", "sys-exit-0", "missing-dependency", "syntax-error"])
def test_a_tools_module_failing_on_import_is_one_line_and_non_zero(
    tmp_path: Path, source: str, expected: str
) -> None:
    path = tmp_path / "broken_tools.py"
    path.write_text(source)
    proc = reactloop("run", "--tools", "broken_tools:TOOLS", "hi", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [expected.format(path=path)]


# -- 5. an MCP server printing garbage --------------------------------------------------------
GARBAGE_SERVER = """\
import time
for i in range(50):
    print(f"noise line {i}: not json", flush=True)
time.sleep(3600)
"""


def test_a_garbage_printing_mcp_server_is_one_line_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "garbage.py").write_text(GARBAGE_SERVER)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"junk": {
        "command": sys.executable, "args": [str(tmp_path / "garbage.py")], "timeout": 3}}}))
    proc = reactloop("run", "--mcp", str(config), "--model", "openai:fake",
                     "--base-url", "http://127.0.0.1:9/v1", "hi")
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()  # it was 550 lines: a traceback per noise line
    assert line.startswith("reactloop: run ended error: MCP server 'junk'")
    assert ("it wrote 50 lines to stdout that are not JSON-RPC messages (the first: "
            "'noise line 0: not json')") in line
