"""MCP over the network: the older HTTP+SSE transport and streamable HTTP, with the reference
server (``server-everything sse`` / ``streamableHttp``) and tests/mcp_features_server.py; a
bearer token from the environment through the config file, never printed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from _mcp_servers import EVERYTHING, FEATURES, NPM_HINT, Events, served
from conftest import free_port, require, run
from reactloop import Agent, RunState, ToolCall
from reactloop._redact import redact
from reactloop.mcp import MCPServer, load_mcp_config
from reactloop.testing import ScriptedModel

pytestmark = pytest.mark.slow


async def echo_and_sample(server: MCPServer, prefix: str) -> list[str]:
    model = ScriptedModel([ToolCall(f"{prefix}echo", {"message": "over the wire"}),
                           ToolCall(f"{prefix}trigger-sampling-request", {"prompt": "hi"}),
                           "sampled", "done"])
    result = await Agent(model, mcp_servers=[server]).run("go")
    assert result.state is RunState.COMPLETED, result.output
    return [m.content for m in result.messages if m.role == "tool"]


@pytest.mark.parametrize(("mode", "path"), [("sse", "/sse"), ("streamableHttp", "/mcp")])
def test_the_reference_server_over_sse_and_streamable_http(mode: str, path: str) -> None:
    require(EVERYTHING.exists(), NPM_HINT)
    port = free_port()
    env = {**os.environ, "PORT": str(port)}
    with served([str(EVERYTHING), mode], env=env, port=port):
        url = f"http://127.0.0.1:{port}{path}"
        factory = MCPServer.sse if mode == "sse" else MCPServer.http
        server = factory(url, name="ref", sampling="allow")  # remote: allowed explicitly
        assert server.transport == ("sse" if mode == "sse" else "http")
        echoed, sampled = run(echo_and_sample(server, "ref_"))
    assert echoed == "Echo: over the wire"
    assert '"text": "sampled"' in sampled


def test_a_fastmcp_server_over_sse_with_progress() -> None:
    with served([sys.executable, FEATURES, "--sse", "{port}"]) as port:
        events = Events()

        async def main() -> Any:
            async with MCPServer.sse(f"http://127.0.0.1:{port}/sse").open(events) as tools:
                (work,) = [t for t in tools if t.name.endswith("_work")]
                return await work.call({"steps": 2})

        assert run(main()) == "worked 2 steps"
    assert [p["progress"] for p in events.named("mcp_progress")] == [1, 2]


def test_a_bearer_token_from_the_environment_is_sent_and_never_printed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "tok-3f9a1c7e5b2d8046"
    monkeypatch.setenv("REACTLOOP_TEST_MCP_TOKEN", token)
    env = {**os.environ, "FEATURES_TOKEN": token}
    with served([sys.executable, FEATURES, "--http", "{port}"], env=env) as port:
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {
            "auth": {"url": f"http://127.0.0.1:{port}/mcp",
                     "bearer_token_env": "REACTLOOP_TEST_MCP_TOKEN"},
            "anon": {"url": f"http://127.0.0.1:{port}/mcp"}}}))
        auth, anon = load_mcp_config(config)

        async def whoami(server: MCPServer) -> Any:
            async with server.open() as tools:
                (tool,) = [t for t in tools if t.name.endswith("_whoami")]
                return await tool.call({})

        assert run(whoami(auth)) == "authorized"
        assert run(whoami(anon)) == "anonymous"
    assert token not in repr(auth) and token not in auth.describe()
    assert token not in redact(f"the header was Bearer {token}")
