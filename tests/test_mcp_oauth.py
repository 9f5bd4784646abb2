"""OAuth for remote MCP servers, through the official SDK's client auth, against a real server
(tests/mcp_oauth_server.py: the SDK's own server auth, served by uvicorn on loopback, approving
every authorization): a login stores the tokens, runs reuse them without a new authorization,
an expired access token is refreshed, missing or unrefreshable tokens end a run with one line
naming ``reactloop mcp login``, and the CLI's login path works end to end."""

from __future__ import annotations

import asyncio
import json
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import httpx
import pytest

from _cli import cli_env, reactloop
from _mcp_servers import FEATURES, served
from conftest import run
from reactloop import Agent, RunState, ToolCall
from reactloop.errors import UserError
from reactloop.mcp import MCPServer, MCPServerError, load_mcp_config
from reactloop.testing import ScriptedModel

pytestmark = pytest.mark.slow

OAUTH_SERVER = str(Path(__file__).with_name("mcp_oauth_server.py"))


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with served([sys.executable, OAUTH_SERVER, "--http", "{port}"]) as port:
        yield port


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("REACTLOOP_CONFIG_DIR", str(folder))
    return folder


def follow(url: str) -> None:
    """What a browser does: open the authorization URL (the server approves at once and
    redirects) and follow the redirect to reactloop's loopback listener."""
    with httpx.Client(timeout=30) as http:
        answer = http.get(url)
        assert answer.status_code == 302, answer.text
        done = http.get(answer.headers["location"])
        assert done.status_code == 200, done.text


