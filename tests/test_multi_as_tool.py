"""Agents as tools (issue 24): ``agent.as_tool()`` runs a sub-agent inside the parent's run —
nested events, one usage total, the parent's deadline and cancellation, failures the parent
recovers from."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from reactloop import Agent, ModelRequest, ModelResponse, RunState, ToolCall, UserError, tool
from reactloop.events import Event, RunEndEvent
from reactloop.messages import Usage
from reactloop.testing import FunctionModel, ScriptedModel


def call(name: str, **arguments: Any) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall(name, arguments)], usage=Usage(10, 1))


def say(text: str, usage: Usage | None = None) -> ModelResponse:
    return ModelResponse(text=text, usage=usage or Usage(10, 1))


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


def math_agent(*script: Any, **kwargs: Any) -> Agent:
    return Agent(ScriptedModel(list(script)), name="math", tools=[add],
                 instructions="You do arithmetic.", **kwargs)


async def collect(agent: Agent, prompt: str) -> list[Event]:
    return [e async for e in agent.stream(prompt)]


# -- the tool --------------------------------------------------------------------------------
def test_as_tool_is_a_tool_with_one_required_task_string() -> None:
    t = math_agent().as_tool()
    assert t.name == "math"
    assert t.parameters["required"] == ["task"]
    assert t.parameters["properties"]["task"]["type"] == "string"
    assert "You do arithmetic." in t.description
    named = math_agent().as_tool("calculator", "Computes sums.")
    assert (named.name, named.description) == ("calculator", "Computes sums.")


def test_as_tool_checks_max_depth() -> None:
    with pytest.raises(UserError, match="max_depth"):
        math_agent().as_tool(max_depth=0)


# -- one run, nested -------------------------------------------------------------------------
def test_sub_run_events_reach_the_parent_stream_tagged_and_usage_adds_up() -> None:
    child = math_agent(call("add", a=2, b=3), say("five", Usage(20, 3)))
    parent = Agent(ScriptedModel([call("math", task="2+3?"), say("It is 5.", Usage(200, 7))]),
                   name="boss", tools=[child.as_tool()])
    events = asyncio.run(collect(parent, "What is 2+3?"))
    result = events[-1].result  # type: ignore[attr-defined]
    top = result.run_id
    nested = [e for e in events if e.run_id != top]
    assert nested and all(e.agent == "math" and e.parent_run_id == top for e in nested)
    assert all(e.agent is None and e.parent_run_id is None for e in events if e.run_id == top)
    types = [e.type for e in events]
    # the sub-run sits between the parent's tool_call and tool_result for the agent
    start, end = types.index("tool_call"), types.index("tool_result", types.index("run_end"))
    assert nested[0].type == "run_start" and nested[-1].type == "run_end"
    assert all(start < events.index(e) < end for e in nested)
    child_result = nested[-1].result  # type: ignore[attr-defined]
    assert child_result.agent == "math" and child_result.parent_run_id == top
    assert nested[0].to_dict()["agent"] == "math"
    assert "agent" not in events[0].to_dict() and "parent_run_id" not in events[0].to_dict()

    assert result.state is RunState.COMPLETED and result.output == "It is 5."
    assert result.agent == "boss"
    # totals: the parent's own calls plus the child's
    assert result.metrics.input_tokens == 10 + 200 + 10 + 20
    assert result.metrics.output_tokens == 1 + 7 + 1 + 3
    assert result.metrics.tool_calls == 1 + 1  # the agent call, the child's add
    by_agent = result.metrics_by_agent
    assert set(by_agent) == {"boss", "math"}
    assert (by_agent["math"].input_tokens, by_agent["math"].tool_calls) == (30, 1)
    assert (by_agent["boss"].input_tokens, by_agent["boss"].tool_calls) == (210, 1)
    assert by_agent["math"].iterations == 2
    # the steps keep the nesting: the agent call's result holds the sub-run
    [agent_result] = result.steps[0].results
    assert agent_result.content == "five" and agent_result.run is child_result
    assert agent_result.run.steps[0].results[0].result == 5


def test_run_without_streaming_nests_the_same_and_feeds_callbacks() -> None:
    seen: list[tuple[str, str | None]] = []
    finished: list[tuple[str, str | None]] = []

    class Recorder:
        def on_action(self, event: Event) -> None:
            seen.append((event.type, event.agent))

        def on_finish(self, result: Any) -> None:
            finished.append((result.agent, result.parent_run_id))

    child = math_agent(call("add", a=1, b=1), say("two"))
    parent = Agent(ScriptedModel([call("math", task="1+1"), say("2")]), name="boss",
                   tools=[child.as_tool()], callbacks=[Recorder()])
    result = parent.run_sync("1+1?")
    assert result.output == "2"
    assert seen == [("tool_call", None), ("tool_call", "math")]
    assert finished == [("math", result.run_id), ("boss", None)]
    assert result.metrics_by_agent["math"].tool_calls == 1


def test_a_typed_sub_agent_answers_as_json() -> None:
    class Sum(BaseModel):
        value: int
        explanation: str

    child = Agent(ScriptedModel(['{"value": 5, "explanation": "2+3"}']), name="typed",
                  output_type=Sum)
    parent = Agent(ScriptedModel([call("typed", task="2+3"), say("5")]), tools=[child.as_tool()])
    parent.run_sync("2+3?")
    sent = parent.model.requests[1].messages[-1]  # type: ignore[attr-defined]
    assert sent.role == "tool" and json.loads(sent.content) == {"value": 5,
                                                               "explanation": "2+3"}


def test_sub_runs_stream_live_while_the_batch_runs() -> None:
    """The consumer sees the sub-agent's tool_call while that tool still waits — only the
    consumer's reaction lets it finish (no waiting for the whole batch)."""
    release = asyncio.Event()

    @tool
    async def wait_for_release() -> str:
        """Wait until released."""
        await release.wait()
        return "released"

    child = Agent(ScriptedModel([call("wait_for_release"), say("done")]), name="waiter",
                  tools=[wait_for_release])
    parent = Agent(ScriptedModel([call("waiter", task="wait"), say("ok")]),
                   tools=[child.as_tool()], max_execution_time=30)

    async def main() -> RunState:
        async for event in parent.stream("go"):
            if event.type == "tool_call" and event.agent == "waiter":
                release.set()
            if isinstance(event, RunEndEvent) and event.agent is None:
                return event.result.state
        raise AssertionError("no run_end")

    assert asyncio.run(main()) is RunState.COMPLETED


