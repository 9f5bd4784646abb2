"""MCP client features through the real ``reactloop`` command: a server's questions asked on
the terminal (a pseudo-terminal, pexpect) and never waited for without one, resources attached
with ``run --mcp-resource`` and chat's ``/resource``, prompts sent with ``/prompt``, and
``mcp list`` showing resources and prompts. Server: tests/mcp_features_server.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from _cli import cli_env, reactloop
from _mcp_servers import FEATURES
from conftest import require

pytestmark = pytest.mark.slow

pexpect: Any
try:
    import pexpect
except ImportError:  # pragma: no cover
    pexpect = None


def spawn(home: Path, *args: str) -> Any:
    require(pexpect is not None, "pip install pexpect (in the 'test' extra)")
    return pexpect.spawn(sys.executable, ["-m", "reactloop", *args], encoding="utf-8",
                         timeout=60, dimensions=(50, 200),
                         env=cli_env(home, TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1"))


def test_run_asks_the_servers_questions_on_the_terminal(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "--agent", "mcp_cli_agents:book", "Book me in.")
    child.expect("MCP server 'features' asks: Who is travelling\\?")
    child.expect("Answer\\? \\[Y\\]es, \\[n\\]o \\(decline\\), \\[c\\]ancel:")
    child.send("y\r")
    child.expect("Name — Your name:")
    child.send("Ada\r")
    child.expect("Seats — How many seats \\(1–8\\):")
    child.send("9\r")
    child.expect("must be at most 8")
    child.expect("Seats — How many seats \\(1–8\\):")
    child.send("2\r")
    child.expect("Window — A window seat\\? \\[y/n\\] \\(default: no\\):")
    child.send("\r")
    child.expect("tool said: booked 2 for Ada \\(window: False\\)")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_declining_on_the_terminal_reaches_the_server(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "--agent", "mcp_cli_agents:book", "Book me in.")
    child.expect("Answer\\? ")
    child.send("n\r")
    child.expect("tool said: not booked: decline")
    child.expect(pexpect.EOF)


def test_without_a_terminal_the_server_is_told_at_once(tmp_path: Path) -> None:
    done = reactloop(tmp_path, "run", "--agent", "mcp_cli_agents:book", "Book me in.")
    assert done.returncode == 6, done.stderr  # the last tool step failed: said, not hung
    assert "did not declare the form elicitation capability" in done.stderr
    assert "booked" not in done.stdout


def test_run_attaches_a_resource_as_context(tmp_path: Path) -> None:
    done = reactloop(tmp_path, "run", "--agent", "mcp_cli_agents:echo",
                     "--mcp-resource", "features:notes://today", "What must I buy?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ('got: <resource server="features" uri="notes://today">\n'
                                   "Buy milk. Call Ada.\n</resource>\n\nWhat must I buy?")
    bad = reactloop(tmp_path, "run", "--agent", "mcp_cli_agents:echo",
                    "--mcp-resource", "nowhere:notes://today", "x")
    assert bad.returncode != 0
    assert bad.stderr.strip().splitlines()[-1] == (
        "reactloop: no MCP server named 'nowhere'; the servers: features")


def test_chat_resource_and_prompt_commands(tmp_path: Path) -> None:
    lines = "/resource features notes://today\nWhat must I buy?\n" \
            "/prompt review code='x = 1' focus=style\n/prompt nothing\n"
    done = reactloop(tmp_path, "chat", "--agent", "mcp_cli_agents:echo", "--no-log",
                     stdin=lines)
    assert done.returncode == 0, done.stderr
    assert "attached notes://today" in done.stderr
    assert "Buy milk. Call Ada.\n</resource>\n\nWhat must I buy?" in done.stdout
    assert "got: Review this code for style:\nx = 1" in done.stdout
    assert "/prompt: no MCP server offers the prompt 'nothing'" in done.stderr


def test_mcp_list_shows_resources_and_prompts(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"features": {
        "command": sys.executable, "args": [FEATURES]}}}))
    done = reactloop(tmp_path, "mcp", "list", str(config))
    assert done.returncode == 0, done.stderr
    assert "notes://today  today — Today's notes" in done.stdout
    assert "notes://day/{day} (template)" in done.stdout
    assert "review code=… [focus=…] — Review some code" in done.stdout


def test_mcp_progress_reaches_the_cli_progress_line_as_it_happens() -> None:
    """The CLI's runtime wrapper sees each progress notification while the tool runs (the
    live line is drawn from it), not after the batch."""
    from rich.console import Console

    from conftest import run
    from mcp_cli_agents import work
    from reactloop.cli._observe import ObservedRuntime
    from reactloop.cli._render import Renderer
    from reactloop.runtime import LocalRuntime

    lines: list[str] = []

    class Line(Renderer):
        def tool_progress(self, data: Any) -> None:
            super().tool_progress(data)
            lines.append(self.phase)

    renderer = Line(Console(file=open("/dev/null", "w")), None)  # noqa: SIM115
    agent = work()
    agent.runtime = ObservedRuntime(LocalRuntime(), renderer, {})
    result = run(agent.run("work"))
    assert result.output == "tool said: worked 3 steps"
    assert lines == ["running work · 1/3 · step 1", "running work · 2/3 · step 2",
                     "running work · 3/3 · step 3"]
