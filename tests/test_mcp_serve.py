"""``reactloop mcp serve`` checked with the SDK's own stdio client, and ``reactloop mcp list``."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import MCP_DEMO_SERVER, descendant_pids, run
from reactloop.cli.mcp import mcp_group
from reactloop.mcp import MCPServer

pytestmark = pytest.mark.slow

TOOLS_MODULE = '''
from reactloop import Agent, tool
from reactloop.testing import ScriptedModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


def shout(text: str) -> str:
    """Upper-case the text."""
    print("noise on stdout must not break the protocol")
    return text.upper()


def info(city: str) -> dict:
    """Facts about a city."""
    return {"city": city, "airports": 2}


TOOLS = [add, shout, info]
agent = Agent(model=ScriptedModel(["The agent's answer: 42"]), instructions="Answer briefly.")
'''


def serve_command(tmp_path: Path, *options: str) -> tuple[str, list[str]]:
    (tmp_path / "served_tools.py").write_text(textwrap.dedent(TOOLS_MODULE))
    code = "import sys; from reactloop.cli import main; sys.exit(main())"
    return sys.executable, ["-c", code, "mcp", "serve", *options]


def test_mcp_serve_with_the_sdk_client(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.shared.exceptions import MCPError

    command, args = serve_command(
        tmp_path, "--tools", "served_tools:TOOLS", "--agent", "served_tools:agent"
    )
    params = StdioServerParameters(command=command, args=args, cwd=str(tmp_path))

    async def main() -> None:
        async with Client(params) as client:
            listing = await client.list_tools()
            tools = {t.name: t for t in listing.tools}
            assert set(tools) == {"add", "shout", "info", "run_agent"}
            assert tools["add"].description == "Add two integers."
            assert tools["add"].input_schema["properties"]["a"] == {
                "type": "integer",
                "description": "first addend",
            }
            assert tools["add"].input_schema["required"] == ["a", "b"]
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert not result.is_error and result.content[0].text == "5"
            result = await client.call_tool("shout", {"text": "hi"})
            assert result.content[0].text == "HI"
            facts = await client.call_tool("info", {"city": "Lima"})
            assert facts.structured_content == {"city": "Lima", "airports": 2}
            assert json.loads(facts.content[0].text) == facts.structured_content
            bad = await client.call_tool("add", {"a": "two", "b": 3})
            assert bad.is_error and "Invalid arguments" in bad.content[0].text
            answer = await client.call_tool("run_agent", {"task": "What is 6*7?"})
            assert answer.content[0].text == "The agent's answer: 42"
            with pytest.raises(MCPError, match="Unknown tool"):
                await client.call_tool("nope", {})

    run(main())


def test_reactloop_tools_round_trip_through_mcp_serve(tmp_path: Path) -> None:
    command, args = serve_command(
        tmp_path, "--tools", "served_tools:add", "--tools", "served_tools:info", "--name", "calc"
    )
    server = MCPServer.stdio(command, args, cwd=tmp_path, name="calc")

    async def main() -> None:
        async with server.open(lambda name, data: None) as tools:
            add, info = tools
            assert (add.name, info.name) == ("calc_add", "calc_info")
            assert await add.call({"a": 20, "b": 22}) == "42"
            assert await info.call({"city": "Oslo"}) == {"city": "Oslo", "airports": 2}

    run(main())


def test_mcp_serve_needs_something_to_serve() -> None:
    result = CliRunner().invoke(mcp_group, ["serve"])
    assert result.exit_code != 0 and "--tools" in result.output


def test_mcp_list_prints_each_servers_tools(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "demo": {"command": sys.executable, "args": [MCP_DEMO_SERVER]},
                    "broken": {"command": "reactloop-no-such-mcp-server"},
                    "optional": {"command": "reactloop-no-such-mcp-server", "required": False},
                }
            }
        )
    )
    before = descendant_pids()
    result = CliRunner().invoke(mcp_group, ["list", str(config)], env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    out: Any = result.output
    assert "demo_echo" in out and "Return the text unchanged." in out
    assert "demo_picture_with-odd_name" in out
    assert "MCP server 'broken'" in out and "command not found" in out
    assert "MCP server 'optional'" in out
    assert descendant_pids() <= before


def test_mcp_list_reports_a_bad_config(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {"x": {"args": []}}}')
    result = CliRunner().invoke(mcp_group, ["list", str(config)])
    assert result.exit_code == 1
    assert "server 'x': entry needs 'command'" in result.output
