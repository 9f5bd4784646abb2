"""MCP servers over stdio: the real mcp-server-time and mcp-server-git, and a demo server
(tests/mcp_demo_server.py) that can crash, hang and refuse to start."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import MCP_DEMO_SERVER, descendant_pids, pid_alive, run
from reactloop import ToolRetry
from reactloop.mcp import MCPServer, MCPServerError, MCPTools

pytestmark = pytest.mark.slow


class Events:
    def __init__(self) -> None:
        self.items: list[tuple[str, Any]] = []

    def __call__(self, name: str, data: Any = None) -> None:
        self.items.append((name, data))

    def kinds(self) -> list[str]:
        return [d["kind"] for n, d in self.items if n == "mcp_warning"]


def by_name(tools: MCPTools) -> dict[str, Any]:
    return {t.name: t for t in tools}


def demo(**kwargs: Any) -> MCPServer:
    return MCPServer.stdio(sys.executable, [MCP_DEMO_SERVER], name="demo", **kwargs)


async def wait_until(condition: Any, what: str, limit: float = 30.0) -> None:
    """Poll ``condition`` (no fixed sleeps: we wait for the thing, with a deadline)."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


# -- real servers ------------------------------------------------------------------------------
def test_time_server_get_current_time_and_convert_time() -> None:
    command = shutil.which("mcp-server-time")
    assert command, "mcp-server-time is a test dependency (pip install -e '.[test]')"

    async def main() -> None:
        server = MCPServer.stdio(command)
        assert server.name == "time"
        async with server.open(Events()) as tools:
            t = by_name(tools)
            assert set(t) == {"time_get_current_time", "time_convert_time"}
            schema = t["time_convert_time"].parameters
            assert schema["required"] == ["source_timezone", "time", "target_timezone"]
            now = await t["time_get_current_time"].call({"timezone": "Asia/Tokyo"})
            converted = await t["time_convert_time"].call(
                {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
            )
            bad = t["time_get_current_time"].call({"timezone": "Nowhere/Atlantis"})
            with pytest.raises(ToolRetry, match="Invalid timezone"):
                await bad
        assert now["timezone"] == "Asia/Tokyo"
        assert datetime.fromisoformat(now["datetime"]).utcoffset().total_seconds() == 9 * 3600
        assert converted["target"]["datetime"].endswith("T21:00:00+09:00")
        assert converted["time_difference"] == "+9.0h"

    run(main())


def make_repo(path: Path) -> Path:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "Tester")
    (path / "README.md").write_text("hello\n")
    git("add", "README.md")
    git("commit", "-q", "-m", "First commit: add the readme")
    (path / "README.md").write_text("hello, changed\n")
    (path / "new.txt").write_text("untracked\n")
    return path


def test_git_server_status_and_log(tmp_path: Path) -> None:
    async def main(repo: Path) -> None:
        server = MCPServer.stdio(
            sys.executable, ["-m", "mcp_server_git", "--repository", str(repo)]
        )
        assert server.name == "git"
        async with server.open(Events()) as tools:
            t = by_name(tools)
            assert {"git_status", "git_log"} <= set(t)
            status = await t["git_status"].call({"repo_path": str(repo)})
            log = await t["git_log"].call({"repo_path": str(repo)})
        assert "README.md" in status and "new.txt" in status
        assert "First commit: add the readme" in str(log)

    path = tmp_path / "repo"
    path.mkdir()
    run(main(make_repo(path)))


# -- result mapping, names, errors -------------------------------------------------------------
def test_content_mapping_names_and_error_results() -> None:
    async def main() -> None:
        async with demo(prefix="d-").open(Events()) as tools:
            t = by_name(tools)
            assert "d-picture_with-odd_name" in t  # "picture.with-odd name", sanitized
            assert all(tool.origin == "MCP server 'demo'" for tool in tools)
            picture = await t["d-picture_with-odd_name"].call({})
            assert picture == (
                "a picture:\n[image: image/png, 1234 bytes]\n"
                "[resource: file:///notes.txt]\nsome notes"
            )
            assert await t["d-echo"].call({"text": "hi"}) == "hi"
            assert await t["d-pid"].call({}) > 0
            with pytest.raises(ToolRetry, match="fail"):
                await t["d-fail"].call({"reason": "nope"})
            with pytest.raises(ToolRetry, match=r"rejected|Unknown|Invalid|validation"):
                await t["d-echo"].call({"wrong": 1})

    run(main())


def test_timeout_gives_an_error_and_the_server_stays_usable() -> None:
    async def main() -> None:
        async with demo(timeout=2, startup_timeout=60).open(Events()) as tools:
            t = by_name(tools)
            with pytest.raises(ToolRetry, match=r"'demo' did not answer tool 'slow' within 2 s"):
                await t["demo_slow"].call({"seconds": 120})
            assert await t["demo_echo"].call({"text": "still here"}) == "still here"

    run(main())


# -- crashes and restarts ----------------------------------------------------------------------
def test_crash_during_a_call_names_the_server_then_restarts() -> None:
    events = Events()

    async def main() -> None:
        async with demo().open(events) as tools:
            t = by_name(tools)
            first = await t["demo_pid"].call({})
            with pytest.raises(
                ToolRetry, match=r"MCP server 'demo' stopped .* while running 'crash'"
            ):
                await t["demo_crash"].call({})
            assert not tools.connected
            second = await t["demo_pid"].call({})  # restarted, then sent
            assert second != first and not pid_alive(first)
            assert tools.restarts == 1 and tools.connected

    run(main())
    assert events.kinds() == ["connection_lost", "restarted"]


