"""``load_mcp_config``, default server names and tool-name sanitizing (no servers started)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reactloop import UserError
from reactloop.mcp import MCPServer, load_mcp_config
from reactloop.mcp._names import derive_http_name, derive_stdio_name, tool_names


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_loads_stdio_and_http_servers_in_order(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("DOCS_KEY", "secret")
    path = write(
        tmp_path,
        {
            "mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
                "docs": {
                    "url": "https://mcp.example.com/mcp",
                    "headers": {"Authorization": "Bearer ${DOCS_KEY}"},
                    "timeout": 5,
                },
                "local": {
                    "command": "./srv",
                    "cwd": "sub",
                    "env": {"PORT": 8080},
                    "required": False,
                    "prefix": "",
                },
                "off": {"command": "x", "disabled": True},
                "fallback": {"url": "http://localhost:1/mcp", "headers": {"K": "${NOPE:-dflt}"}},
            }
        },
    )
    time, docs, local, fallback = load_mcp_config(path)
    assert (time.name, time.transport, time.command, time.args) == (
        "time",
        "stdio",
        "uvx",
        ("mcp-server-time",),
    )
    assert time.env == {"TZ": "UTC"} and time.prefix == "time_" and time.timeout == 60
    assert (docs.transport, docs.url, docs.headers) == (
        "http",
        "https://mcp.example.com/mcp",
        {"Authorization": "Bearer secret"},
    )
    assert docs.timeout == 5
    assert local.cwd == str(tmp_path / "sub") and local.env == {"PORT": "8080"}
    assert local.required is False and local.prefix == ""
    assert fallback.headers == {"K": "dflt"}


def test_vscode_servers_key_and_type(tmp_path: Path) -> None:
    path = write(tmp_path, {"servers": {"a": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}})
    (server,) = load_mcp_config(path)
    assert server.transport == "http" and server.name == "a"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", r"is not valid JSON: .* line 1, column 2"),
        ({"servers": []}, r'must be a JSON object with an "mcpServers" object'),
        ({"mcpServers": {"a": []}}, r"server 'a': entry must be a JSON object"),
        ({"mcpServers": {"a": {}}}, r"server 'a': entry needs 'command' .* or 'url'"),
        ({"mcpServers": {"a": {"command": "x", "url": "http://h"}}}, r"server 'a': entry has both"),
        (
            {"mcpServers": {"a": {"command": ""}}},
            r"server 'a': 'command' must be a non-empty string",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "args": "-v"}}},
            r"server 'a': 'args' must be a list of strings",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "env": {"K": None}}}},
            r"server 'a': 'env.K' must be a string",
        ),
        ({"mcpServers": {"b": {"url": "ftp://h"}}}, r"server 'b': 'url' must start with http"),
        (
            {"mcpServers": {"b": {"url": "http://h", "headers": []}}},
            r"server 'b': 'headers' must be an object",
        ),
        (
            {"mcpServers": {"b": {"type": "websocket", "url": "http://h"}}},
            r"server 'b': 'type' must be 'stdio', 'http' or 'sse'",
        ),
        (
            {"mcpServers": {"b": {"url": "http://h", "bearer_token_env": "REACTLOOP_UNSET_VAR"}}},
            r"server 'b': 'bearer_token_env' names \$REACTLOOP_UNSET_VAR, which is not set",
        ),
        (
            {"mcpServers": {"b": {"url": "http://h", "sampling": "yes"}}},
            r"server 'b': 'sampling' must be 'allow', 'ask' or 'deny'",
        ),
        (
            {"mcpServers": {"c": {"command": "x", "timeout": 0}}},
            r"server 'c': 'timeout' must be a positive",
        ),
        (
            {"mcpServers": {"c": {"command": "x", "required": "no"}}},
            r"server 'c': 'required' must be true or false",
        ),
        (
            {"mcpServers": {"d": {"command": "${REACTLOOP_UNSET_VAR}"}}},
            r"server 'd': 'command' uses \$\{REACTLOOP_UNSET_VAR\}",
        ),
    ],
)
def test_bad_files_name_the_server_and_field(tmp_path: Path, content: Any, message: str) -> None:
    path = write(tmp_path, content)
    with pytest.raises(UserError, match=message) as info:
        load_mcp_config(path)
    assert str(path) in str(info.value)


def test_missing_file() -> None:
    with pytest.raises(UserError, match=r"cannot read MCP config 'no/such/mcp\.json'"):
        load_mcp_config("no/such/mcp.json")


@pytest.mark.parametrize(
    ("command", "args", "name"),
    [
        ("mcp-server-time", (), "time"),
        ("/usr/local/bin/mcp-server-git", ("--repository", "."), "git"),
        ("python3", ("-m", "mcp_server_time"), "time"),
        ("uvx", ("mcp-server-fetch",), "fetch"),
        ("uvx", ("--from", "git+https://example.com/x", "mcp-server-git"), "git"),
        ("npx", ("-y", "@modelcontextprotocol/server-filesystem", "/tmp"), "filesystem"),
        ("docker", ("run", "-i", "--rm", "mcp/github"), "github"),
        ("weather-mcp", (), "weather"),
    ],
)
def test_default_stdio_names(command: str, args: tuple[str, ...], name: str) -> None:
    assert derive_stdio_name(command, args) == name


def test_default_http_names() -> None:
    assert derive_http_name("https://mcp.deepwiki.com/mcp") == "deepwiki"
    assert derive_http_name("http://127.0.0.1:8000/mcp") == "127_0_0_1_8000"
    assert derive_http_name("http://localhost:3000/mcp") == "localhost_3000"
    assert MCPServer.http("https://api.example.org/mcp").name == "example"


def test_tool_names_are_safe_short_and_unique() -> None:
    names = tool_names("srv_", ["get time", "get.time", "ok-name", "x" * 100, "x" * 99 + "y"])
    assert names[:3] == ["srv_get_time", "srv_get_time_2", "srv_ok-name"]
    assert all(len(n) <= 64 for n in names) and len(set(names)) == len(names)
    assert all(n.replace("_", "").replace("-", "").isalnum() for n in names)


def test_tool_names_already_prefixed_are_not_prefixed_again() -> None:
    names = tool_names("git_", ["git_status", "git-log", "Git_Diff", "gitignore", "status"])
    assert names == ["git_status", "git-log", "Git_Diff", "git_gitignore", "git_status_2"]
    assert tool_names("time_", ["get_current_time"]) == ["time_get_current_time"]
    assert tool_names("", ["status"]) == ["status"]


def test_include_and_exclude_from_the_config(tmp_path: Path) -> None:
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"git": {
        "command": "mcp-server-git", "include": ["git_*"], "exclude": ["git_reset", "*commit"]}}}))
    (server,) = load_mcp_config(cfg)
    assert server.include == ("git_*",) and server.exclude == ("git_reset", "*commit")
    cfg.write_text(json.dumps({"mcpServers": {"git": {"command": "x", "exclude": "git_reset"}}}))
    with pytest.raises(UserError, match="'exclude' must be a list of strings"):
        load_mcp_config(cfg)


def test_constructor_checks() -> None:
    with pytest.raises(UserError, match="args must be a list of strings"):
        MCPServer.stdio("mcp-server-git", "--repository")  # type: ignore[arg-type]
    with pytest.raises(UserError, match="url must start with http"):
        MCPServer.http("localhost:8000")
    with pytest.raises(UserError, match="timeout must be positive"):
        MCPServer.stdio("x", timeout=0)


def test_import_reactloop_does_not_import_the_sdk() -> None:
    code = (
        "import sys, reactloop, reactloop.mcp, reactloop.cli.mcp\n"
        "from reactloop.mcp import MCPServer, load_mcp_config\n"
        "MCPServer.stdio('mcp-server-time')\n"
        "assert not any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules), 'mcp imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_sdk_is_a_user_error_naming_the_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['mcp'] = None  # as if not installed\n"
        "import importlib.util\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda n, *a: None if n.split('.')[0] == 'mcp' else real(n, *a)\n"
        "from reactloop import UserError\n"
        "from reactloop.mcp import MCPServer\n"
        "try:\n"
        "    MCPServer.stdio('mcp-server-time')\n"
        "except UserError as e:\n"
        "    assert \"pip install 'reactloop[mcp]'\" in str(e), e\n"
        "else:\n"
        "    raise SystemExit('no error')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
