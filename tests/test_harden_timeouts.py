"""NaN and infinite timeouts are configuration errors (issue 10): ``@tool``/``Tool``,
``Workspace`` settings, the CLI's ``--timeout``/``--tool-timeout``; a model asking
``run_command`` for one gets an error result.

NaN slips through a ``timeout <= 0`` check and, like inf, never expires.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, ModelResponse, Tool, ToolCall, UserError, tool
from reactloop.testing import ScriptedModel
from reactloop.tools.workspace import Workspace

BAD = [pytest.param(math.nan, id="nan"), pytest.param(math.inf, id="inf"),
       pytest.param(-math.inf, id="-inf")]


def _noop() -> str:
    return "ok"


@pytest.mark.parametrize("value", BAD)
def test_tool_timeouts_must_be_finite(value: float) -> None:
    with pytest.raises(UserError, match=r"tool '_noop': timeout must be a positive, finite "
                                        r"number of seconds"):
        tool(timeout=value)(_noop)
    with pytest.raises(UserError, match="finite"):
        Tool(_noop, timeout=value)
    assert Tool(_noop, timeout=2.5).timeout == 2.5


@pytest.mark.parametrize("value", BAD)
@pytest.mark.parametrize("setting", ["command_timeout", "max_command_timeout"])
def test_workspace_timeouts_must_be_finite(tmp_path: Path, setting: str, value: float) -> None:
    with pytest.raises(UserError, match=rf"Workspace: {setting} must be a positive, finite "
                                        r"number of seconds"):
        Workspace(tmp_path, **{setting: value})


@pytest.mark.parametrize("setting", ["output_limit", "read_limit", "max_entries"])
def test_workspace_limits_must_be_whole_numbers(tmp_path: Path, setting: str) -> None:
    with pytest.raises(UserError, match=rf"Workspace: {setting} must be a positive whole"):
        Workspace(tmp_path, **{setting: math.nan})


@pytest.mark.parametrize("value", BAD)
def test_a_models_nan_or_infinite_command_timeout_is_an_error_result(
    tmp_path: Path, value: float
) -> None:
    model = ScriptedModel([
        ModelResponse(tool_calls=[ToolCall("run_command", {"command": "echo hi",
                                                           "timeout": value})]),
        ModelResponse(text="done"),
    ])
    result = Agent(model=model, workspace=tmp_path).run_sync("go")
    [answer] = result.steps[0].results
    assert answer.error is not None
    assert answer.error.startswith("timeout must be a positive number of seconds")


def reactloop(*args: str) -> subprocess.CompletedProcess[str]:
    env: dict[str, Any] = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "reactloop", *args], capture_output=True,
                          text=True, timeout=120, check=False, env=env)


@pytest.mark.parametrize(("option", "value"), [("--timeout", "nan"), ("--tool-timeout", "inf"),
                                               ("--timeout", "-inf"), ("--tool-timeout", "NaN")])
def test_cli_rejects_nan_and_infinite_timeouts(option: str, value: str) -> None:
    proc = reactloop("run", option, value, "hi")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    [error] = [line for line in proc.stderr.splitlines() if line.startswith("Error:")]
    assert error == (f"Error: Invalid value for '{option}': {float(value)} is not a positive, "
                     "finite number of seconds (e.g. 30 or 2.5)")
