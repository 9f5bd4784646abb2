"""Live rendering of a run's events with rich."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.status import Status

from reactloop.events import Event
from reactloop.result import RunResult

__all__ = ["Renderer", "short"]


def short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _args(arguments: Any) -> str:
    try:
        return short(json.dumps(arguments, ensure_ascii=False), 160)
    except (TypeError, ValueError):
        return short(repr(arguments), 160)


class Renderer:
    """Prints each iteration as it happens: a spinner while the model thinks, tool calls with
    their arguments, shortened results, the final answer and a one-line metrics summary."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.status: Status | None = None

    def _spin(self, text: str) -> None:
        if self.status is None:
            self.status = self.console.status(text)
            self.status.start()
        else:
            self.status.update(text)

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def handle(self, event: Event) -> None:
        c, t = self.console, event.type
        if t == "iteration_start":
            self._spin(f"iteration {getattr(event, 'iteration', '?')}: thinking…")
        elif t == "tool_call":
            self.stop()
            call = getattr(event, "call", None)
            c.print(f"[bold cyan]→ {call.name}[/]({_args(call.arguments)})" if call else "")
        elif t in ("tool_result", "tool_error"):
            r = getattr(event, "result", None)
            if r is not None:
                style = "red" if r.error else "green"
                body = r.error if r.error else r.content
                c.print(f"  [{style}]← {short(body)}[/]")
        elif t == "no_tool_call":
            self.stop()
            c.print("[yellow]  (no tool call: reminded to use a tool)[/]")
        elif t == "custom":
            self.stop()
            c.print(f"[magenta]  • {getattr(event, 'name', '')}: "
                    f"{short(str(getattr(event, 'data', '')))}[/]")
        elif t == "plan_update":
            self.stop()
            c.print(f"[blue]  plan: {short(str(getattr(event, 'plan', '')), 160)}[/]")
        elif t == "compaction":
            c.print(f"[dim]  context compacted ({getattr(event, 'tier', '')}): "
                    f"{getattr(event, 'tokens_before', 0)} → "
                    f"{getattr(event, 'tokens_after', 0)} tokens[/]")
        elif t == "retry":
            c.print(f"[yellow]  retrying after {getattr(event, 'wait', 0):.1f}s[/]")

    def finish(self, result: RunResult) -> None:
        self.stop()
        style = "green" if result.finished else "yellow"
        self.console.print(Panel(Markdown(result.output or "(no answer)"),
                                 title=f"answer · {result.state.value}", border_style=style))
        m = result.metrics
        self.console.print(
            f"[dim]{m.iterations} iterations · {m.tool_calls} tool calls · "
            f"{m.input_tokens}+{m.output_tokens} tokens · {m.execution_time:.2f}s[/]"
        )
