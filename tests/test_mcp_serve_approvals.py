"""``reactloop mcp serve`` never runs a call that needs approval unless told to
(``--approve-all``), checked with the official ``mcp`` SDK's client over stdio."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import run

pytestmark = pytest.mark.slow

TOOLS_MODULE = '''
from pathlib import Path

from reactloop import Agent, ToolCall, tool
from reactloop.testing import ScriptedModel


@tool(requires_approval=True)
def wipe(folder: str) -> str:
    """Delete everything in a folder.

    Args:
        folder: the folder.
    """
    Path("ran-wipe").write_text(folder)
    return f"wiped {folder}"


def _large(arguments, context) -> bool:
    return arguments["amount"] > 100


@tool(requires_approval=_large)
def pay(amount: int) -> str:
    """Pay an amount (a person approves large ones).

    Args:
        amount: how much.
    """
    Path(f"ran-pay-{amount}").write_text("paid")
    return f"paid {amount}"


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    Path("ran-add").write_text("added")
    return a + b


TOOLS = [wipe, pay, add]
# every call of this agent waits for approval (Agent(approve=True))
agent = Agent(model=ScriptedModel([ToolCall("add", {"a": 1, "b": 2}), "The sum is 3."]),
              tools=[add], approve=True)
'''


def params(tmp_path: Path, *options: str) -> Any:
    from mcp import StdioServerParameters

    (tmp_path / "gated_tools.py").write_text(textwrap.dedent(TOOLS_MODULE))
    code = "import sys; from reactloop.cli import main; sys.exit(main())"
    # the whole environment: the SDK passes only a few variables by default (not PYTHONPATH)
    return StdioServerParameters(
        command=sys.executable, cwd=str(tmp_path), env=dict(os.environ),
        args=["-c", code, "mcp", "serve", "--tools", "gated_tools:TOOLS",
              "--agent", "gated_tools:agent", *options])


def test_calls_needing_approval_are_refused_and_flagged(tmp_path: Path) -> None:
    from mcp import Client

    async def main() -> None:
        async with Client(params(tmp_path)) as client:
            listing = {t.name: t for t in (await client.list_tools()).tools}
            hints = {name: t.annotations is not None and t.annotations.destructive_hint
                     for name, t in listing.items()}
            assert hints == {"wipe": True, "pay": True, "add": False, "run_agent": True}

            refused = await client.call_tool("wipe", {"folder": "/data"})
            assert refused.is_error
            text = refused.content[0].text
            assert "approval" in text and "reactloop mcp serve --approve-all" in text
            assert not (tmp_path / "ran-wipe").exists()

            small = await client.call_tool("pay", {"amount": 5})  # the rule does not ask
            assert not small.is_error and small.content[0].text == "paid 5"
            large = await client.call_tool("pay", {"amount": 500})
            assert large.is_error and "--approve-all" in large.content[0].text
            assert not (tmp_path / "ran-pay-500").exists()

            agent = await client.call_tool("run_agent", {"task": "1+2?"})
            assert agent.is_error and "--approve-all" in agent.content[0].text
            assert not (tmp_path / "ran-add").exists()  # the agent's call waited, unrun

    run(main())


def test_approve_all_runs_them(tmp_path: Path) -> None:
    from mcp import Client

    async def main() -> None:
        async with Client(params(tmp_path, "--approve-all")) as client:
            done = await client.call_tool("wipe", {"folder": "/data"})
            assert not done.is_error and done.content[0].text == "wiped /data"
            large = await client.call_tool("pay", {"amount": 500})
            assert not large.is_error and (tmp_path / "ran-pay-500").exists()
            agent = await client.call_tool("run_agent", {"task": "1+2?"})
            assert not agent.is_error and agent.content[0].text == "The sum is 3."
            assert (tmp_path / "ran-add").exists()

    run(main())
