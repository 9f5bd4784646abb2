"""MCP servers over streamable HTTP: the demo server (built with the SDK's server side) run
in a subprocess on a free loopback port, including one that crashes mid-session."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import free_port, run
from reactloop import ToolRetry
from reactloop.mcp import MCPServer, MCPServerError

pytestmark = pytest.mark.slow


def test_tools_over_http(demo_http: Any) -> None:
    port = free_port()
    demo_http(port)

    async def main() -> None:
        server = MCPServer.http(f"http://127.0.0.1:{port}/mcp", headers={"X-Test": "1"})
        assert server.name == f"127_0_0_1_{port}"
        async with server.open(lambda name, data: None) as tools:
            t = {tool.name.removeprefix(server.prefix): tool for tool in tools}
            assert await t["echo"].call({"text": "over http"}) == "over http"
            assert "[image: image/png, 1234 bytes]" in await t["picture_with-odd_name"].call({})
            with pytest.raises(ToolRetry, match="fail"):
                await t["fail"].call({"reason": "no"})

    run(main())


def test_http_server_that_crashes_mid_session(demo_http: Any) -> None:
    port = free_port()
    first = demo_http(port)
    events: list[dict[str, Any]] = []

    async def main() -> None:
        server = MCPServer.http(f"http://127.0.0.1:{port}/mcp", name="web", timeout=30)
        async with server.open(lambda name, data: events.append(data)) as tools:
            t = {tool.name: tool for tool in tools}
            assert await t["web_pid"].call({}) == first.pid
            # the server dies while handling the call: an error naming the server
            with pytest.raises(ToolRetry, match=r"MCP server 'web' stopped .* 'crash'"):
                await t["web_crash"].call({})
            first.wait()
            # it comes back (a supervisor restarted it): reconnected, the call goes through
            second = demo_http(port)
            assert await t["web_pid"].call({}) == second.pid
            assert tools.restarts == 1
            # it goes away for good: the call never reached it, the reconnect fails
            second.kill()
            second.wait()
            with pytest.raises(ToolRetry, match=r"'web' stopped and could not be restarted"):
                await t["web_echo"].call({"text": "anyone?"})
            with pytest.raises(ToolRetry, match=r"'web' stopped and could not be restarted"):
                await t["web_echo"].call({"text": "still down"})

    run(main())
    assert [e["kind"] for e in events] == ["connection_lost", "restarted", "restart_failed"]
    assert "ConnectError" in events[-1]["message"]


def test_unreachable_http_server_fails_fast_or_is_skipped() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there
    events: list[tuple[str, Any]] = []

    async def main(server: MCPServer) -> int:
        async with server.open(lambda name, data: events.append((name, data))) as tools:
            return len(tools)

    with pytest.raises(MCPServerError, match=r"MCP server 'nowhere' .* could not be reached"):
        run(main(MCPServer.http(url, name="nowhere")))
    assert run(main(MCPServer.http(url, name="nowhere", required=False))) == 0
    assert events[0][0] == "mcp_warning" and events[0][1]["kind"] == "skipped"
