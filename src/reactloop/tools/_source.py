"""Tool sources: things that provide tools for the duration of a run (MCP servers, …)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, runtime_checkable

from reactloop.tools._tool import Tool

__all__ = ["Emit", "ToolSource"]

Emit = Callable[[str, Any], None]
"""``emit(name, data)`` sends a ``custom`` event into the run's event stream."""


@runtime_checkable
class ToolSource(Protocol):
    """Provides tools while open. The loop opens every source when a run (or a session)
    starts and closes it when that ends, also on errors and cancellation."""

    name: str

    def open(self, emit: Emit) -> AbstractAsyncContextManager[Sequence[Tool]]:
        """An async context manager whose value is the tools to register."""
        ...
