"""Rendering a stored history with rich (``reactloop sessions show``)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from reactloop.messages import Message

__all__ = ["render_history"]

_SHORT = 300


def _cut(text: str, full: bool) -> str:
    if full or len(text) <= _SHORT:
        return text
    return text[:_SHORT - 1] + f"… [{len(text) - _SHORT} more characters; --full shows all]"


def _args(arguments: object) -> str:
    try:
        return json.dumps(arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(arguments)


def render_history(console: Console, messages: Sequence[Message], *, full: bool = False
                   ) -> None:
    """Print ``messages``: prompts and answers as panels, tool calls and results as lines."""
    for m in messages:
        kind = m.metadata.get("kind")
        if m.role == "user" and kind == "summary":
            console.print(Panel(escape(_cut(m.content, full)), title="summary of earlier messages",
                                border_style="dim"))
        elif m.role == "user" and kind is not None:
            console.print(f"[dim]  ({kind}) {escape(_cut(m.content, full))}[/]")
        elif m.role == "user":
            shown = "\n".join([_cut(m.content, full), *(a.label() for a in m.attachments)])
            console.print(Panel(escape(shown), title="user", title_align="left",
                                border_style="cyan"))
        elif m.role == "assistant":
            if m.content.strip():
                style = "green" if not m.tool_calls else "dim"
                console.print(Panel(escape(_cut(m.content, full)), title="assistant",
                                    title_align="left", border_style=style))
            for c in m.tool_calls:
                console.print(f"[bold cyan]→ {escape(c.name)}[/]"
                              f"({escape(_cut(_args(dict(c.arguments)), full))})")
        elif m.role == "tool":
            style = "red" if m.is_error else "green"
            console.print(f"  [{style}]← {escape(m.name or 'tool')}: "
                          f"{escape(_cut(m.content, full))}[/]")
        else:
            console.print(f"[magenta]system:[/] {escape(_cut(m.content, full))}")
