"""The MCP login file (``mcp-oauth.json``): writers in several processes (or threads) each keep
what the others wrote, and a malformed file is one line naming it and the fix, in the CLI and
in Python."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _cli import reactloop
from conftest import run
from reactloop import Agent, RunState
from reactloop.errors import UserError
from reactloop.mcp import MCPServer, _oauth
from reactloop.mcp._oauth import TokenFile, stored_logins
from reactloop.testing import ScriptedModel


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("REACTLOOP_CONFIG_DIR", str(folder))
    return folder


def test_two_writers_refreshing_different_servers_keep_both_tokens(
        config_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A has read the file and not yet written it when B updates its own server: B waits for
    A (the file lock), so neither loses the other's rotated refresh token."""
    b_at_the_lock = threading.Event()  # set when B is about to lock (without a lock: B is done)
    real_load, real_lock = _oauth._load, getattr(_oauth, "_file_lock", contextlib.nullcontext)
    first_read: list[bool] = []

    def load() -> dict[str, Any]:
        data = real_load()
        if threading.current_thread().name == "A" and not first_read:
            first_read.append(True)
            b.start()  # B writes while A holds what it read
            assert b_at_the_lock.wait(60)  # the bound only turns a hang into a failure
        return data

    @contextlib.contextmanager
    def lock() -> Iterator[None]:
        if threading.current_thread().name == "B":
            b_at_the_lock.set()
        with real_lock():
            yield

    def write_b() -> None:
        TokenFile("http://b/mcp", "b").update(tokens={"refresh_token": "rt-b-rotated"})
        b_at_the_lock.set()

    monkeypatch.setattr(_oauth, "_load", load)
    monkeypatch.setattr(_oauth, "_file_lock", lock, raising=False)
    b = threading.Thread(target=write_b, name="B")
    a = threading.Thread(target=lambda: TokenFile("http://a/mcp", "a").update(
        tokens={"refresh_token": "rt-a-rotated"}), name="A")
    a.start()
    a.join(60)
    b.join(60)
    assert first_read and not a.is_alive() and not b.is_alive()
    data = json.loads((config_dir / "mcp-oauth.json").read_text())
    assert {url: entry["tokens"]["refresh_token"] for url, entry in data.items()} == {
        "http://a/mcp": "rt-a-rotated", "http://b/mcp": "rt-b-rotated"}


@pytest.mark.parametrize(("entry", "problem"), [
    ({"name": "x", "tokens": ["x"]}, "has 'tokens' that is not an object"),
    ({"name": "x", "client": "c"}, "has 'client' that is not an object"),
    ({"name": "x", "expires_at": "soon"}, "has 'expires_at' that is not a number"),
    ({"name": 3}, "has 'name' that is not a string"),
    ("x", "must be an object"),
])
def test_a_malformed_entry_is_a_user_error_naming_the_file(config_dir: Path, entry: Any,
                                                           problem: str) -> None:
    config_dir.mkdir()
    path = config_dir / "mcp-oauth.json"
    path.write_text(json.dumps({"http://x/mcp": entry}))
    for reads in (stored_logins, TokenFile("http://x/mcp", "x").entry):
        with pytest.raises(UserError) as caught:
            reads()
        assert str(caught.value) == (f"the MCP login file {path} is malformed: the entry of "
                                     f"http://x/mcp {problem}; remove the file and log in again")


def test_keys_list_with_a_malformed_login_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "config" / "reactloop" / "mcp-oauth.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"http://x/mcp": {"name": "x", "tokens": ["x"]}}))
    done = reactloop(tmp_path, "keys", "list")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert f"the MCP login file {path} is malformed" in line
    assert line.endswith("remove the file and log in again")


def test_a_run_with_a_malformed_login_file_ends_in_one_line(config_dir: Path) -> None:
    config_dir.mkdir()
    (config_dir / "mcp-oauth.json").write_text(json.dumps({"http://127.0.0.1:1/mcp": {
        "name": "x", "tokens": ["x"]}}))
    server = MCPServer.http("http://127.0.0.1:1/mcp", name="x", oauth=True)
    result = run(Agent(ScriptedModel(["x"]), mcp_servers=[server]).run("hi"))
    assert result.state is RunState.ERROR
    message = str(result.error)
    assert "\n" not in message and "mcp-oauth.json is malformed" in message