def test_agents_as_tools_nest_and_stop_at_max_depth() -> None:
    leaf = Agent(ScriptedModel([say("leaf answer")]), name="leaf")
    mid = Agent(ScriptedModel([call("leaf", task="x"), say("mid answer")]), name="mid",
                tools=[leaf.as_tool(max_depth=1)])
    top = Agent(ScriptedModel([call("mid", task="y"), say("top answer")]), name="top",
                tools=[mid.as_tool()])
    events = asyncio.run(collect(top, "go"))
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.output == "top answer"
    mid_run = result.steps[0].results[0].run
    [refused] = mid_run.steps[0].results
    assert refused.error is not None and "at most 1 deep" in refused.error
    assert "max_depth" in refused.error and refused.run is None
    assert mid.model.requests[1].messages[-1].content.startswith("Error:")  # type: ignore[attr-defined]
    # deeper events keep their own parent: mid's events name top's run, leaf never ran
    assert {e.agent for e in events if e.agent} == {"mid"}


def test_depth_counts_every_level() -> None:
    leaf = Agent(ScriptedModel([say("leaf answer")]), name="leaf")
    mid = Agent(ScriptedModel([call("leaf", task="x"), say("mid answer")]), name="mid",
                tools=[leaf.as_tool(max_depth=2)])
    top = Agent(ScriptedModel([call("mid", task="y"), say("top answer")]), name="top",
                tools=[mid.as_tool()])
    events = asyncio.run(collect(top, "go"))
    result = events[-1].result  # type: ignore[attr-defined]
    leaf_events = [e for e in events if e.agent == "leaf"]
    mid_run_id = next(e.run_id for e in events if e.agent == "mid")
    assert leaf_events and all(e.parent_run_id == mid_run_id for e in leaf_events)
    by_agent = result.metrics_by_agent
    assert set(by_agent) == {"top", "mid", "leaf"}
    assert result.metrics.tool_calls == 2
    # every model call counted once: 2 each for top and mid, 1 for leaf, 10 tokens a call
    assert [by_agent[a].input_tokens for a in ("top", "mid", "leaf")] == [20, 20, 10]
    assert result.metrics.input_tokens == 50


