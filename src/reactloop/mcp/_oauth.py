"""OAuth for remote MCP servers: the settings, the token store and what a run says when a login
is needed. The flow itself is the official SDK's (:mod:`reactloop.mcp._oauth_flow`).

A server entry says it uses OAuth with ``"oauth": true`` (or an object of settings, below) in
the ``mcpServers`` file, or ``MCPServer.http(url, oauth=True)`` in Python. Log in ahead of time
with ``reactloop mcp login NAME --config FILE`` (or ``await server.login()``): the
authorization URL is printed (and opened in a browser when there is one), a loopback port
receives the redirect, and the tokens are stored. Runs then send the access token, refresh it
when it expires, and never open a browser: a server whose tokens are missing, or expired and
not refreshable, ends the run with one line naming the login command.

Tokens and the client registration live in ``mcp-oauth.json`` beside ``reactloop keys``'
``keys.json`` (the user's config directory, mode 0600), keyed by the server's URL. They are
never printed: every value read or written is registered for redaction, ``reactloop keys
list`` names the servers only, and ``reactloop keys delete mcp:NAME`` removes a login.

Values only: this module imports neither the SDK nor anything that does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reactloop._keys import config_dir, write_private
from reactloop._redact import add_secret
from reactloop.errors import UserError

__all__ = ["LoginRequired", "OAuth", "TokenFile", "delete_logins", "login_command",
           "login_needed", "oauth_option", "stored_logins", "tokens_path"]

_KEYS = ("scope", "callback_port", "client_name", "storage")


@dataclass(frozen=True)
class OAuth:
    """How reactloop signs in to one server (``oauth=True`` gives the defaults)."""

    scope: str | None = None
    """The scopes to ask for, space-separated (default: what the server says it needs)."""
    callback_port: int | None = None
    """The loopback port of ``http://127.0.0.1:PORT/callback`` during a login (default: the
    port of the stored registration, else any free port)."""
    client_name: str = "reactloop"
    """The name the client registers under (dynamic client registration)."""
    storage: Any = None
    """Where tokens live: an object with the SDK's ``TokenStorage`` methods
    (``get_tokens``/``set_tokens``/``get_client_info``/``set_client_info``, async), and
    optionally ``expires_at() -> float | None`` (when the stored access token expires, so a
    new process refreshes it first); default the file (:func:`tokens_path`)."""
    config_file: str | None = None
    """The ``mcpServers`` file the server came from (named in the login hint)."""


def oauth_option(name: str, value: Any) -> OAuth | None:
    """The ``oauth=`` option checked: ``True``/``False``/``None``, an :class:`OAuth` or a
    mapping of its fields; a :class:`UserError` names the server and the problem."""
    if value is None or value is False:
        return None
    if value is True:
        return OAuth()
    if isinstance(value, OAuth):
        return value
    if not isinstance(value, Mapping):
        raise UserError(f"MCP server {name!r}: oauth must be true or an object of settings "
                        f"({', '.join(_KEYS[:3])}), got {value!r}")
    unknown = set(value) - set(_KEYS) - {"config_file"}
    if unknown:
        raise UserError(f"MCP server {name!r}: oauth: unknown setting(s) "
                        f"{', '.join(sorted(unknown))}; use {', '.join(_KEYS[:3])}")
    scope, port = value.get("scope"), value.get("callback_port")
    if scope is not None and (not isinstance(scope, str) or not scope.strip()):
        raise UserError(f"MCP server {name!r}: oauth.scope must be a non-empty string of "
                        f"space-separated scopes, got {scope!r}")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int)
                             or not 0 < port < 65536):
        raise UserError(f"MCP server {name!r}: oauth.callback_port must be a port number "
                        f"(1-65535), got {port!r}")
    client_name = value.get("client_name", "reactloop")
    if not isinstance(client_name, str) or not client_name.strip():
        raise UserError(f"MCP server {name!r}: oauth.client_name must be a non-empty string, "
                        f"got {client_name!r}")
    return OAuth(scope=scope, callback_port=port, client_name=client_name,
                 storage=value.get("storage"), config_file=value.get("config_file"))


class LoginRequired(UserError):
    """A server needs a (new) login before a run can use it; the message names the command."""


def login_command(name: str, url: str, config_file: str | None) -> str:
    """The command that logs in to this server."""
    if config_file:
        return f"reactloop mcp login {name} --config {config_file}"
    return f"reactloop mcp login {url}"


def login_required(name: str, url: str, oauth: OAuth, why: str) -> LoginRequired:
    python = "" if oauth.config_file else " (in Python: `await server.login()`)"
    return LoginRequired(f"MCP server {name!r} ({url}) {why}: log in with "
                         f"`{login_command(name, url, oauth.config_file)}`{python}")


def login_needed(exc: BaseException | None) -> LoginRequired | None:
    """The :class:`LoginRequired` inside ``exc`` (an exception group, a cause), if any."""
    seen = 0
    while exc is not None and seen < 20:
        seen += 1
        if isinstance(exc, LoginRequired):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                found = login_needed(inner)
                if found is not None:
                    return found
            return None
        exc = exc.__cause__ or exc.__context__
    return None


# -- the file -----------------------------------------------------------------------------------
def tokens_path() -> Path:
    """``mcp-oauth.json`` in the user's config directory (beside ``keys.json``)."""
    return config_dir() / "mcp-oauth.json"


