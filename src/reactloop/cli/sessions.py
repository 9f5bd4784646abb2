"""``reactloop sessions list|show|delete``: the stored sessions (see :mod:`reactloop.sessions`).

Every command takes ``--store PATH|URL``: a
SQLite file (default: ``sessions.sqlite3`` in the user's data directory) or a
``postgresql://`` URL. A store that cannot be opened is one line (the ``reactloop`` group's error
path).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from reactloop.cli._console import fail

__all__ = ["sessions_group", "store_option"]


def store_option(f: Any) -> Any:
    """The ``--store PATH|URL`` option (also used by ``chat --session``)."""
    return click.option("--store", "store_path", metavar="PATH|URL",
                        help="The session store: a SQLite file (default: the config's store, "
                             "else sessions.sqlite3 in the user's data directory) or a "
                             "postgresql:// URL.")(f)


def _store(store_path: str | None, *, must_exist: bool) -> Any:
    """``--store``, else the config's ``store`` (as ``run`` and ``chat`` keep their sessions
    there), else the default file; None when that file does not exist yet."""
    from reactloop.cli._config_files import load_config
    from reactloop.sessions import SQLiteStore, default_store_path, open_store

    store_path = store_path or load_config().get("store")
    if store_path and "://" in store_path:
        return open_store(store_path)  # a database, or an unsupported scheme (one line)
    path = Path(store_path).expanduser() if store_path else default_store_path()
    if not path.exists():
        if must_exist:
            fail(f"no session store at {path}")
        return None
    return SQLiteStore(path)


def _where(store: Any) -> str:
    """The store's file, or its URL without the password."""
    from reactloop.cli._ids import store_label

    return store_label(store)


def _resolve(store: Any, typed: str) -> str:
    """The session id that ``typed`` is a unique prefix of (else exit 1 saying why)."""
    from reactloop.cli._ids import resolve_id

    return resolve_id(typed, [s.id for s in store.list()], what="session",
                      where=_where(store), hint="reactloop sessions list")


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


@click.group("sessions")
def sessions_group() -> None:
    """List, show and delete stored sessions."""


@sessions_group.command("list")
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print the sessions as JSON.")
def list_sessions(store_path: str | None, as_json: bool) -> None:
    """List the stored sessions, most recent first."""
    store = _store(store_path, must_exist=False)
    infos = store.list() if store is not None else []
    if as_json:
        click.echo(json.dumps([{"id": s.id, "title": s.title, "messages": s.messages,
                                "created": s.created, "updated": s.updated} for s in infos],
                              indent=2, ensure_ascii=False))
        return
    if not infos:
        click.echo("no sessions")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    # ids are never cut (they are typed back); the title gives way instead
    table.add_column("id", no_wrap=True, min_width=max(len(s.id) for s in infos))
    table.add_column("updated", no_wrap=True)
    table.add_column("messages", justify="right", no_wrap=True)
    table.add_column("title", overflow="ellipsis", no_wrap=True, ratio=1)
    for s in infos:
        table.add_row(s.id, _when(s.updated), str(s.messages), s.title)
    Console(highlight=False).print(table)


@sessions_group.command("show")
@click.argument("session_id")
@store_option
@click.option("--full", is_flag=True, help="Show tool results and long messages in full.")
@click.option("--json", "as_json", is_flag=True, help="Print the messages as JSON.")
def show_session(session_id: str, store_path: str | None, full: bool, as_json: bool) -> None:
    """Show the history of SESSION_ID (or a unique prefix), with its tool calls and results."""
    store = _store(store_path, must_exist=True)
    session_id = _resolve(store, session_id)
    info = store.info(session_id)
    if info is None:
        fail(f"no session {session_id!r} in {_where(store)}")
    messages = store.get(session_id)
    if as_json:
        click.echo(json.dumps([m.to_dict() for m in messages], indent=2, ensure_ascii=False))
        return
    from rich.console import Console

    from reactloop.cli._history import render_history

    console = Console(highlight=False)
    console.print(f"[bold]session {session_id}[/]  [dim]{info.messages} messages · created "
                  f"{_when(info.created)} · updated {_when(info.updated)}[/]")
    render_history(console, messages, full=full)
    _show_pending(console, messages)


def _show_pending(console: Any, messages: list[Any]) -> None:
    """The calls waiting for a decision (resume with ``reactloop chat --session ID``)."""
    from rich.markup import escape

    from reactloop.approvals import pending_approvals

    waiting = pending_approvals(messages)
    if not waiting:
        return
    console.print(f"[bold yellow]{len(waiting)} tool call(s) waiting for approval[/] "
                  "[dim](decide with: reactloop run --session ID, or chat --session ID)[/]")
    for p in waiting:
        args = json.dumps(dict(p.arguments), ensure_ascii=False, default=str)
        console.print(f"  [yellow]{escape(p.call_id)}[/]  {escape(p.tool_name)}"
                      f"({escape(args)})  [dim]arguments hash {p.arguments_hash[:16]}[/]")


@sessions_group.command("delete")
@click.argument("session_id")
@store_option
def delete_session(session_id: str, store_path: str | None) -> None:
    """Delete SESSION_ID (the whole id) and its history."""
    store = _store(store_path, must_exist=True)
    if not store.delete(session_id):
        fail(f"no session {session_id!r} in {_where(store)}")
    click.echo(f"deleted session {session_id}")