# -- failures the parent recovers from -------------------------------------------------------
def test_a_failing_sub_agent_is_a_tool_error_the_parent_recovers_from() -> None:
    def broken(request: ModelRequest) -> ModelResponse:
        raise RuntimeError("model exploded")

    child = Agent(FunctionModel(broken), name="broken")
    parent = Agent(ScriptedModel([call("broken", task="x"), say("I did it myself.")]),
                   tools=[child.as_tool()])
    result = parent.run_sync("go")
    assert result.state is RunState.COMPLETED and result.output == "I did it myself."
    [r] = result.steps[0].results
    assert r.error is not None and "failed" in r.error and "model exploded" in r.error
    assert r.run.state is RunState.ERROR


def test_a_sub_agent_out_of_iterations_gives_its_partial_answer() -> None:
    child = math_agent(call("add", a=1, b=2), say("three-ish"), max_iterations=2)
    parent = Agent(ScriptedModel([call("math", task="1+2"), say("3")]), tools=[child.as_tool()])
    result = parent.run_sync("1+2?")
    assert result.state is RunState.COMPLETED
    [r] = result.steps[0].results
    assert r.error is None and r.run.state is RunState.MAX_ITERATIONS
    assert "whole budget" in r.content and "three-ish" in r.content


def test_a_sub_agent_out_of_time_is_a_tool_error_and_the_parent_goes_on() -> None:
    @tool
    async def forever() -> str:
        """Never returns."""
        await asyncio.Event().wait()
        return ""

    child = Agent(ScriptedModel([call("forever")]), name="slow", tools=[forever],
                  max_execution_time=0.2)
    parent = Agent(ScriptedModel([call("slow", task="x"), say("Gave up on slow.")]),
                   tools=[child.as_tool()])
    result = parent.run_sync("go")
    assert result.state is RunState.COMPLETED and result.output == "Gave up on slow."
    [r] = result.steps[0].results
    assert r.run.state is RunState.TIMED_OUT and "ran out of time" in (r.error or "")


# -- the parent's deadline and cancellation reach the child ------------------------------------
def _blocking_child(started: asyncio.Event, stopped: list[str]) -> Agent:
    @tool
    async def block() -> str:
        """Blocks until cancelled."""
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.append("block")
        return ""

    return Agent(ScriptedModel([call("block")]), name="child", tools=[block])


@pytest.mark.parametrize("stream", [False, True])
def test_the_parents_deadline_stops_the_child(stream: bool) -> None:
    stopped: list[str] = []
    ends: list[tuple[str | None, RunState]] = []

    class Ends:
        def on_finish(self, result: Any) -> None:
            ends.append((result.parent_run_id and result.agent, result.state))

    async def main() -> Any:
        child = _blocking_child(asyncio.Event(), stopped)
        parent = Agent(ScriptedModel([call("child", task="x")]), tools=[child.as_tool()],
                       max_execution_time=0.3, callbacks=[Ends()])
        if not stream:
            return await parent.run("go")
        return [e async for e in parent.stream("go")][-1].result  # type: ignore[attr-defined]

    result = asyncio.run(main())
    assert result.state is RunState.TIMED_OUT
    assert stopped == ["block"]
    assert ends[-1] == (None, RunState.TIMED_OUT)
    assert ends[0][0] == "child" and ends[0][1] in (RunState.TIMED_OUT, RunState.CANCELLED)
    # the unfinished agent call got its result in the parent's history
    assert result.messages[-1].role == "tool" and "time limit" in result.messages[-1].content


@pytest.mark.parametrize("stream", [False, True])
def test_cancelling_the_parent_cancels_the_child(stream: bool) -> None:
    stopped: list[str] = []
    ends: list[tuple[str, RunState]] = []

    class Ends:
        def on_finish(self, result: Any) -> None:
            ends.append((result.agent, result.state))

    async def main() -> None:
        started = asyncio.Event()
        child = _blocking_child(started, stopped)
        parent = Agent(ScriptedModel([call("child", task="x")]), name="parent",
                       tools=[child.as_tool()], callbacks=[Ends()])

        async def consume() -> None:
            if stream:
                async for _ in parent.stream("go"):
                    pass
            else:
                await parent.run("go")

        task = asyncio.ensure_future(consume())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert stopped == ["block"]
    assert ends == [("child", RunState.CANCELLED), ("parent", RunState.CANCELLED)]


