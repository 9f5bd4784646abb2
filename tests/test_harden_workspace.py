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
]
HARMLESS_NAMES = [
    "PATH", "HOME", "LANG", "LC_ALL", "TERM", "TZ", "USER", "PYTHONPATH", "MANPATH", "EDITOR",
    "GIT_AUTHOR_NAME", "KEYBOARD_LAYOUT", "XDG_SESSION_TYPE", "DBUS_SESSION_BUS_ADDRESS",
    "PATCH_LEVEL", "COMPASS_HOME",
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
