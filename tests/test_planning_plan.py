"""Planning (N1): the update_plan tool, plan_update events, the plan at the end of each
request, result.plan; and retrieved context (context_providers) in the volatile tail."""

from __future__ import annotations

import asyncio
import json

import pytest

from reactloop import Agent, Message, PromptBuilder, RunState, ToolCall
from reactloop.errors import ToolRetry
from reactloop.events import Event, PlanUpdateEvent
from reactloop.planning import NO_PLAN, Plan, PlanStep, plan_from_history, update
from reactloop.testing import ScriptedModel


def plan_call(**arguments: object) -> ToolCall:
    return ToolCall("update_plan", arguments)


def stream(agent: Agent, prompt: str, history: list[Message] | None = None) -> list[Event]:
    async def collect() -> list[Event]:
        return [e async for e in agent.stream(prompt, history=history or [])]

    return asyncio.run(collect())


# -- the plan value ------------------------------------------------------------------------
def test_update_makes_and_changes_a_plan() -> None:
    plan = update(None, goal="Ship it", steps=["build", "test", "release"])
    assert plan.goal == "Ship it" and [s.status for s in plan.steps] == ["pending"] * 3
    assert plan.current_step == 0 and plan.current == PlanStep("build")
    plan = update(plan, step=1, status="in_progress")
    plan = update(plan, step=2, status="in_progress")
    assert plan.current_step == 0  # the first step in progress is the current one
    plan = update(plan, step=1, result="built v1.2")  # a result alone completes the step
    assert plan.steps[0] == PlanStep("build", "completed", "built v1.2")
    assert plan.current_step == 1
    plan = update(plan, steps=["build", "test", "sign", "release"])  # replanning keeps status
    assert [s.status for s in plan.steps] == ["completed", "in_progress", "pending", "pending"]
    for i in (2, 3, 4):
        plan = update(plan, step=i, status="skipped" if i == 3 else "completed")
    assert plan.done and plan.current is None
    assert "All steps are finished" in plan.render()


@pytest.mark.parametrize("kwargs, message", [
    ({}, "Nothing to update"),
    ({"step": 1, "status": "completed"}, "no steps yet"),
    ({"steps": ["a"], "step": 3, "status": "completed"}, "from 1 to 1"),
    ({"steps": ["a"], "step": 1, "status": "finished"}, "status must be one of"),
    ({"goal": "g", "status": "completed"}, "Pass step"),
])
def test_misuse_is_explained_to_the_model(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ToolRetry, match=message):
        update(None, **kwargs)  # type: ignore[arg-type]


def test_render_marks_status_and_current_step() -> None:
    plan = Plan("Find flights", (PlanStep("search", "completed", "3 found"),
                                 PlanStep("compare", "in_progress"), PlanStep("book")))
    text = plan.render()
    assert "Goal: Find flights" in text
    assert "1. [x] search — 3 found" in text
    assert "2. [>] compare  <- current step" in text
    assert "3. [ ] book" in text
    assert Plan.from_dict(json.loads(json.dumps(plan.to_dict()))) == plan


# -- in a run ------------------------------------------------------------------------------
def test_plan_updates_events_notes_and_result() -> None:
    model = ScriptedModel([
        plan_call(goal="Add numbers", steps=["add 1 and 2", "report"]),
        plan_call(step=1, status="completed", result="3"),
        "The answer is 3.",
    ])
    agent = Agent(model=model, planning=True, instructions="Be exact.")
    events = stream(agent, "What is 1+2?")
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.state is RunState.COMPLETED
    updates = [e for e in events if isinstance(e, PlanUpdateEvent)]
    assert len(updates) == 2
    assert updates[0].plan.goal == "Add numbers" and updates[0].plan.current_step == 0
    assert updates[1].plan.steps[0] == PlanStep("add 1 and 2", "completed", "3")
    # the plan is the last thing of every request, never in the system prompt
    first, second, third = model.requests
    assert first.notes[-1] == NO_PLAN
    assert "1. [ ] add 1 and 2  <- current step" in second.notes[-1]
    assert "1. [x] add 1 and 2 — 3" in third.notes[-1]
    assert "2. [ ] report  <- current step" in third.notes[-1]
    assert all("plan" not in r.system.lower() for r in model.requests)
    assert first.system == second.system == third.system
    assert third.messages_with_notes()[-1].content.endswith(third.notes[-1])
    assert "update_plan" in [t.name for t in first.tools]
    # the result carries the plan; the stored history has no plan notes
    assert result.plan == updates[1].plan
    assert all("<- current step" not in m.content for m in result.messages)


