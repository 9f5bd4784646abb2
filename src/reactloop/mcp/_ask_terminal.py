"""An elicitation handler that asks on a terminal, one field at a time (what ``reactloop run``
and ``reactloop chat`` use; any line-based ``prompt`` works, so it is testable without one).

    MCP server 'features' asks: Who is travelling?
    Answer? [Y]es, [n]o (decline), [c]ancel: y
    Name — Your name: Ada
    Seats — How many seats (1–8): 9
      must be at most 8
    Seats — How many seats (1–8): 2
    Window — A window seat? [y/n] (default: no):

Every value is checked against the requested schema before it is sent (types, ranges, enum
choices by number or name, email/uri/date formats); a wrong one is asked again. Ctrl-C or the
end of input cancels; ``n`` declines. Both are answers the server receives.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlparse

from reactloop.mcp._elicitation import Elicitation, ElicitationAnswer, Elicitor, FormField

__all__ = ["form_elicitor"]

Prompt = Callable[[str], Awaitable[str]]
"""Asks a question, returns the answer line; raises ``EOFError`` at the end of input."""


def form_elicitor(prompt: Prompt, say: Callable[[str], None]) -> Elicitor:
    """An :data:`~reactloop.mcp._elicitation.Elicitor` asking through ``prompt``."""

    async def ask(request: Elicitation) -> ElicitationAnswer:
        try:
            return await _ask(request, prompt, say)
        except (EOFError, KeyboardInterrupt):
            say("(cancelled)")
            return ElicitationAnswer.cancel()

    return ask


async def _ask(request: Elicitation, prompt: Prompt, say: Callable[[str], None]
               ) -> ElicitationAnswer:
    say(f"MCP server {request.server!r} asks: {request.message}")
    if request.mode == "url":
        say(f"  open: {request.url}")
        say(f"  (on the site {urlparse(request.url or '').hostname or '?'}; open it only if "
            "you trust it, then answer)")
    choice = (await prompt("Answer? [Y]es, [n]o (decline), [c]ancel: ")).strip().lower()
    if choice in ("n", "no"):
        return ElicitationAnswer.decline()
    if choice in ("c", "cancel"):
        return ElicitationAnswer.cancel()
    if request.mode == "url":
        return ElicitationAnswer.accept()
    content: dict[str, Any] = {}
    for f in request.fields:
        value = await _one(f, prompt, say)
        if value is not _SKIP:
            content[f.name] = value
    return ElicitationAnswer("accept", content)


_SKIP = object()


async def _one(f: FormField, prompt: Prompt, say: Callable[[str], None]) -> Any:
    for i, (value, label) in enumerate(f.options, 1):
        say(f"  {i}. {label}" + (f" ({value})" if label != value else ""))
    question = _question(f)
    while True:
        text = await prompt(question)
        if not text.strip():
            if f.default is not None:
                return f.default
            if not f.required:
                return _SKIP
            say("  an answer is required")
            continue
        try:
            return f.parse(text)
        except ValueError as exc:
            say(f"  {exc}")


def _question(f: FormField) -> str:
    out = f.title + (f" — {f.description}" if f.description else "")
    if f.minimum is not None or f.maximum is not None:
        low = "" if f.minimum is None else f"{f.minimum:g}"
        high = "" if f.maximum is None else f"{f.maximum:g}"
        out += f" ({low}–{high})"
    if f.kind == "boolean":
        out += " [y/n]"
    elif f.kind == "choices":
        out += " (numbers or names, comma-separated)"
    elif f.fmt:
        out += f" ({f.fmt})"
    if f.default is not None:
        shown = ("yes" if f.default else "no") if f.kind == "boolean" else f.default
        out += f" (default: {shown})"
    elif not f.required:
        out += " (optional)"
    return out + ": "