def _load() -> dict[str, dict[str, Any]]:
    path = tokens_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the MCP login file {path}: {exc}; remove it and log in "
                        "again") from None
    if not isinstance(data, dict):
        raise UserError(f"the MCP login file {path} must hold a JSON object; remove it and log "
                        "in again")
    for url, entry in data.items():
        problem = _malformed(entry)
        if problem:
            raise UserError(f"the MCP login file {path} is malformed: the entry of {url} "
                            f"{problem}; remove the file and log in again")
    return data


def _malformed(entry: Any) -> str | None:
    """What is wrong with one entry of the file (None: nothing)."""
    if not isinstance(entry, dict):
        return "must be an object"
    for key in ("tokens", "client"):
        if entry.get(key) is not None and not isinstance(entry[key], dict):
            return f"has {key!r} that is not an object"
    expires = entry.get("expires_at")
    if expires is not None and (isinstance(expires, bool)
                                or not isinstance(expires, (int, float))):
        return "has 'expires_at' that is not a number"
    if not isinstance(entry.get("name", ""), str):
        return "has 'name' that is not a string"
    return None


@contextmanager
def _file_lock() -> Iterator[None]:
    """One read-modify-write of the file at a time, across processes (two runs refreshing
    the tokens of different servers would otherwise lose one's rotated refresh token)."""
    from reactloop.sessions._filelock import held

    path = tokens_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with held(path.with_name(f".{path.name}.lock")):
        yield


def _save(data: Mapping[str, Any]) -> None:
    write_private(tokens_path(), json.dumps(dict(sorted(data.items())), indent=2) + "\n")


def _register(entry: Mapping[str, Any]) -> None:
    """Every secret of an entry is registered for redaction."""
    tokens, client = entry.get("tokens") or {}, entry.get("client") or {}
    for value in (tokens.get("access_token"), tokens.get("refresh_token"),
                  client.get("client_secret")):
        add_secret(value)


class TokenFile:
    """The SDK's ``TokenStorage`` for one server, in :func:`tokens_path`.

    ``expires_at`` (an absolute time) is stored beside the tokens, so a later process knows an
    access token expired and refreshes it before using it."""

    def __init__(self, url: str, name: str) -> None:
        self.url, self.name = url, name

    def entry(self) -> dict[str, Any]:
        entry = _load().get(self.url, {})
        _register(entry)
        return entry

    def update(self, **values: Any) -> None:
        with _file_lock():
            data = _load()
            entry = {**data.get(self.url, {}), **values, "name": self.name}
            _register(entry)
            data[self.url] = entry
            _save(data)

    def expires_at(self) -> float | None:
        value = self.entry().get("expires_at")
        return float(value) if isinstance(value, (int, float)) else None

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        tokens = self.entry().get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens: Any) -> None:
        expires = time.time() + tokens.expires_in if tokens.expires_in else None
        self.update(tokens=tokens.model_dump(mode="json", exclude_none=True),
                    expires_at=expires)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        client = self.entry().get("client")
        return OAuthClientInformationFull.model_validate(client) if client else None

    async def set_client_info(self, client_info: Any) -> None:
        self.update(client=client_info.model_dump(mode="json", exclude_none=True))


def stored_logins() -> list[dict[str, Any]]:
    """The stored logins, values left out: ``name``, ``url``, ``expires_at`` (or None),
    ``refreshable`` (a refresh token is stored), ``tokens`` (any are stored)."""
    out = []
    for url, entry in sorted(_load().items()):
        tokens = entry.get("tokens") or {}
        out.append({"name": str(entry.get("name", "")), "url": url,
                    "expires_at": entry.get("expires_at"), "tokens": bool(tokens),
                    "refreshable": bool(tokens.get("refresh_token"))})
    return out


def delete_logins(which: str) -> list[str]:
    """Remove the logins of the server named ``which`` (or at that URL); their URLs."""
    if not tokens_path().exists():
        return []
    with _file_lock():
        data = _load()
        gone = [url for url, entry in data.items() if which in (url, entry.get("name"))]
        for url in gone:
            del data[url]
        if gone:
            _save(data)
    return gone