def test_a_bad_update_is_a_tool_error_without_an_event() -> None:
    model = ScriptedModel([plan_call(step=4, status="completed"), "ok"])
    events = stream(Agent(model=model, planning=True), "go")
    assert not any(isinstance(e, PlanUpdateEvent) for e in events)
    errors = [e for e in events if e.type == "tool_error"]
    assert errors and "no steps yet" in errors[0].result.error  # type: ignore[attr-defined]
    assert events[-1].result.plan is None  # type: ignore[attr-defined]


def test_the_plan_carries_over_to_the_next_turn() -> None:
    model = ScriptedModel([
        plan_call(goal="Trip", steps=["flights", "hotel"]),
        plan_call(step=1, status="completed", result="LH123"),
        ToolCall("ask_question", {"question": "Which hotel area?"}),
        plan_call(step=2, status="completed", result="Mitte"),
        ToolCall("task_completion", {"result": "Booked."}),
    ])
    agent = Agent(model=model, planning=True, loop_control=True)
    chat = agent.conversation()
    first = asyncio.run(chat.send("Plan my trip"))
    assert first.state is RunState.WAITING_FOR_USER
    assert first.plan.steps[0].status == "completed"
    second = asyncio.run(chat.send("Near Mitte"))
    assert "1. [x] flights — LH123" in model.requests[3].notes[-1]  # restored from history
    assert second.plan.done and second.plan.goal == "Trip"
    assert plan_from_history(second.messages) == second.plan


def test_parallel_plan_updates_in_one_step_apply_in_order() -> None:
    model = ScriptedModel([
        [plan_call(goal="G", steps=["a", "b"]), plan_call(step=1, status="completed")],
        "done",
    ])
    events = stream(Agent(model=model, planning=True), "go")
    plans = [e.plan for e in events if isinstance(e, PlanUpdateEvent)]
    assert len(plans) == 2 and plans[-1].steps[0].status == "completed"


def test_planning_off_means_no_tool_and_no_plan() -> None:
    model = ScriptedModel(["hi"])
    result = Agent(model=model).run_sync("hello")
    assert result.plan is None and model.requests[0].notes == ()
    assert "update_plan" not in [t.name for t in model.requests[0].tools]


# -- retrieved context ---------------------------------------------------------------------
def test_context_providers_text_lands_at_the_end_of_every_request_of_the_turn() -> None:
    seen: list[str] = []

    async def docs(prompt: str) -> str:
        seen.append(prompt)
        return f"[doc about {prompt}]"

    model = ScriptedModel([plan_call(goal="g", steps=["s"]), "answer"])
    agent = Agent(model=model, planning=True,
                  context_providers=[docs, lambda p: None, lambda p: "second source"])
    result = agent.run_sync("otters")
    assert seen == ["otters"]  # asked once per turn, not per iteration
    for request in model.requests:
        assert "[doc about otters]" not in request.system
        assert all("[doc about otters]" not in m.content for m in request.messages)
        # volatile order: plan, then retrieved context
        assert request.notes[-1] == "[doc about otters]\n\nsecond source"
        assert request.notes[0].startswith(("Plan:", "Current plan"))
        last = request.messages_with_notes()[-1]
        assert last.role == "user" and last.content.endswith("second source")
    assert all("[doc about otters]" not in m.content for m in result.messages)


def test_retrieved_context_follows_the_prompt_builder() -> None:
    model = ScriptedModel(["a"])
    Agent(model=model, context_providers=[lambda p: "RAG"],
          prompt=PromptBuilder().drop("retrieved")).run_sync("q")
    assert model.requests[0].notes == ()
