"""The MCP Inspector's CLI against ``reactloop mcp serve``.

Which Inspector: ``@modelcontextprotocol/inspector@0.15.0`` (tests/mcp_npm), the last release
whose CLI runs on Node 20 (current ones need Node >= 22); its TypeScript SDK speaks protocol
2025-06-18 over stdio, as most MCP clients do today."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import reactloop
from _mcp_servers import NPM_DIR, NPM_HINT
from conftest import require
from test_mcp_serve_features import TOOLS_MODULE

pytestmark = pytest.mark.slow

INSPECTOR_CLI = NPM_DIR / "node_modules" / "@modelcontextprotocol" / "inspector" / "cli" / \
    "build" / "index.js"


def inspect(tmp_path: Path, *method: str) -> Any:
    require(INSPECTOR_CLI.exists(), NPM_HINT)
    (tmp_path / "served_tools.py").write_text(textwrap.dedent(TOOLS_MODULE))
    src = str(Path(reactloop.__file__).resolve().parents[1])  # this reactloop, in the server
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, str(tmp_path)])}
    out = subprocess.run(
        ["node", str(INSPECTOR_CLI), sys.executable, "-m", "reactloop", "mcp", "serve",
         "--tools", "served_tools:TOOLS", "--agent", "served_tools:agent", *method],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_inspector_lists_and_calls_the_served_tools(tmp_path: Path) -> None:
    listed = {t["name"]: t for t in inspect(tmp_path, "--method", "tools/list")["tools"]}
    assert set(listed) == {"wipe", "count", "run_agent"}
    assert listed["count"]["inputSchema"]["required"] == ["n"]
    assert listed["wipe"]["annotations"] == {"destructiveHint": True}
    assert "annotations" not in listed["count"]

    counted = inspect(tmp_path, "--method", "tools/call", "--tool-name", "count",
                      "--tool-arg", "n=3")
    assert counted == {"content": [{"type": "text", "text": "counted to 3"}], "isError": False}

    assert inspect(tmp_path, "--method", "logging/setLevel", "--log-level", "error") == {}

    refused = inspect(tmp_path, "--method", "tools/call", "--tool-name", "wipe",
                      "--tool-arg", "folder=/data")
    assert refused["isError"] and "--approve-all" in refused["content"][0]["text"]
    assert not (tmp_path / "ran-wipe").exists()  # the Inspector CLI cannot answer elicitation