async def afollow(url: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.get(url)
        assert answer.status_code == 302, answer.text
        done = await http.get(answer.headers["location"])
        assert done.status_code == 200, done.text


def config(tmp_path: Path, port: int, oauth: Any = True) -> Path:
    file = tmp_path / "mcp.json"
    file.write_text(json.dumps({"mcpServers": {
        "demo": {"url": f"http://127.0.0.1:{port}/mcp", "oauth": oauth}}}))
    return file


def whoami(server: MCPServer, events: list[Any] | None = None) -> str:
    """Run an agent that calls the server's ``whoami``; what the tool answered."""
    model = ScriptedModel([ToolCall("demo_whoami", {}), "done"])
    agent = Agent(model, mcp_servers=[server])

    async def go() -> None:
        async for event in agent.stream("who am I?"):
            (events if events is not None else []).append(event)
            if event.type == "run_end":
                assert event.result.state is RunState.COMPLETED, event.result.output

    run(go())
    (call,) = [m for m in model.requests[-1].messages if m.role == "tool"]
    return call.content


def failed(server: MCPServer) -> str:
    """A run that cannot use the server: it ends in the ERROR state; its error."""
    result = run(Agent(ScriptedModel(["x"]), mcp_servers=[server]).run("hi"))
    assert result.state is RunState.ERROR
    assert isinstance(result.error, MCPServerError)
    return str(result.error)


def stored(config_dir: Path) -> dict[str, Any]:
    (entry,) = json.loads((config_dir / "mcp-oauth.json").read_text()).values()
    return entry


def test_login_then_runs_reuse_and_refresh_the_tokens(tmp_path: Path, port: int,
                                                       config_dir: Path) -> None:
    (server,) = load_mcp_config(config(tmp_path, port))
    assert server.oauth is not None

    # no tokens yet: the run ends at once, one line naming the login command
    message = failed(server)
    assert "\n" not in message
    assert f"reactloop mcp login demo --config {tmp_path / 'mcp.json'}" in message

    assert run(server.login(redirect_handler=afollow)) == 1  # the server's one tool
    entry = stored(config_dir)
    assert entry["name"] == "demo" and entry["tokens"]["refresh_token"]
    assert stat.S_IMODE((config_dir / "mcp-oauth.json").stat().st_mode) == 0o600
    first = entry["tokens"]["access_token"]

    events: list[Any] = []
    assert whoami(server, events).startswith("authorized; authorizations=1; refreshes=0")
    assert first not in repr(events)  # the token is in no event
    # a second run (a new connection) reuses the tokens: no new authorization
    assert whoami(server).startswith("authorized; authorizations=1; refreshes=0")

    # the access token expired: the next run refreshes it first (the old one stops working)
    entry = stored(config_dir)
    data = {f"http://127.0.0.1:{port}/mcp": {**entry, "expires_at": time.time() - 60}}
    (config_dir / "mcp-oauth.json").write_text(json.dumps(data))
    assert whoami(server).startswith("authorized; authorizations=1; refreshes=1")
    refreshed = stored(config_dir)
    assert refreshed["tokens"]["access_token"] != first
    assert refreshed["expires_at"] > time.time()

    # expired and the refresh token is refused: one line, the login command, no authorization
    data = {f"http://127.0.0.1:{port}/mcp": {
        **refreshed, "expires_at": time.time() - 60,
        "tokens": {**refreshed["tokens"], "refresh_token": "rt-revoked-0000000000"}}}
    (config_dir / "mcp-oauth.json").write_text(json.dumps(data))
    message = failed(server)
    assert "\n" not in message and "could not be refreshed" in message
    assert "reactloop mcp login demo --config" in message


def test_the_oauth_option_is_checked(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="oauth is for HTTP servers"):
        MCPServer.stdio("x", oauth=True)
    with pytest.raises(UserError, match="callback_port must be a port"):
        MCPServer.http("http://127.0.0.1:1/mcp", oauth={"callback_port": 0})
    with pytest.raises(UserError, match="unknown setting"):
        MCPServer.http("http://127.0.0.1:1/mcp", oauth={"scopes": "a"})
    file = tmp_path / "mcp.json"
    file.write_text(json.dumps({"mcpServers": {"x": {"command": "x", "oauth": True}}}))
    with pytest.raises(UserError, match="'oauth' is for remote servers"):
        load_mcp_config(file)
    file.write_text(json.dumps({"mcpServers": {"x": {"url": "http://h/mcp", "oauth": 1}}}))
    with pytest.raises(UserError, match="'oauth' must be true or an object"):
        load_mcp_config(file)
    (server,) = load_mcp_config(config(tmp_path, 1, {"scope": "mcp", "callback_port": 40111}))
    assert server.oauth is not None
    assert (server.oauth.scope, server.oauth.callback_port) == ("mcp", 40111)


def test_the_cli_logs_in_lists_and_deletes_the_login(tmp_path: Path, port: int) -> None:
    file = config(tmp_path, port)
    env = cli_env(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "reactloop", "mcp", "login", "demo",
                             "--config", str(file), "--no-browser"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("http://"):
            follow(line.strip())
            break
    out, err = proc.communicate(timeout=120)
    err = "".join(lines) + err
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert "logged in to MCP server 'demo' (1 tools)" in err
    tokens = (tmp_path / "config" / "reactloop" / "mcp-oauth.json").read_text()
    access = json.loads(tokens)[f"http://127.0.0.1:{port}/mcp"]["tokens"]["access_token"]
    assert access not in err + out

    listed = reactloop(tmp_path, "keys", "list")
    assert f"mcp:demo  http://127.0.0.1:{port}/mcp  (OAuth: access token valid for" in (
        listed.stdout)
    assert access not in listed.stdout
    assert reactloop(tmp_path, "keys", "delete", "mcp:demo").returncode == 0
    assert "mcp:demo" not in reactloop(tmp_path, "keys", "list").stdout

    # logged out: a run against the server ends in one line naming the login command
    done = reactloop(tmp_path, "run", "-m", "openai:gpt-test", "--base-url",
                     "http://127.0.0.1:1/v1", "--mcp", str(file), "hi",
                     OPENAI_API_KEY="sk-test-00000000000000000000")
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert f"`reactloop mcp login demo --config {file}`" in line


def test_a_cli_login_nobody_completes_ends_with_one_line(tmp_path: Path, port: int) -> None:
    done = reactloop(tmp_path, "mcp", "login", "demo", "--config", str(config(tmp_path, port)),
                     "--no-browser", "--timeout", "1")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    *shown, last = done.stderr.strip().splitlines()
    assert shown[-1].startswith(f"http://127.0.0.1:{port}/authorize?")
    assert last.startswith("reactloop: no login redirect arrived within 1 s")


def test_a_cli_login_to_an_unknown_server_or_a_non_oauth_one_is_one_line(
        tmp_path: Path) -> None:
    file = tmp_path / "mcp.json"
    file.write_text(json.dumps({"mcpServers": {"plain": {"url": "http://127.0.0.1:1/mcp"}}}))
    for args, text in ((["nope", "--config", str(file)], "no MCP server named 'nope'"),
                       (["plain", "--config", str(file)], "does not use OAuth"),
                       (["plain"], "is not a URL")):
        done = reactloop(tmp_path, "mcp", "login", *args)
        assert done.returncode == 1
        assert done.stderr.strip().count("\n") == 0 and text in done.stderr, done.stderr


def callback_of(url: str) -> tuple[str, int]:
    """The host and port of the loopback listener an authorization URL redirects to."""
    redirect = urlparse(parse_qs(urlparse(url).query)["redirect_uri"][0])
    assert redirect.hostname is not None and redirect.port is not None
    return redirect.hostname, redirect.port


def test_an_idle_connection_to_the_callback_does_not_hold_the_login(
        tmp_path: Path, port: int, config_dir: Path) -> None:
    """A browser's speculative preconnect opens a connection and sends nothing: the login
    still ends, and closes it (from Python 3.12.1 ``Server.wait_closed`` waits for every open
    connection, so one left open would hold the login forever)."""
    (server,) = load_mcp_config(config(tmp_path, port))
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def preconnect_then_follow(url: str) -> None:
        idle.append(await asyncio.open_connection(*callback_of(url)))  # sends nothing
        await afollow(url)

    async def go() -> bytes:
        assert await server.login(redirect_handler=preconnect_then_follow) == 1
        reader, writer = idle[0]
        try:  # the bound only turns a hang into a failure
            return await asyncio.wait_for(reader.read(), 60)
        finally:
            writer.close()

    assert run(go()) == b""  # the listener closed the idle connection


def test_the_callback_listener_drops_a_connection_that_sends_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from reactloop.mcp import _oauth_flow

    monkeypatch.setattr(_oauth_flow, "READ_TIMEOUT", 0)  # the bound is over at once

    async def go() -> bytes:
        listener = _oauth_flow._Callback()
        await listener.start(0)
        try:
            reader, writer = await asyncio.open_connection(
                *callback_of("http://x/?redirect_uri=" + listener.redirect_uri))
            try:
                return await asyncio.wait_for(reader.read(), 60)
            finally:
                writer.close()
        finally:
            await listener.close()

    assert run(go()) == b""


def test_a_redirect_without_the_logins_state_can_neither_end_nor_complete_it(
        tmp_path: Path, port: int, config_dir: Path) -> None:
    """Any page can send the browser to the loopback listener; only a redirect carrying the
    authorization URL's ``state`` counts."""
    (server,) = load_mcp_config(config(tmp_path, port))
    refused: list[httpx.Response] = []

    async def forge_then_follow(url: str) -> None:
        host, callback = callback_of(url)
        async with httpx.AsyncClient(timeout=30) as http:
            for query in ({"error": "access_denied"}, {"code": "forged"},
                          {"error": "access_denied", "state": "not-this-one"},
                          {"code": "forged", "state": "not-this-one"}):
                refused.append(await http.get(f"http://{host}:{callback}/callback?"
                                              + urlencode(query)))
        await afollow(url)

    assert run(server.login(redirect_handler=forge_then_follow)) == 1  # the real one counted
    assert [r.status_code for r in refused] == [400] * 4
    assert all("state does not match" in r.text for r in refused)
    assert stored(config_dir)["tokens"]["access_token"]


def test_a_refusals_reason_is_escaped_in_the_page_and_cleaned_on_the_terminal(
        tmp_path: Path, port: int, config_dir: Path) -> None:
    (server,) = load_mcp_config(config(tmp_path, port))
    pages: list[httpx.Response] = []
    reason = "<script>alert(1)</script>\x1b[2J\x1b]0;pwned\x07\r\nfake line\u202e" + "x" * 5000

    async def refuse(url: str) -> None:
        host, callback = callback_of(url)
        state = parse_qs(urlparse(url).query)["state"][0]
        async with httpx.AsyncClient(timeout=30) as http:
            pages.append(await http.get(f"http://{host}:{callback}/callback?" + urlencode({
                "state": state, "error": "access_denied", "error_description": reason})))

    with pytest.raises(UserError, match="refused the login: <script>") as caught:
        run(server.login(redirect_handler=refuse))
    (page,) = pages
    assert page.status_code == 400
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text and "<script>" not in page.text
    message = str(caught.value)
    assert message.isprintable() and "fake line" in message  # one line, no escape sequences
    assert len(message) < 500 and message.endswith("…")


class Memory:
    """A token store of one's own (``oauth={"storage": ...}``): the SDK's TokenStorage."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client

    async def set_client_info(self, client_info: Any) -> None:
        self.client = client_info


def test_the_sse_transport_and_a_storage_of_ones_own(tmp_path: Path, config_dir: Path) -> None:
    memory = Memory()
    with served([sys.executable, OAUTH_SERVER, "--sse", "{port}"]) as sse_port:
        server = MCPServer.sse(f"http://127.0.0.1:{sse_port}/sse", name="demo",
                               oauth={"storage": memory})
        assert run(server.login(redirect_handler=afollow)) == 1
        assert memory.tokens is not None and memory.client is not None
        assert whoami(server).startswith("authorized; authorizations=1")
    assert not (config_dir / "mcp-oauth.json").exists()  # nothing went to the file


def test_a_login_to_a_server_that_asks_for_none_stores_nothing_and_says_so(
        config_dir: Path) -> None:
    with served([sys.executable, FEATURES, "--http", "{port}"]) as plain:
        server = MCPServer.http(f"http://127.0.0.1:{plain}/mcp", name="plain", oauth=True)
        with pytest.raises(UserError, match="answered without asking for a login"):
            run(server.login(redirect_handler=afollow))
    assert not (config_dir / "mcp-oauth.json").exists()
