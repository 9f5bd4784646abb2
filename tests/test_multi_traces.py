"""Agents that work together in traces and evals (issue 24): a sub-agent's ``invoke_agent``
span nests under the caller's ``execute_tool`` span, with ``gen_ai.agent.name``; a handoff is a
span event."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reactloop import Agent, ModelResponse, RunState, ToolCall, tool
from reactloop.testing import ScriptedModel, capture_spans

pytest.importorskip("opentelemetry.sdk")


def call(name: str, **arguments: Any) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall(name, arguments)])


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


@pytest.mark.parametrize("stream", [False, True])
def test_a_sub_agent_is_a_nested_invoke_agent_span(stream: bool) -> None:
    with capture_spans() as spans:
        math = Agent(ScriptedModel([call("add", a=2, b=3), "5"]), name="math", tools=[add])
        boss = Agent(ScriptedModel([call("math", task="2+3"), "It is 5."]), name="boss",
                     tools=[math.as_tool()])
        if stream:
            async def main() -> Any:
                return [e async for e in boss.stream("2+3?")][-1].result
            result = asyncio.run(main())
        else:
            result = boss.run_sync("2+3?")
    assert result.state is RunState.COMPLETED
    [root] = [s for s in spans if s.parent is None]
    assert root.name == "invoke_agent boss"
    assert (root.attributes or {})["reactloop.run.state"] == "completed"
    assert (root.attributes or {})["reactloop.run.tool_calls"] == 2  # its own and math's
    [tool_span] = [s for s in spans.children(root) if s.name == "execute_tool math"]
    [sub] = spans.children(tool_span)
    assert sub.name == "invoke_agent math"
    attrs = sub.attributes or {}
    assert attrs["gen_ai.agent.name"] == "math"
    assert attrs["reactloop.run.state"] == "completed"
    assert attrs["reactloop.run.id"] != (root.attributes or {})["reactloop.run.id"]
    assert [s.name for s in spans.children(sub)] == ["chat scripted", "execute_tool add",
                                                    "chat scripted"]
    # the run span ends after its sub-run's
    assert root.end_time >= sub.end_time


def test_a_handoff_is_a_span_event_on_the_run() -> None:
    with capture_spans() as spans:
        billing = Agent(ScriptedModel(["5 EUR."]), name="billing")
        triage = Agent(ScriptedModel([call("transfer_to_billing")]), name="triage",
                       handoffs=[billing])
        triage.run_sync("my bill?")
    [root] = [s for s in spans if s.parent is None]
    [handoff] = [e for e in root.events if e.name == "reactloop.handoff"]
    assert dict(handoff.attributes or {}) == {"reactloop.handoff.from": "triage",
                                             "reactloop.handoff.to": "billing"}
    assert (root.attributes or {})["reactloop.run.agent"] == "billing"


# -- evals -----------------------------------------------------------------------------------
def test_an_eval_case_expects_a_handoff_and_a_sub_agents_call() -> None:
    from reactloop.evals import parse_case, run_case_sync

    def team() -> Agent:
        math = Agent(ScriptedModel([call("add", a=2, b=3), "5"]), name="math", tools=[add])
        billing = Agent(ScriptedModel([call("math", task="2+3"), "You owe 5 EUR."]),
                        name="billing", tools=[math.as_tool()])
        return Agent(ScriptedModel([call("transfer_to_billing")]), name="triage",
                     handoffs=[billing])

    case = parse_case({"name": "bill", "input": "What do I owe?", "order": "exact",
                       "tool_calls": ["transfer_to_billing",
                                      {"name": "math", "args": {"task": {"contains": "2+3"}}},
                                      {"name": "add", "agent": "math", "args": {"a": 2}}],
                       "max_tool_calls": 2, "output": {"contains": "5 EUR"}})
    run = run_case_sync(team(), case)
    assert run.passed, run.explain()
    assert [(c.agent, c.name) for c in run.transcript.calls] == [
        (None, "transfer_to_billing"), (None, "math"), ("math", "add")]

    # a case that does not name the sub-agent sees only its own run's calls
    plain = parse_case({"name": "plain", "input": "What do I owe?", "order": "exact",
                        "tool_calls": ["transfer_to_billing", "math"]})
    assert run_case_sync(team(), plain).passed

    # a missing handoff is reported as such
    wrong = parse_case({"name": "wrong", "input": "What do I owe?",
                        "tool_calls": [{"name": "add", "agent": "billing"}]})
    failed = run_case_sync(team(), wrong)
    assert not failed.passed and "billing: add()" in failed.explain()


# -- the command line ------------------------------------------------------------------------
def test_reactloop_run_shows_the_handoff_and_the_sub_agents_calls_indented(tmp_path: Any) -> None:
    from _cli import reactloop

    proc = reactloop(tmp_path, "run", "--agent", "cli_agents:team", "What do I owe?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "You owe 5 EUR."
    err = proc.stderr
    assert "⇢ handed to billing" in err
    assert "→ math(" in err and "    math → add(" in err and "    math ← 5" in err
    assert "✓ completed · 3 iterations · 3 tool calls" in err
