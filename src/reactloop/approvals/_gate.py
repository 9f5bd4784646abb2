"""The loop's gate: which calls of a response wait for a person, and the results that
decisions produce. The values and the history bookkeeping are public, in the package's
``__init__`` (:mod:`reactloop.approvals`); this module adds what needs the tool registry, so
the package ``__init__`` never imports it (the values stay importable from the bottom layer).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from reactloop._arguments import arguments_problem
from reactloop.approvals import DENIED, Decision, arguments_hash
from reactloop.messages import Message, ToolCall
from reactloop.result import ToolResult
from reactloop.tools import _tool
from reactloop.tools._registry import ToolRegistry
from reactloop.tools._tool import ApprovalRule, ToolArgumentsError, ToolContext

__all__ = ["batch_results", "decision_result", "gated_calls", "turn_iterations"]


def _asks(rule: ApprovalRule, call: ToolCall, context: ToolContext) -> bool:
    if isinstance(rule, bool):
        return rule
    try:
        return bool(rule(dict(call.arguments), context))
    except Exception:  # a rule that fails cannot vouch for the call: ask a person
        return True


def gated_calls(calls: Sequence[ToolCall], registry: ToolRegistry, policy: ApprovalRule,
                run_id: str, deps: Any, state: dict[str, Any]) -> dict[str, str]:
    """The calls that wait for approval, as ``call id -> arguments hash``.

    A call waits when its tool's ``requires_approval`` or the agent's ``policy`` says so.
    Calls that cannot run anyway wait for nobody: unknown tools, invalid arguments (the model
    gets the error at once), and internal tools (``Tool.internal``: the run's own state)."""
    out: dict[str, str] = {}
    if policy is False and not registry.approval_rules and not _tool.rules_changed:
        return out  # nothing can ask: no lookup at all
    for call in calls:
        tool = registry.get(call.name) if isinstance(call.name, str) else None
        if tool is None or (tool.requires_approval is False and policy is False):
            continue  # the common case: one lookup per call
        if (tool.internal or not isinstance(call.arguments, Mapping)
                or arguments_problem(call) is not None):
            continue
        try:
            tool.validate(call.arguments)
        except ToolArgumentsError:
            continue
        context = ToolContext(tool.name, call.id or "", run_id, deps, state=state)
        if _asks(tool.requires_approval, call, context) or _asks(policy, call, context):
            out[call.id or ""] = arguments_hash(call.name, call.arguments)
    return out


def decision_result(call: ToolCall, decision: Decision, ran: ToolResult | None) -> ToolResult:
    """The result the model sees for a decided call: the denial, or what the call returned
    (with a note when a person edited its arguments)."""
    if not decision.approved:
        reason = (decision.reason or "").strip() or "no reason given"
        error = f"{DENIED}{reason}"
        return ToolResult(call.name, None, error, call.id or "", dict(call.arguments),
                          f"The user denied this tool call. Reason: {reason}")
    assert ran is not None
    if decision.arguments is None:
        return ran
    edited = json.dumps(dict(decision.arguments), ensure_ascii=False, default=str)
    return replace(ran, content=f"(The user edited the arguments to {edited}.)\n{ran.content}")


def batch_results(messages: Sequence[Message], decided: set[str]) -> list[ToolResult]:
    """Every answered call of the batches holding the ``decided`` calls, read back from the
    history with their arguments (what the control and final-answer checks need once the
    last decision of a batch is applied)."""
    calls: dict[str, ToolCall] = {}
    for m in messages:
        if m.role == "assistant" and any(c.id in decided for c in m.tool_calls):
            calls.update({c.id: c for c in m.tool_calls if c.id})
    return [ToolResult(m.name or "", m.content, "error" if m.is_error else None,
                       m.tool_call_id or "", dict(calls[m.tool_call_id].arguments), m.content)
            for m in messages if m.role == "tool" and m.tool_call_id in calls]


def turn_iterations(messages: Sequence[Message]) -> int:
    """Model calls already made in the latest turn (its assistant messages), for a run that
    continues from a bare history."""
    n = 0
    for m in reversed(messages):
        if m.role == "user" and m.metadata.get("kind") not in ("reminder", "note"):
            break
        n += m.role == "assistant"
    return n
