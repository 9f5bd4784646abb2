"""The extension hooks: :class:`Extension` and :class:`StaticExtension`.

Extensions are how planning, skills, the workspace and retrieved context plug into a run.

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

__all__ = ["RESULT_FIELDS", "Extension", "StaticExtension"]

RESULT_FIELDS = frozenset({"plan"})
"""The :class:`~reactloop.RunResult` fields an extension may fill (:attr:`Extension.result_field`)."""


class Extension:
    """Base class: every hook does nothing. Override what you need.

    Attributes:
        key: where this extension keeps its per-run state in ``ctx.state``.
    """

    key: str = "extension"
    start_does_io: bool = False
    """True when :meth:`start` does I/O (retrieval calls out). A durable runtime
    (``reactloop.temporal``) then runs :meth:`start` outside the workflow, in an activity, and
    hands the run what it left in ``ctx.state[key]`` (JSON data); :meth:`start` must leave
    such a state as it finds it."""

    @property
    def result_field(self) -> str | None:
        """The :class:`~reactloop.RunResult` field :meth:`result` fills (one of
        :data:`RESULT_FIELDS`), or None. The default keeps the rule extensions always had: the extension
        keyed ``"plan"`` fills ``RunResult.plan``."""
        return "plan" if self.key == "plan" else None

    def tools(self) -> Sequence[Tool]:
        """Tools added to the agent's registry (once, when the agent is built)."""
        return ()

    def system_sections(self) -> Mapping[str, str]:
        """Stable system-prompt sections by name (``"skills"``, ``"workspace"``…)."""
        return {}

    def later_tools(self) -> Sequence[Tool]:
        """Tools a run may add later (``ctx.add_tools``), when they are known in advance (a
        skill's tools): a durable runtime registers them before any run."""
        return ()

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
        """The value of the result's :attr:`result_field` (``RunResult.plan``)."""
        return ctx.state.get(self.key)


class StaticExtension(Extension):
    """Tools and stable system sections and nothing per run (the workspace)."""

    def __init__(self, key: str, tools: Sequence[Tool], sections: Mapping[str, str]) -> None:
        self.key = key
        self._tools = tuple(tools)
        self._sections = dict(sections)

    def tools(self) -> Sequence[Tool]:
        return self._tools

    def system_sections(self) -> Mapping[str, str]:
        return self._sections
