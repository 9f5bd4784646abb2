"""``load_mcp_config``: the ``mcpServers`` JSON file that Claude Desktop, Cursor and others use.

::

    {"mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        "docs": {"url": "https://mcp.deepwiki.com/mcp", "headers": {"X-Key": "${DOCS_KEY}"}}
    }}

Also accepted: VS Code's ``{"servers": {...}}``, a ``type`` of ``stdio``/``http``/
``streamable-http``, ``"disabled": true`` (skipped), and reactloop's own optional keys
``timeout``, ``required``, ``prefix``, ``include`` and ``exclude`` (lists of tool names or
fnmatch patterns such as ``"git_*"``). Other keys (``autoApprove``…) are ignored.
``${VAR}`` and ``${VAR:-default}`` in strings are replaced from the environment; a relative
``cwd`` is relative to the file.

MCP's client features: ``"type": "sse"`` (the older HTTP+SSE transport),
``"bearer_token_env": "VAR"`` (``Authorization: Bearer`` from the environment; header values
under secret-looking names are redacted everywhere), ``"sampling"`` (``allow``/``ask``/
``deny``), ``"sampling_model"`` (e.g. ``"openai:gpt-4o-mini"``) and ``"resources": false``.

OAuth (HTTP servers): ``"oauth": true``, or an object of settings ``{"scope": "read write",
"callback_port": 33418, "client_name": "my-app"}`` (all optional). Log in once with
``reactloop mcp login NAME --config FILE``; runs use and refresh the stored tokens
(:mod:`reactloop.mcp._oauth`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from reactloop.errors import UserError
from reactloop.mcp._tool_source import MCPServer

__all__ = ["load_mcp_config"]

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_HTTP_TYPES = {"http", "streamable-http", "streamable_http", "streamableHttp"}


def load_mcp_config(path: str | os.PathLike[str]) -> list[MCPServer]:
    """The servers of an ``mcpServers`` JSON file, in file order.

    Raises:
        UserError: the file cannot be read or parsed, or an entry is malformed; the message
            names the file, the server and the field.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read MCP config {str(file)!r}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"MCP config {str(file)!r} is not valid JSON: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}"
        ) from None
    servers = _servers_object(data, file)
    out = []
    for name, entry in servers.items():
        server = _server(name, entry, _Where(file, name))
        if server is not None:
            out.append(server)
    return out


class _Where:
    """Formats errors that name the file, the server and the field."""

    def __init__(self, file: Path, name: str) -> None:
        self.file, self.name = file, name

    def error(self, field: str, problem: str) -> UserError:
        return UserError(f"MCP config {str(self.file)!r}: server {self.name!r}: {field} {problem}")


def _servers_object(data: Any, file: Path) -> dict[str, Any]:
    key = "mcpServers" if isinstance(data, dict) and "mcpServers" in data else "servers"
    servers = data.get(key) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise UserError(
            f'MCP config {str(file)!r} must be a JSON object with an "mcpServers" object '
            '(e.g. {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}})'
        )
    return servers


def _server(name: str, entry: Any, where: _Where) -> MCPServer | None:
    if not isinstance(entry, dict):
        raise where.error("entry", f"must be a JSON object, got {type(entry).__name__}")
    if entry.get("disabled") is True:
        return None
    kind = entry.get("type")
    if kind is not None and kind not in _HTTP_TYPES | {"stdio", "sse"}:
        raise where.error("'type'", f"must be 'stdio', 'http' or 'sse', got {kind!r}")
    has_command, has_url = "command" in entry, "url" in entry
    if has_command and has_url:
        raise where.error("entry", "has both 'command' and 'url'; give one")
    if not has_command and not has_url:
        raise where.error("entry", "needs 'command' (a local server) or 'url' (a remote one)")
    options = _options(entry, where)
    if has_url:
        url = _string(entry, "url", where)
        if not url.startswith(("http://", "https://")):
            raise where.error("'url'", f"must start with http:// or https://, got {url!r}")
        headers = _with_bearer(_string_map(entry, "headers", where), entry, where)
        factory = MCPServer.sse if kind == "sse" else MCPServer.http
        return factory(url, headers=headers, name=name, **options)
    cwd = _string(entry, "cwd", where, required=False)
    return MCPServer.stdio(
        _string(entry, "command", where),
        args=_string_list(entry, "args", where),
        env=_string_map(entry, "env", where),
        cwd=str(where.file.parent / cwd) if cwd else None,
        name=name,
        **options,
    )


