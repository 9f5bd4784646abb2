"""``reactloop logs``: the runs of ``run`` and ``chat``, newest first; ``logs show ID``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from reactloop.cli._console import fail

__all__ = ["logs_group"]


_store_option = click.option("--store", "store_path", metavar="PATH|URL",
                             help="The session store: a SQLite file or a postgresql:// URL "
                                  "(default: the config's, else sessions.sqlite3 in the "
                                  "user's data directory).")


def _open(store_path: str | None) -> Any:
    """The store, or None when there is none yet (nothing logged)."""
    from reactloop.cli._config_files import load_config
    from reactloop.cli._runlog import supports_log
    from reactloop.sessions import default_store_path, open_store

    # a store that cannot be opened raises: one line (the group's error path)
    where = store_path or load_config().get("store")
    if where is None or "://" not in str(where):
        path = Path(where).expanduser() if where else default_store_path()
        if not path.exists():
            return None
        where = str(path)
    store = open_store(where)
    if not supports_log(store):
        from reactloop.cli._ids import store_label

        fail(f"the store {store_label(store)} keeps no run log")
    return store


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def _first_words(text: str, limit: int = 48) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cost(value: Any) -> str:
    return f"${value:.4f}" if isinstance(value, (int, float)) else "unknown"


@click.group("logs", invoke_without_command=True)
@click.option("-n", "count", type=click.IntRange(min=0), default=20, show_default=True,
              help="How many runs to list (0: all).")
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
@_store_option
@click.pass_context
def logs_group(ctx: click.Context, count: int, as_json: bool, store_path: str | None) -> None:
    """List recent runs of run and chat: id, time, model, ending, first words, tokens, cost.

    'reactloop logs show ID' prints one run with its trace (a unique prefix of the id is
    enough). Runs are stored unless --no-log is given (or the config says log = false).
    """
    if ctx.invoked_subcommand is not None:
        return
    store = _open(store_path)
    runs = store.runs(count or None) if store is not None else []
    if as_json:
        click.echo(json.dumps([{k: v for k, v in r.items() if k != "trace"} for r in runs],
                              indent=2, ensure_ascii=False))
        return
    if not runs:
        click.echo("no runs logged yet")
        return
    from rich.console import Console
    from rich.table import Table

    costs = any(isinstance(r.get("cost"), (int, float)) for r in runs)
    table = Table(box=None, pad_edge=False)
    # ids are never cut (they are typed back); the prompt gives way first
    table.add_column("id", no_wrap=True, min_width=max(len(r["id"]) for r in runs))
    table.add_column("time", no_wrap=True)
    table.add_column("model", overflow="fold", min_width=5)
    table.add_column("ending", no_wrap=True)
    table.add_column("prompt", overflow="ellipsis", no_wrap=True, ratio=1, min_width=8)
    table.add_column("tokens", justify="right", no_wrap=True)
    if costs:
        table.add_column("cost", justify="right", no_wrap=True)
    for r in runs:
        style = "green" if r.get("exit_code") == 0 else "yellow"
        row = [r["id"], time.strftime("%m-%d %H:%M", time.localtime(r.get("started")
                                                                      or r["created"])),
               str(r.get("model")), f"[{style}]{r.get('ending') or r.get('state')}[/]",
               _first_words(r.get("prompt", "")),
               str(int(r.get("input_tokens") or 0) + int(r.get("output_tokens") or 0))]
        table.add_row(*row, *([_cost(r.get("cost"))] if costs else []))
    Console(highlight=False).print(table)


@logs_group.command("show")
@click.argument("run_id", required=False)
@_store_option
@click.option("--full", is_flag=True,
              help="Show tool results, the prompt and the answer in full (long ones are "
                   "shortened otherwise).")
@click.option("--json", "as_json", is_flag=True, help="Print the run record as JSON.")
def show(run_id: str | None, store_path: str | None, full: bool, as_json: bool) -> None:
    """Print run RUN_ID with its trace (without RUN_ID: the latest run; given a session's
    id: every run of that session). A unique prefix of an id is enough."""
    from reactloop.cli._ids import resolve_id, store_label

    store = _open(store_path)
    runs = store.runs() if store is not None else []
    where = store_label(store) if store is not None else "the log"
    if run_id is None:
        if not runs:
            fail("no runs logged yet")
        run_id = runs[0]["id"]
    if any(r["id"].startswith(run_id) for r in runs) or not any(
            str(r.get("session_id") or "").startswith(run_id) for r in runs):
        chosen = resolve_id(run_id, [r["id"] for r in runs], what="run", where=where,
                            hint="reactloop logs")
        selected = [r for r in runs if r["id"] == chosen]
    else:
        sid = resolve_id(run_id, {str(r.get("session_id")) for r in runs}, what="session",
                         where=where, hint="reactloop logs")
        selected = sorted((r for r in runs if r.get("session_id") == sid),
                          key=lambda r: r["created"])
    if as_json:
        click.echo(json.dumps(selected[0] if len(selected) == 1 else selected, indent=2,
                              ensure_ascii=False))
        return
    for record in selected:
        _render(record, full)


def _render(r: dict[str, Any], full: bool) -> None:
    from rich.console import Console
    from rich.markup import escape

    from reactloop.cli._render import print_trace

    console = Console(highlight=False)
    ok = r.get("exit_code") == 0
    console.print(
        f"[bold]run {r['id']}[/]  [dim]session {r.get('session_id') or '—'} · "
        f"{_when(r.get('started') or r['created'])} · {escape(str(r.get('model')))} · "
        f"{r.get('iterations', 0)} iterations · {r.get('tool_calls', 0)} tool calls · "
        f"{r.get('input_tokens', 0)}+{r.get('output_tokens', 0)} tokens · "
        f"{float(r.get('duration') or 0):.1f}s · cost {_cost(r.get('cost'))}[/]")
    _block(console, str(r.get("prompt", "")), "prompt", "cyan", full, markdown=False)
    print_trace(console, r.get("trace") or [], full=full)
    label = r.get("ending") or r.get("state")
    _block(console, str(r.get("output") or "(no answer)"),
           f"answer · {label} (exit {r.get('exit_code')})", "green" if ok else "yellow", full,
           markdown=True)
    for note in r.get("notes") or []:
        if note != label:
            console.print(f"  [yellow]{escape(str(note))}[/]")


_LONG = 2000
"""Prompts and answers longer than this are shortened, as tool results are (``--full``)."""


def _block(console: Any, text: str, title: str, style: str, full: bool, *,
           markdown: bool) -> None:
    """``text`` in a panel; past :data:`_LONG` characters shortened, or with ``--full``
    written whole as plain text after a title line (rich's layout of megabytes of Markdown
    takes time quadratic in their length; plain text is written in one go)."""
    from rich.markdown import Markdown
    from rich.markup import escape
    from rich.panel import Panel
    from rich.rule import Rule

    if len(text) > _LONG and full:
        console.print(Rule(escape(title), align="left", style=style))
        console.file.write(text if text.endswith("\n") else text + "\n")
        console.print(Rule(style=style))
        return
    if len(text) > _LONG:
        text = (text[:_LONG - 1] + f"…\n\n[{len(text) - _LONG + 1} more characters; "
                "--full shows all]")
    body = Markdown(text) if markdown else escape(text)
    console.print(Panel(body, title=escape(title), title_align="left", border_style=style))
