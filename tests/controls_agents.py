"""Agents on scripted models for the production-controls CLI tests (``--agent
controls_agents:NAME``)."""

from __future__ import annotations

from reactloop import Agent, GuardrailTripped, ToolCall, UsageLimits
from reactloop._demo_tools import DEMO_TOOLS
from reactloop.testing import ScriptedModel


def limited() -> Agent:
    model = ScriptedModel([ToolCall("add", {"a": i, "b": 1}) for i in range(5)])
    return Agent(model, tools=DEMO_TOOLS, usage_limits=UsageLimits(max_requests=2))


def _no_passwords(text: str) -> None:
    if "password" in text:
        raise GuardrailTripped("I can't help with passwords.")


def guarded() -> Agent:
    return Agent(ScriptedModel(["never"]), input_guardrails=[_no_passwords])
