"""reactloop with ``@tool(inline=True)``: the sync ``add`` runs on the event loop, skipping
the worker-thread hop (a variant row; the targets are checked on the default row)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from frameworks import reactloop_fw

NAME = "reactloop (inline tool)"
DIST = "reactloop"
IMPORT = "import reactloop"
PEER = False


def available() -> str | None:
    """Why this variant cannot run with the installed reactloop, or None."""
    from reactloop import tool

    if "inline" not in inspect.signature(tool).parameters:
        return "this reactloop has no @tool(inline=True)"
    return None


def build(delay: float, n_calls: int, counter: list[int]) -> Callable[[], Awaitable[int]]:
    return reactloop_fw.build(delay, n_calls, counter, inline=True)
