"""``RunSpec``: everything a run needs from its agent, frozen once per agent.

The loop reads only this (never the ``Agent``), so dependencies point one way:
``agent`` → ``_loop`` → ``RunSpec`` / ``RunContext`` / ``Runtime`` → tools, models, messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reactloop._output import OutputSpec
from reactloop.errors import UserError
from reactloop.extensions._base import RESULT_FIELDS, Extension
from reactloop.messages import Message, ModelSettings
from reactloop.models._base import Model
from reactloop.prompt import PromptBuilder
from reactloop.run_context import RunContext
from reactloop.tools._registry import ToolRegistry
from reactloop.tools._select import ToolSelector
from reactloop.tools._source import ToolSource
from reactloop.tools._tool import ApprovalRule

if TYPE_CHECKING:  # imported by the first Agent, not by ``import reactloop``
    from reactloop.context._manager import ContextPolicy
    from reactloop.controls._run import Controls

__all__ = ["HandoffTarget", "HistoryFilter", "RunSpec"]

HistoryFilter = Callable[[list[Message]], Sequence[Message]]
"""What an agent handed the conversation sees of it: ``fn(history) -> history``."""


@dataclass(frozen=True, slots=True)
class RunSpec:
    """An agent's configuration as the loop sees it (immutable; shared by all its runs)."""

    name: str
    model: Model
    system: str
    """The system prompt (stable: built once)."""
    tools: ToolRegistry
    """The agent's tools (each run works on a copy it may extend)."""
    extensions: tuple[Extension, ...]
    sources: tuple[ToolSource, ...]
    settings: ModelSettings
    prompt: PromptBuilder
    context: ContextPolicy
    max_iterations: int
    max_execution_time: float | None
    tool_timeout: float | None
    max_parallel_tools: int | None
    loop_control: bool
    deps: Any
    callbacks: tuple[object, ...]
    output: OutputSpec | None = None
    """The typed answer wanted (``Agent(output_type=...)``), or None for text."""
    approve: ApprovalRule = False
    """The agent's approval policy over all tools (``Agent(approve=...)``)."""
    tool_selection: ToolSelector | None = None
    """Picks the tools offered for a request (``Agent(tool_selection=...)``); None: all."""
    controls: Controls | None = None
    """Usage limits, guardrails, model concurrency, fallbacks (``reactloop.controls``);
    None when the agent has none."""
    handoffs: Mapping[str, HandoffTarget] = field(default_factory=dict)
    """The agents this one may hand the conversation to, by their ``transfer_to_…`` tool."""

    def __post_init__(self) -> None:
        for ext in self.extensions:
            if ext.result_field is not None and ext.result_field not in RESULT_FIELDS:
                raise UserError(f"extension {ext.key!r}: result_field must be one of "
                                f"{', '.join(sorted(RESULT_FIELDS))} (a RunResult field "
                                f"extensions fill) or None, got {ext.result_field!r}")

    def notes(self, ctx: RunContext) -> list[str]:
        """The volatile sections (plan, retrieved context) for the next request."""
        computed: dict[str, str | None] = {}
        for ext in self.extensions:
            computed.update(ext.notes(ctx))
        return self.prompt.volatile(computed) if computed else []


@dataclass(frozen=True, slots=True)
class HandoffTarget:
    """An agent a run may hand the conversation to (``Agent(handoffs=[...])``)."""

    name: str
    """The agent's name."""
    spec: RunSpec
    history: HistoryFilter | None = None
    """What the agent sees of the history when it takes over (None: all of it)."""

