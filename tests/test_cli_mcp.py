"""MCP from the command line, on the real mcp-server-git: names without a double prefix,
include/exclude filters, and tools that write listed, flagged and confirmed before they run."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from _cli import reactloop
from conftest import require


@pytest.fixture(autouse=True)
def _needs_mcp_server_git() -> None:  # skips, or fails under CI
    require(importlib.util.find_spec("mcp_server_git"),
            "pip install mcp-server-git (in the 'test' extra)")


def _repo(path: Path) -> Path:
    path.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"],
                 ["config", "user.name", "Tester"]):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    (path / "new.txt").write_text("untracked\n")
    return path


def _config(tmp_path: Path, **extra: object) -> Path:
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"git": {
        "command": sys.executable, "args": ["-m", "mcp_server_git"], **extra}}}))
    return cfg


def _rows(stdout: str) -> dict[str, str]:
    """The listed tools (first column of the table) and their lines."""
    return {line.split("│")[1].strip(): line for line in stdout.splitlines()
            if line.startswith("│") and line.split("│")[1].strip()}


def test_mcp_list_shows_names_once_prefixed_and_which_tools_write(tmp_path: Path) -> None:
    proc = reactloop(tmp_path, "mcp", "list", str(_config(tmp_path)))
    assert proc.returncode == 0, proc.stderr
    rows = _rows(proc.stdout)
    assert "git_status" in rows and not any(n.startswith("git_git_") for n in rows)
    assert "read-only" in rows["git_status"] and "read-only" in rows["git_log"]
    assert "writes" in rows["git_commit"] and "destructive" not in rows["git_commit"]
    assert "writes (destructive)" in rows["git_reset"]


def test_include_and_exclude_from_the_config_and_flags(tmp_path: Path) -> None:
    cfg = _config(tmp_path, include=["git_status", "git_log", "git_nothing*"])
    proc = reactloop(tmp_path, "mcp", "list", str(cfg))
    assert proc.returncode == 0, proc.stderr
    assert set(_rows(proc.stdout)) == {"git_status", "git_log"}
    assert "include pattern 'git_nothing*' matches none" in proc.stdout
    flagged = reactloop(tmp_path, "mcp", "list", str(_config(tmp_path)), "--exclude", "git_diff*",
                        "--exclude", "git_res*")
    names = set(_rows(flagged.stdout))
    assert "git_commit" in names and "git_status" in names
    assert not any(n.startswith(("git_diff", "git_reset")) for n in names)


def _staged(repo: str) -> str:
    return subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=repo,
                          capture_output=True, text=True, check=True).stdout.strip()


def test_writing_tools_are_flagged_in_the_trace_and_can_be_excluded(tmp_path: Path) -> None:
    repo = str(_repo(tmp_path / "repo"))
    # a tool the server marks as writing waits for a person: no terminal, no --approve-all,
    # so the run ends waiting (exit 7) and nothing is staged
    waiting = reactloop(tmp_path, "run", "--agent", "cli_agents:git", "Stage new.txt",
                        REACTLOOP_TEST_REPO=repo)
    assert waiting.returncode == 7, waiting.stderr
    assert "git_add" in waiting.stderr
    assert _staged(repo) == ""
    proc = reactloop(tmp_path, "run", "--agent", "cli_agents:git", "--approve-all",
                     "Stage new.txt", REACTLOOP_TEST_REPO=repo)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    status = next(line for line in lines if line.startswith("→ git_status"))
    add = next(line for line in lines if line.startswith("→ git_add"))
    assert "(writes)" not in status and add.endswith("(writes)")
    assert _staged(repo) == "new.txt"
    record = json.loads(reactloop(tmp_path, "logs", "show", "--json",
                                  json.loads(reactloop(tmp_path, "logs", "--json").stdout)[0][
                                      "id"]).stdout)
    calls = [t for t in record["trace"] if t["type"] == "tool_call"]
    assert [c["writes"] for c in calls] == [False, True]  # kept for logs show
    excluded = reactloop(tmp_path, "run", "--agent", "cli_agents:git", "--approve-all",
                         "--mcp-exclude",
                         "git_add", "Stage new.txt", REACTLOOP_TEST_REPO=repo)
    assert excluded.returncode == 6  # the model's call of git_add failed: not offered
    assert "unknown tool 'git_add'" in excluded.stderr.lower() or "git_add" in excluded.stderr