# -- approvals from below ---------------------------------------------------------------------
def _approval_team(booked: list[str]) -> Agent:
    @tool(requires_approval=True)
    def book(flight: str) -> str:
        """Book a flight.

        Args:
            flight: the flight number
        """
        booked.append(flight)
        return f"booked {flight}"

    def booking_model(request: ModelRequest) -> ModelResponse | str:
        last = request.messages[-1]
        if last.role == "tool" and last.name == "book":
            return f"Done: {last.content}."
        return call("book", flight="LH123")

    def concierge_model(request: ModelRequest) -> ModelResponse | str:
        last = request.messages[-1]
        if last.role == "tool" and last.name == "booking":
            return f"Your trip: {last.content}"
        return call("booking", task="book LH123")

    booking = Agent(FunctionModel(booking_model), name="booking", tools=[book])
    return Agent(FunctionModel(concierge_model), name="concierge", tools=[booking.as_tool()])


def test_an_approval_inside_a_sub_agent_pauses_the_whole_run_and_resumes_into_it() -> None:
    booked: list[str] = []
    result = _approval_team(booked).run_sync("book me LH123")
    assert result.state is RunState.WAITING_FOR_APPROVAL and booked == []
    [pending] = result.pending_approvals
    assert (pending.tool_name, dict(pending.arguments)) == ("book", {"flight": "LH123"})
    saved = result.save()
    before = result.metrics.input_tokens

    # a fresh agent (as in another process) continues from the JSON
    booked2: list[str] = []
    resumed = _approval_team(booked2).resume_sync(saved, decisions=[pending.approve()])
    assert resumed.state is RunState.COMPLETED and booked2 == ["LH123"]
    assert resumed.output == "Your trip: Done: booked LH123."
    assert resumed.run_id == result.run_id  # the same run went on
    # the sub-run's usage before the pause is counted once (the answers carry no usage)
    assert before == 20 and resumed.metrics.input_tokens == before
    assert resumed.metrics_by_agent["booking"].input_tokens == 10
    assert resumed.metrics_by_agent["booking"].tool_calls == 1
    [agent_call] = [r for s in resumed.steps for r in s.results if r.name == "booking"]
    assert agent_call.run.state is RunState.COMPLETED
    assert [r.content for s in agent_call.run.steps for r in s.results] == ["booked LH123"]


def test_a_denial_inside_a_sub_agent_reaches_it() -> None:
    booked: list[str] = []
    team = _approval_team(booked)
    result = team.run_sync("book me LH123")
    [pending] = result.pending_approvals
    resumed = team.resume_sync(result, decisions=[pending.deny("too expensive")])
    assert resumed.state is RunState.COMPLETED and booked == []
    assert "too expensive" in resumed.output