def _options(entry: dict[str, Any], where: _Where) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "timeout" in entry:
        value = entry["timeout"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise where.error("'timeout'", f"must be a positive number of seconds, got {value!r}")
        out["timeout"] = float(value)
    if "required" in entry:
        if not isinstance(entry["required"], bool):
            raise where.error("'required'", f"must be true or false, got {entry['required']!r}")
        out["required"] = entry["required"]
    if "prefix" in entry:
        out["prefix"] = _string(entry, "prefix", where, allow_empty=True)
    for key in ("include", "exclude"):
        if key in entry:
            out[key] = _string_list(entry, key, where)
    if "sampling" in entry:
        if entry["sampling"] not in ("allow", "ask", "deny"):
            raise where.error("'sampling'", f"must be 'allow', 'ask' or 'deny', got "
                                            f"{entry['sampling']!r}")
        out["sampling"] = entry["sampling"]
    if "sampling_model" in entry:
        out["sampling_model"] = _string(entry, "sampling_model", where)
    if "resources" in entry:
        if not isinstance(entry["resources"], bool):
            raise where.error("'resources'", f"must be true or false, got {entry['resources']!r}")
        out["resources"] = entry["resources"]
    if "oauth" in entry:
        out["oauth"] = _oauth(entry, where)
    return out


def _oauth(entry: dict[str, Any], where: _Where) -> dict[str, Any] | None:
    """``"oauth": true`` or an object of settings (scope, callback_port, client_name)."""
    value = entry["oauth"]
    if value is False or value is None:
        return None
    if "url" not in entry:
        raise where.error("'oauth'", "is for remote servers (with 'url'); a local server "
                                     "gets its credentials from 'env'")
    if value is True:
        value = {}
    if not isinstance(value, dict) or "storage" in value:
        raise where.error("'oauth'", "must be true or an object with 'scope', "
                                     f"'callback_port' or 'client_name', got {value!r}")
    from reactloop.mcp._oauth import oauth_option

    settings = {**value, "config_file": str(where.file)}
    try:
        oauth_option(where.name, settings)
    except UserError as exc:
        raise where.error("'oauth'", str(exc).split(": ", 1)[-1]) from None
    return settings


def _with_bearer(headers: dict[str, str] | None, entry: dict[str, Any], where: _Where
                 ) -> dict[str, str] | None:
    """``"bearer_token_env": "VAR"``: ``Authorization: Bearer <$VAR>`` (the value is read
    from the environment and never printed; an unset variable is an error naming it)."""
    if "bearer_token_env" not in entry:
        return headers
    var = _string(entry, "bearer_token_env", where)
    token = os.environ.get(var, "").strip()
    if not token:
        raise where.error("'bearer_token_env'", f"names ${var}, which is not set in the "
                                                "environment")
    return {**(headers or {}), "Authorization": f"Bearer {token}"}


def _string(
    entry: dict[str, Any],
    key: str,
    where: _Where,
    *,
    required: bool = True,
    allow_empty: bool = False,
) -> str:
    value = entry.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (not value.strip() and not allow_empty):
        raise where.error(f"'{key}'", f"must be a non-empty string, got {value!r}")
    return _expand(value, f"'{key}'", where)


def _string_list(entry: dict[str, Any], key: str, where: _Where) -> list[str]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise where.error(f"'{key}'", f"must be a list of strings, got {value!r}")
    return [_expand(v, f"'{key}'", where) for v in value]


def _string_map(entry: dict[str, Any], key: str, where: _Where) -> dict[str, str] | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise where.error(f"'{key}'", f"must be an object of strings, got {value!r}")
    out = {}
    for k, v in value.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            v = str(v)  # {"PORT": 8080} is common and harmless
        if not isinstance(v, str):
            raise where.error(f"'{key}.{k}'", f"must be a string, got {v!r}")
        out[k] = _expand(v, f"'{key}.{k}'", where)
    return out


def _expand(value: str, field: str, where: _Where) -> str:
    def one(match: re.Match[str]) -> str:
        var, default = match.group(1), match.group(2)
        if var in os.environ:
            return os.environ[var]
        if default is not None:
            return default
        raise where.error(field, f"uses ${{{var}}}, which is not set in the environment")

    return _VAR.sub(one, value)
