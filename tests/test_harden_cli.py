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