def test_a_nested_approval_is_answered_from_another_process(tmp_path: Any) -> None:
    import subprocess
    import sys
    from pathlib import Path

    child = str(Path(__file__).with_name("multi_child.py"))
    store = str(tmp_path / "s.sqlite3")

    def run(*args: str) -> list[str]:
        out = subprocess.run([sys.executable, child, *args], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout.splitlines()

    lines = run("approve-wait", store, "trip", "book me LH123")
    pending = json.loads(next(x[2:] for x in lines if x.startswith("P ")))
    waiting = json.loads(next(x[2:] for x in lines if x.startswith("R ")))
    assert waiting["state"] == "waiting_for_approval"
    assert [p["tool_name"] for p in pending] == ["book"]
    decision = {"call_id": pending[0]["call_id"], "arguments_hash": pending[0]["arguments_hash"],
                "approved": True}
    lines = run("approve-resume", store, "trip", json.dumps([decision]))
    done = json.loads(next(x[2:] for x in lines if x.startswith("R ")))
    assert done["state"] == "completed" and done["output"] == "Your trip: Done: booked LH123."
    assert Path(store + ".booked").read_text() == "LH123\n"  # exactly once
    assert done["roles"] == ["user", "assistant", "tool", "assistant"]


# -- consumers of the stream: the top run's run_end is the end -------------------------------
def test_a_session_stores_the_parents_history_not_the_sub_runs(tmp_path: Any) -> None:
    child = math_agent(call("add", a=2, b=3), say("five"))
    parent = Agent(ScriptedModel([call("math", task="2+3"), say("5")]), name="boss",
                   tools=[child.as_tool()])
    session = parent.session("s", store=tmp_path / "s.sqlite3")

    async def main() -> list[Event]:
        return [e async for e in session.stream("2+3?")]

    events = asyncio.run(main())
    assert sum(isinstance(e, RunEndEvent) for e in events) == 2
    stored = parent.session("s", store=tmp_path / "s.sqlite3").messages
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[-1].content == "5" and session.last is not None
    assert session.last.agent == "boss"
    assert session.send_sync("again?").state is RunState.ERROR  # scripts ran out: one turn


def test_ag_ui_carries_sub_run_events_as_custom_events() -> None:
    pytest.importorskip("ag_ui")
    from reactloop.serve._agui import AGUITranslator

    child = math_agent(call("add", a=2, b=3), say("five"))
    parent = Agent(ScriptedModel([call("math", task="2+3"), say("5")]), tools=[child.as_tool()])
    events = asyncio.run(collect(parent, "2+3?"))
    translator = AGUITranslator("thread", "run")
    out = [e for ev in events for e in translator.translate(ev)]
    kinds = [e.type.value if hasattr(e.type, "value") else str(e.type) for e in out]
    assert kinds.count("RUN_FINISHED") == 1 and kinds[-1] == "RUN_FINISHED"
    nested = [e for e in out if getattr(e, "name", None) == "reactloop.sub_run"]
    assert {e.value["agent"] for e in nested} == {"math"}
    assert nested[0].value["type"] == "run_start" and nested[-1].value["type"] == "run_end"


# -- questions from below ---------------------------------------------------------------------
def _asking_team() -> Agent:
    def booking_model(request: ModelRequest) -> ModelResponse | str:
        last = request.messages[-1]
        if last.role == "user" and "date" in last.content:  # the answer
            return call("task_completion", result=f"Booked for {last.content}.")
        return call("ask_question", question="For which date?")

    def concierge_model(request: ModelRequest) -> ModelResponse | str:
        last = request.messages[-1]
        if last.role == "tool" and last.name == "booking":
            return f"Your trip: {last.content}"
        return call("booking", task="book a flight to Rome")

    booking = Agent(FunctionModel(booking_model), name="booking", loop_control=True)
    return Agent(FunctionModel(concierge_model), name="concierge", tools=[booking.as_tool()])


def test_a_sub_agents_question_pauses_the_whole_run_and_the_answer_goes_to_it() -> None:
    waiting = _asking_team().run_sync("a flight to Rome")
    assert waiting.state is RunState.WAITING_FOR_USER
    assert waiting.output == "For which date?" and waiting.pending_approvals == ()
    # from JSON, with fresh agents (as in another process)
    done = _asking_team().resume_sync(waiting.save(), "the date is May 3")
    assert done.state is RunState.COMPLETED, done.output
    assert done.output == "Your trip: Booked for the date is May 3."
    assert done.run_id == waiting.run_id
    assert [m.role for m in done.messages] == ["user", "assistant", "tool", "assistant"]
    # a bare history (what a session keeps) works the same
    again = _asking_team().run_sync("the date is May 4", history=waiting.messages)
    assert again.output == "Your trip: Booked for the date is May 4."
    # a conversation says what it waits for
    chat = _asking_team().conversation()
    chat.send_sync("a flight to Rome")
    assert chat.waiting_for == "For which date?"
    assert chat.send_sync("the date is May 5").state is RunState.COMPLETED
    assert chat.waiting_for is None


def test_a_sub_agents_question_is_answered_in_a_session_in_another_process(tmp_path: Any) -> None:
    import subprocess
    import sys
    from pathlib import Path

    child = str(Path(__file__).with_name("multi_child.py"))
    store = str(tmp_path / "s.sqlite3")

    def send(text: str) -> dict[str, Any]:
        out = subprocess.run([sys.executable, child, "ask", store, "trip", text],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return json.loads(next(x[2:] for x in out.stdout.splitlines() if x.startswith("R ")))

    first = send("a flight to Rome")
    assert (first["state"], first["output"]) == ("waiting_for_user", "For which date?")
    second = send("the date is May 3")
    assert second["state"] == "completed"
    assert second["output"] == "Your trip: Booked for the date is May 3."
    assert second["roles"] == ["user", "assistant", "tool", "assistant"]
