"""Handoffs (issue 24): ``Agent(handoffs=[...])`` offers ``transfer_to_<name>`` tools; the
target carries the same run on with its own instructions and tools; ``result.agent``; the
next turn — also from a session in a new process — starts with the agent that spoke last."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Handoff, Message, ModelResponse, RunState, ToolCall, UserError, tool
from reactloop.events import Event, HandoffEvent
from reactloop.testing import ScriptedModel

CHILD = str(Path(__file__).with_name("multi_child.py"))


def transfer(name: str) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall(f"transfer_to_{name}", {})])


@tool
def refund(order: str) -> str:
    """Refund an order.

    Args:
        order: the order number
    """
    return f"refunded {order}"


def team(*billing_script: Any, **triage_kwargs: Any) -> tuple[Agent, Agent]:
    billing = Agent(ScriptedModel(list(billing_script)), name="billing",
                    instructions="You handle bills and refunds.", tools=[refund])
    triage = Agent(ScriptedModel([transfer("billing")]), name="triage",
                   instructions="Route the user.", **triage_kwargs)
    return triage, billing


def test_transfer_tools_are_offered_per_target() -> None:
    _triage, billing = team("hi", handoffs=[])
    other = Agent(ScriptedModel([]), name="sales")
    router = Agent(ScriptedModel(["ok"]), handoffs=[billing, Handoff(other, description="Sales.")])
    assert router.tools == ["transfer_to_billing", "transfer_to_sales"]
    router.run_sync("hello")
    offered = {t.name: t for t in router.model.requests[0].tools}  # type: ignore[attr-defined]
    assert "You handle bills and refunds." in offered["transfer_to_billing"].description
    assert offered["transfer_to_sales"].description == "Sales."


def test_the_target_carries_the_same_run_on_with_its_own_instructions_and_tools() -> None:
    triage, billing = team(ModelResponse(tool_calls=[ToolCall("refund", {"order": "A1"})]),
                           "Refunded A1.")
    triage = Agent(triage.model, name="triage", instructions="Route the user.",
                   handoffs=[billing])

    async def main() -> list[Event]:
        return [e async for e in triage.stream("refund A1 please")]

    events = asyncio.run(main())
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.state is RunState.COMPLETED and result.output == "Refunded A1."
    assert result.agent == "billing"
    assert len({e.run_id for e in events}) == 1  # one run
    [handoff] = [e for e in events if isinstance(e, HandoffEvent)]
    assert (handoff.from_agent, handoff.to_agent, handoff.iteration) == ("triage", "billing", 1)
    first = billing.model.requests[0]  # type: ignore[attr-defined]
    assert first.system.startswith("You handle bills and refunds.")
    assert [t.name for t in first.tools] == ["refund"]
    # billing sees the whole conversation, the transfer included
    assert [m.role for m in first.messages] == ["user", "assistant", "tool"]
    assert result.metrics.iterations == 3 and result.metrics.tool_calls == 2
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant",
                                                 "tool", "assistant"]


def test_a_history_filter_decides_what_the_target_sees() -> None:
    def latest_only(messages: list[Message]) -> list[Message]:
        return [m for m in messages if m.role == "user"][-1:]

    billing = Agent(ScriptedModel(["Fresh start.", "Still here."]), name="billing")
    triage = Agent(ScriptedModel([transfer("billing")]), name="triage",
                   handoffs=[Handoff(billing, history=latest_only)])
    earlier = [Message.user("old question"), Message.assistant("old answer")]
    result = triage.run_sync("new question", history=earlier)
    assert result.agent == "billing"
    seen = billing.model.requests[0].messages  # type: ignore[attr-defined]
    # the filter's choice, then the transfer itself (so the next turn knows who speaks)
    assert [(m.role, m.content) for m in seen][:1] == [("user", "new question")]
    assert [m.role for m in seen[1:]] == ["assistant", "tool"]
    assert seen[2].name == "transfer_to_billing"
    again = triage.run_sync("and?", history=result.messages)
    assert again.agent == "billing"


def test_the_next_turn_starts_with_the_agent_that_spoke_last() -> None:
    triage, billing = team("Your bill is 5 EUR.", "Still 5 EUR.", handoffs=[])
    triage = Agent(triage.model, name="triage", handoffs=[billing])
    first = triage.run_sync("my bill?")
    second = triage.run_sync("and now?", history=first.messages)
    assert (first.agent, second.agent) == ("billing", "billing")
    assert second.output == "Still 5 EUR."
    assert len(triage.model.requests) == 1  # type: ignore[attr-defined]
    assert billing.model.remaining == 0  # type: ignore[attr-defined]


def test_handoffs_chain_and_each_agent_gets_its_own_budget() -> None:
    refunds = Agent(ScriptedModel([ToolCall("refund", {"order": "A1"}), "r1", "r2"]),
                    name="refunds", tools=[refund], max_iterations=2)
    billing = Agent(ScriptedModel([transfer("refunds")]), name="billing", handoffs=[refunds])
    triage = Agent(ScriptedModel([transfer("billing")]), name="triage", handoffs=[billing],
                   max_iterations=1 + 1)
    result = triage.run_sync("refund")
    # refunds has 2 iterations from its handoff on (iterations 3 and 4), the last forced
    assert result.state is RunState.MAX_ITERATIONS and result.agent == "refunds"
    assert result.output == "r1" and result.metrics.iterations == 4
    last = refunds.model.requests[-1]  # type: ignore[attr-defined]
    assert last.tools == ()  # the forced last iteration of refunds' own budget
    # the next turn starts at refunds, found through billing's handoffs
    again = triage.run_sync("more", history=result.messages)
    assert (again.agent, again.output) == ("refunds", "r2")


def test_bad_handoffs_are_refused_clearly() -> None:
    with pytest.raises(UserError, match="handoffs take agents"):
        Agent(ScriptedModel([]), handoffs=["billing"])  # type: ignore[list-item]
    a, b = Agent(ScriptedModel([]), name="x"), Agent(ScriptedModel([]), name="x")
    with pytest.raises(UserError, match="two handoffs go to agents named 'x'"):
        Agent(ScriptedModel([]), handoffs=[a, b])


def test_a_session_resumed_in_a_new_process_starts_with_the_agent_that_spoke_last(
        tmp_path: Path) -> None:
    store = str(tmp_path / "sessions.sqlite3")

    def child(mode: str, text: str) -> dict[str, Any]:
        out = subprocess.run([sys.executable, CHILD, mode, store, "trip", text],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        line = next(x for x in out.stdout.splitlines() if x.startswith("R "))
        return json.loads(line[2:])  # type: ignore[no-any-return]

    first = child("handoff", "I want to fly to Rome")
    assert first == {"agent": "booking", "output": "For which date?", "state": "completed",
                     "roles": ["user", "assistant", "tool", "assistant"]}
    second = child("next", "the 3rd of May, date fixed")
    assert second["agent"] == "booking" and second["state"] == "completed"
    assert second["output"] == "Booked for the 3rd of May, date fixed."
