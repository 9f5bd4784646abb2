"""The prompt builder (feature S1): named sections, stable ones first, volatile ones last.

The system prompt is built once per run from the *stable* sections, in this order:
``instructions`` (persona), ``loop_rules``, ``tool_rules``, ``workspace``, ``skills``,
``output`` (the answer's JSON schema, when a typed answer is prompted for). It never
changes during a run, so the request prefix stays byte-stable and provider prompt caches and
llama.cpp's KV cache are reused. The *volatile* sections (``plan``, ``retrieved``) and the budget
notes are placed at the end of each request instead (see ``ModelRequest.notes``).

Replace or drop any section::

    PromptBuilder().replace("loop_rules", "Think step by step.").drop("tool_rules")
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

__all__ = ["DEFAULT_SECTIONS", "STABLE_SECTIONS", "VOLATILE_SECTIONS", "PromptBuilder"]

SectionName = Literal["instructions", "loop_rules", "tool_rules", "workspace", "skills",
                      "output", "plan", "retrieved"]
STABLE_SECTIONS: tuple[str, ...] = ("instructions", "loop_rules", "tool_rules", "workspace",
                                    "skills", "output")
VOLATILE_SECTIONS: tuple[str, ...] = ("plan", "retrieved")

LOOP_RULES = (
    "You work in steps. In each step either call tools to make progress or, when you have "
    "what you need, answer the user directly."
)
LOOP_CONTROL_RULES = (
    "You work in steps and must call a tool in every step. When the task is done, call "
    "task_completion with the final answer; to ask the user something, call ask_question; "
    "for a conversational reply that needs no work, call converse."
)
TOOL_RULES = (
    "Call a tool only with the arguments its schema describes. Each tool result comes back "
    "to you; if it is an error, read it and fix the call or try another way. Do not repeat a "
    "call you already have the result of."
)

DEFAULT_SECTIONS: Mapping[str, str] = {
    "instructions": "You are a helpful assistant.",
    "loop_rules": LOOP_RULES,
    "tool_rules": TOOL_RULES,
}


@dataclass(frozen=True)
class PromptBuilder:
    """Named prompt sections. ``None`` or ``""`` drops a section."""

    sections: Mapping[str, str | None] = field(default_factory=dict)
    """Overrides of the defaults, by section name."""

    def replace(self, name: str, text: str | None) -> PromptBuilder:
        _check(name)
        return replace(self, sections={**self.sections, name: text})

    def drop(self, name: str) -> PromptBuilder:
        return self.replace(name, None)

    def section(self, name: str, computed: str | None = None) -> str | None:
        """The text of a section: an override if set, else ``computed``, else the default."""
        _check(name)
        if name in self.sections:
            return self.sections[name] or None
        if computed is not None:
            return computed or None
        return DEFAULT_SECTIONS.get(name)

    def system(self, computed: Mapping[str, str | None]) -> str:
        """The stable system prompt. ``computed`` holds the agent-derived section texts
        (instructions, loop rules for loop-control agents, workspace info, skills catalog)."""
        parts = [self.section(n, computed.get(n)) for n in STABLE_SECTIONS]
        return "\n\n".join(p.strip() for p in parts if p)

    def volatile(self, computed: Mapping[str, str | None]) -> list[str]:
        """The volatile parts for one request (plan, retrieved context), in order."""
        parts = [self.section(n, computed.get(n)) for n in VOLATILE_SECTIONS]
        return [p for p in parts if p]


def _check(name: str) -> None:
    if name not in STABLE_SECTIONS and name not in VOLATILE_SECTIONS:
        from reactloop.errors import UserError

        raise UserError(
            f"unknown prompt section {name!r}; sections are: "
            + ", ".join(STABLE_SECTIONS + VOLATILE_SECTIONS)
        )