def test_server_killed_between_calls_is_restarted_and_the_call_retried() -> None:
    events = Events()

    async def main() -> None:
        async with demo().open(events) as tools:
            t = by_name(tools)
            first = await t["demo_pid"].call({})
            os.kill(first, signal.SIGKILL)
            await wait_until(lambda: not tools.connected, "the lost connection to be noticed")
            second = await t["demo_pid"].call({})  # never reached the dead server: retried
            assert second != first
            assert tools.restarts == 1

    run(main())
    assert events.kinds() == ["restarted"]


def test_failed_restart_marks_the_server_down(tmp_path: Path) -> None:
    marker = tmp_path / "no-restart"
    events = Events()

    async def main() -> None:
        server = MCPServer.stdio(
            sys.executable, [MCP_DEMO_SERVER, "--fail-if-exists", str(marker)], name="flaky"
        )
        async with server.open(events) as tools:
            t = by_name(tools)
            marker.touch()
            with pytest.raises(ToolRetry, match="'flaky' stopped"):
                await t["flaky_crash"].call({})
            for _ in range(2):  # the second call fails fast: no second restart
                with pytest.raises(ToolRetry, match="'flaky' stopped and could not be restarted"):
                    await t["flaky_echo"].call({"text": "x"})

    run(main())
    assert events.kinds() == ["connection_lost", "restart_failed"]
    assert "refusing to start" in events.items[-1][1]["stderr_tail"]


# -- failing to start --------------------------------------------------------------------------
def test_failed_start_raises_with_the_stderr_tail(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    marker.touch()
    server = MCPServer.stdio(
        sys.executable, [MCP_DEMO_SERVER, "--fail-if-exists", str(marker)], name="broken"
    )

    async def main() -> None:
        async with server.open(Events()):
            raise AssertionError("should not start")

    with pytest.raises(MCPServerError) as info:
        run(main())
    assert "MCP server 'broken'" in str(info.value) and "failed to start" in str(info.value)
    assert f"refusing to start, {marker} exists" in str(info.value)
    assert info.value.server == "broken"


def test_missing_command_and_hanging_server_fail_fast() -> None:
    async def main(server: MCPServer) -> None:
        async with server.open(Events()):
            raise AssertionError("should not start")

    with pytest.raises(MCPServerError, match="command not found"):
        run(main(MCPServer.stdio("reactloop-no-such-mcp-server")))
    hanging = MCPServer.stdio(
        sys.executable, ["-c", "import time; time.sleep(600)"], name="mute", startup_timeout=0.5
    )
    before = descendant_pids()
    with pytest.raises(MCPServerError, match=r"'mute'.*did not complete the MCP handshake"):
        run(main(hanging))
    assert descendant_pids() <= before


def test_optional_server_that_fails_is_skipped_with_a_warning() -> None:
    events = Events()

    async def main() -> None:
        server = MCPServer.stdio("reactloop-no-such-mcp-server", name="extra", required=False)
        async with server.open(events) as tools:
            assert list(tools) == [] and not tools.connected

    run(main())
    (name, data) = events.items[0]
    assert name == "mcp_warning" and data["kind"] == "skipped" and data["server"] == "extra"
    assert "command not found" in data["message"]


# -- cleanup -----------------------------------------------------------------------------------
def test_no_child_processes_remain_after_close_error_or_cancel() -> None:
    before = descendant_pids()
    seen: set[int] = set()

    async def use(fail: bool) -> None:
        async with demo().open(Events()) as tools:
            seen.update(descendant_pids() - before)
            assert seen
            await by_name(tools)["demo_echo"].call({"text": "x"})
            if fail:
                raise RuntimeError("the run failed")

    async def cancel_during_start() -> None:
        task = asyncio.create_task(use(False))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    async def hang() -> None:
        async with demo().open(Events()) as tools:
            seen.update(descendant_pids() - before)
            await by_name(tools)["demo_slow"].call({"seconds": 600})

    async def cancel_mid_call() -> None:
        task = asyncio.create_task(hang())
        await wait_until(lambda: len(descendant_pids() - before) > 0, "the server to start")
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(use(False))
    with pytest.raises(RuntimeError, match="the run failed"):
        run(use(True))
    run(cancel_during_start())
    run(cancel_mid_call())
    assert descendant_pids() <= before
    assert not [pid for pid in seen if pid_alive(pid)]


def test_one_server_object_opened_twice_concurrently_gives_independent_servers() -> None:
    server = demo()

    async def main() -> None:
        async with server.open(Events()) as a, server.open(Events()) as b:
            pa, pb = await asyncio.gather(
                by_name(a)["demo_pid"].call({}), by_name(b)["demo_pid"].call({})
            )
            assert pa != pb
            results = await asyncio.gather(
                *(by_name(a)["demo_echo"].call({"text": str(i)}) for i in range(5))
            )
            assert results == [str(i) for i in range(5)]

    run(main())


def test_calls_after_or_during_close_fail_without_restarting_the_server() -> None:
    before = descendant_pids()

    async def main() -> None:
        async with demo().open(Events()) as tools:
            t = by_name(tools)
            running = asyncio.create_task(t["demo_slow"].call({"seconds": 600}))
            await asyncio.sleep(0)
        with pytest.raises(ToolRetry, match="'demo'"):
            await running
        with pytest.raises(ToolRetry, match="'demo' was shut down"):
            await t["demo_echo"].call({"text": "late"})

    run(main())
    assert descendant_pids() <= before
