"""Extensions: how planning, skills, the workspace and retrieved context plug into a run.

An :class:`Extension` contributes tools and stable system-prompt sections once per agent, and
takes part in every run through a few hooks. It keeps its per-run data in
``ctx.state[extension.key]`` (see :class:`~reactloop.RunContext`) — never on itself — so one
agent serves any number of concurrent runs, and a run's state serialises with the run.

Hooks run inside the loop, in the order the extensions were given; they must be quick and
deterministic (no I/O), except :meth:`Extension.start`, which may await (retrieval).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reactloop.result import ToolResult
    from reactloop.run_context import RunContext
    from reactloop.tools._tool import Tool

__all__ = ["Extension"]


class Extension:
    """Base class: every hook does nothing. Override what you need.

    Attributes:
        key: where this extension keeps its per-run state in ``ctx.state``.
    """

    key: str = "extension"

    def tools(self) -> Sequence[Tool]:
        """Tools added to the agent's registry (once, when the agent is built)."""
        return ()

    def system_sections(self) -> Mapping[str, str]:
        """Stable system-prompt sections by name (``"skills"``, ``"workspace"``…)."""
        return {}

    async def start(self, ctx: RunContext) -> None:
        """A run starts (also a resumed one: ``ctx.state`` may already hold this extension's
        state, as saved). Restore or initialise ``ctx.state[self.key]`` here."""

    def notes(self, ctx: RunContext) -> Mapping[str, str | None]:
        """Volatile sections (``"plan"``, ``"retrieved"``) for the next request; they go at
        the end of the request and are never stored."""
        return {}

    def after_tools(self, ctx: RunContext, results: Sequence[ToolResult]) -> None:
        """A batch of tool calls finished (results in call order). Derive state from the
        results here (not only inside the tools), so that it also holds when the tools ran
        somewhere else (a workflow activity)."""

    def finish(self, ctx: RunContext) -> None:
        """The run ended (any state). Release anything held for it."""

    def result(self, ctx: RunContext) -> Any:
        """A value for the result (``RunResult.plan`` comes from the ``"plan"`` extension)."""
        return ctx.state.get(self.key)
