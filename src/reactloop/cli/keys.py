"""``reactloop keys``: API keys stored in a file only the user can read (see
:mod:`reactloop.cli._config_files`); environment variables still win. The OAuth logins of MCP
servers (``reactloop mcp login``, :mod:`reactloop.mcp._oauth`) are listed and deleted here
too, as ``mcp:NAME``; their tokens are never shown."""

from __future__ import annotations

import os
import sys

import click

from reactloop.cli._console import fail

__all__ = ["keys_group"]


@click.group("keys")
def keys_group() -> None:
    """Store API keys (in a file only you can read; environment variables still win)."""


@keys_group.command("set")
@click.argument("name")
@click.option("--value", help="The key (default: prompted for, hidden, or read from stdin).")
def keys_set(name: str, value: str | None) -> None:
    """Store the key NAME: a provider (openai, anthropic, gemini) or a variable name."""
    from reactloop.cli._config_files import key_variable, load_keys, save_keys
    from reactloop.errors import UserError

    try:
        var = key_variable(name)
        keys = load_keys()
    except UserError as exc:
        fail(str(exc))
    if value is None:
        if sys.stdin.isatty():
            value = click.prompt(f"{var}", hide_input=True)
        else:
            value = sys.stdin.readline().strip()
    if not value:
        fail("the key is empty; nothing stored")
    from reactloop._keys import check_key

    check_key(value, f"the key for {var}")  # a wrong key: one line (the group's error path)
    keys[var] = value
    path = save_keys(keys)
    click.echo(f"stored {var} in {path}", err=True)


@keys_group.command("list")
def keys_list() -> None:
    """The stored keys' names (never their values)."""
    from reactloop.cli._config_files import load_keys

    for var in sorted(load_keys()):
        note = " (the environment variable is set and wins)" if os.environ.get(var) else ""
        click.echo(f"{var}{note}")
    from reactloop.mcp._oauth import stored_logins

    for login in stored_logins():
        click.echo(f"mcp:{login['name']}  {login['url']}  (OAuth: {_login_state(login)})")


def _login_state(login: dict[str, object]) -> str:
    """What is stored for one MCP login, without any value."""
    import time

    if not login["tokens"]:
        return "client registered, not logged in"
    expires = login["expires_at"]
    if not isinstance(expires, (int, float)):
        state = "access token"
    elif expires > time.time():
        state = f"access token valid for {max(1, round((expires - time.time()) / 60))} min"
    else:
        state = "access token expired"
    return state + (", refresh token" if login["refreshable"] else ", no refresh token")


@keys_group.command("delete")
@click.argument("name")
def keys_delete(name: str) -> None:
    """Remove a stored key (mcp:NAME or mcp:URL: an MCP server's OAuth login)."""
    from reactloop.cli._config_files import key_variable, load_keys, save_keys
    from reactloop.errors import UserError

    if name.startswith("mcp:"):
        from reactloop.mcp._oauth import delete_logins

        try:
            gone = delete_logins(name.removeprefix("mcp:"))
        except UserError as exc:
            fail(str(exc))
        if not gone:
            fail(f"no stored MCP login {name} (reactloop keys list shows them)")
        click.echo(f"removed the OAuth login of {', '.join(gone)}", err=True)
        return
    try:
        var = key_variable(name)
        keys = load_keys()
    except UserError as exc:
        fail(str(exc))
    if keys.pop(var, None) is None:
        fail(f"no stored key {var}")
    save_keys(keys)


@keys_group.command("path")
def keys_path_command() -> None:
    """Print where the keys are stored."""
    from reactloop.cli._config_files import keys_path

    click.echo(str(keys_path()))
