"""The agent loop through the public API, with the model replaced by test doubles."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest

from reactloop import (
    Agent,
    Message,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    RunState,
    ToolCall,
    ToolContext,
    UserError,
    tool,
)
from reactloop.errors import ModelError, ModelNotAvailable
from reactloop.messages import messages_from_json, messages_to_json
from reactloop.testing import FunctionModel, ScriptedModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


def call(name: str, **arguments: Any) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall(name, arguments)])


# -- the basic loop ------------------------------------------------------------------------
def test_tool_call_then_answer() -> None:
    model = ScriptedModel([call("add", a=2, b=3), "The sum is 5."])
    result = Agent(model=model, tools=[add]).run_sync("What is 2+3?")
    assert result.state is RunState.COMPLETED and result.finished
    assert result.output == "The sum is 5."
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    tool_msg = result.messages[2]
    assert tool_msg.content == "5" and tool_msg.name == "add"
    assert tool_msg.tool_call_id == result.messages[1].tool_calls[0].id
    assert result.metrics.iterations == 2 and result.metrics.tool_calls == 1
    assert result.metrics.success and result.metrics.input_tokens > 0
    [step] = result.steps[:1]
    assert step.iteration == 1 and step.results[0].result == 5
    assert step.started_at <= step.ended_at
    # the second request carries the tool result
    assert model.requests[1].messages[-1].content == "5"


def test_agent_without_tools_makes_one_call() -> None:
    model = ScriptedModel(["Hello!"])
    result = Agent(model=model, instructions="Be brief.").run_sync("Hi")
    assert result.output == "Hello!" and result.metrics.iterations == 1
    [request] = model.requests
    assert request.tools == () and request.system == "Be brief."


def test_history_round_trips_through_json() -> None:
    model = ScriptedModel([call("add", a=1, b=2), "3"])
    result = Agent(model=model, tools=[add]).run_sync("1+2?")
    text = messages_to_json(result.messages)
    assert messages_from_json(text) == list(result.messages)
    json.loads(result.to_json())  # the whole result is JSON too


# -- budget awareness (L3) -----------------------------------------------------------------
def test_budget_notes_and_forced_last_iteration() -> None:
    model = FunctionModel(lambda req: call("add", a=len(req.messages), b=1))
    result = Agent(model=model, tools=[add], max_iterations=10).run_sync("loop forever")
    reqs = model.requests
    assert len(reqs) == 10
    assert all(not r.notes for r in reqs[:7])
    assert "2 iterations left" in reqs[7].notes[-1]
    assert "1 iteration left" in reqs[8].notes[-1]
    assert reqs[9].tools == () and "last iteration" in reqs[9].notes[-1]
    assert reqs[9].declared_tools == reqs[0].tools  # the full list stays available to adapters
    # the system prompt never changes and the history only grows
    assert len({r.system for r in reqs}) == 1
    for before, after in itertools.pairwise(reqs):
        assert after.messages[: len(before.messages)] == before.messages
    # budget notes are never stored
    assert not any("iteration" in m.content and "left" in m.content for m in result.messages)
    assert result.state is RunState.MAX_ITERATIONS


def test_forced_answer_text_becomes_output() -> None:
    model = ScriptedModel([call("add", a=1, b=1), "Best guess: 2"])
    result = Agent(model=model, tools=[add], max_iterations=2).run_sync("1+1?")
    assert result.state is RunState.MAX_ITERATIONS
    assert result.output == "Best guess: 2"
    assert not result.metrics.success


def test_fallback_when_forced_answer_is_empty() -> None:
    model = ScriptedModel([call("add", a=1, b=1), ModelResponse(text="")])
    result = Agent(model=model, tools=[add], max_iterations=2).run_sync("1+1?")
    assert result.state is RunState.MAX_ITERATIONS
    assert "budget of 2 iterations" in result.output
    assert "add(a=1, b=1) → 2" in result.output


# -- tools in the loop (L4, L5) ------------------------------------------------------------
def test_calls_of_one_response_run_concurrently_in_call_order() -> None:
    running = 0
    peak = 0

    async def probe(tag: str) -> str:
        """Probe concurrency.

        Args:
            tag: a label
        """
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        for _ in range(5):
            await asyncio.sleep(0)  # yield to the other calls
        running -= 1
        return tag

    calls = [ToolCall("probe", {"tag": t}) for t in "abc"]
    result = Agent(model=ScriptedModel([calls, "done"]), tools=[probe]).run_sync("go")
    assert peak == 3
    assert [m.content for m in result.messages if m.role == "tool"] == ["a", "b", "c"]

    peak = 0
    Agent(model=ScriptedModel([calls, "done"]), tools=[probe], max_parallel_tools=1).run_sync("go")
    assert peak == 1


def test_sync_tools_run_in_worker_threads() -> None:
    import threading

    barrier = threading.Barrier(2, timeout=30)

    def meet(who: str) -> str:
        """Wait for the other caller.

        Args:
            who: a name
        """
        barrier.wait()  # deadlocks (then fails) unless both calls run at the same time
        return who

    calls = [ToolCall("meet", {"who": "x"}), ToolCall("meet", {"who": "y"})]
    result = Agent(model=ScriptedModel([calls, "ok"]), tools=[meet]).run_sync("go")
    assert [r.result for r in result.steps[0].results] == ["x", "y"]


def test_errors_go_back_to_the_model_and_the_loop_continues() -> None:
    def explode() -> None:
        """Always fails."""
        raise RuntimeError("disk on fire")

    model = ScriptedModel([
        call("ad", a=1, b=2),
        call("add", a="one", b=2),
        call("explode"),
        "recovered",
    ])
    result = Agent(model=model, tools=[add, explode]).run_sync("go")
    assert result.state is RunState.COMPLETED and result.output == "recovered"
    errors = [m for m in result.messages if m.role == "tool"]
    assert all(m.is_error for m in errors)
    assert "Did you mean 'add'?" in errors[0].content
    assert "argument 'a'" in errors[1].content
    assert errors[2].content == "Error: RuntimeError: disk on fire"
    assert model.requests[3].messages[-1] == errors[2]


def test_tool_timeout_from_agent_setting() -> None:
    async def hang() -> str:
        """Hangs."""
        await asyncio.Event().wait()
        return "never"

    model = ScriptedModel([call("hang"), "gave up"])
    result = Agent(model=model, tools=[hang], tool_timeout=0.05).run_sync("go")
    assert "timed out" in result.steps[0].results[0].error  # type: ignore[operator]
    assert result.output == "gave up"


def test_identical_call_is_answered_from_the_earlier_result() -> None:
    count = 0

    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: the key
        """
        nonlocal count
        count += 1
        return f"value-{count}"

    @tool(repeatable=True)
    def clock() -> int:
        """A clock."""
        nonlocal count
        count += 1
        return count

    model = ScriptedModel([call("lookup", key="k"), call("lookup", key="k"), "done"])
    result = Agent(model=model, tools=[lookup]).run_sync("go")
    assert count == 1
    repeated = result.steps[1].results[0]
    assert repeated.cached and repeated.result == "value-1"
    assert "already called lookup" in repeated.content

    count = 0
    model = ScriptedModel([call("clock"), call("clock"), "done"])
    result = Agent(model=model, tools=[clock]).run_sync("go")
    assert count == 2 and not result.steps[1].results[0].cached


# -- loop control (L6, L7) -----------------------------------------------------------------
def test_task_completion_ends_the_run() -> None:
    model = ScriptedModel([call("task_completion", result="All done: 5")])
    result = Agent(model=model, loop_control=True).run_sync("go")
    assert result.state is RunState.COMPLETED and result.output == "All done: 5"
    assert {t.name for t in model.requests[0].tools} == {"task_completion", "ask_question",
                                                         "converse"}


def test_ask_question_waits_for_user() -> None:
    model = ScriptedModel([call("ask_question", question="Which city?")])
    result = Agent(model=model, loop_control=True).run_sync("book a flight")
    assert result.state is RunState.WAITING_FOR_USER and result.output == "Which city?"


def test_converse_ends_the_run() -> None:
    model = ScriptedModel([call("converse", message="Hi there!")])
    result = Agent(model=model, loop_control=True).run_sync("hello")
    assert result.state is RunState.COMPLETED and result.output == "Hi there!"


def test_no_tool_call_is_reminded_twice_then_accepted() -> None:
    model = ScriptedModel(["text 1", "text 2", "text 3"])

    async def collect() -> list[Any]:
        agent = Agent(model=model, loop_control=True)
        return [e async for e in agent.stream("go")]

    events = asyncio.run(collect())
    no_calls = [e for e in events if e.type == "no_tool_call"]
    assert [e.reminded for e in no_calls] == [True, True, False]
    result = events[-1].result
    assert result.state is RunState.COMPLETED and result.output == "text 3"
    reminders = [m for m in result.messages if m.metadata.get("kind") == "reminder"]
    assert len(reminders) == 2 and "Call one of your tools" in reminders[0].content


def test_empty_reply_is_reminded_without_loop_control() -> None:
    model = ScriptedModel([ModelResponse(text=""), "finally"])
    result = Agent(model=model, tools=[add]).run_sync("go")
    assert result.output == "finally" and result.metrics.iterations == 2


# -- truncated responses -------------------------------------------------------------------
def test_truncated_response_is_retried_with_more_room() -> None:
    model = ScriptedModel([ModelResponse(text="The ans", finish_reason="length"), "The answer."])
    agent = Agent(model=model, model_settings=ModelSettings(max_tokens=10))
    result = agent.run_sync("go")
    assert result.output == "The answer."
    assert [r.settings.max_tokens for r in model.requests] == [10, 20]


def test_truncated_twice_is_fed_back() -> None:
    cut = ModelResponse(text="partial", finish_reason="length")
    model = ScriptedModel([cut, cut, "short answer"])
    result = Agent(model=model, tools=[add]).run_sync("go")
    assert result.output == "short answer"
    assert any("cut off" in m.content for m in model.requests[2].messages)


# -- limits and failures (L8, L9) ----------------------------------------------------------
def test_max_execution_time_times_out_with_fallback() -> None:
    async def never(_req: ModelRequest) -> ModelResponse:
        await asyncio.Event().wait()
        raise AssertionError

    result = Agent(model=FunctionModel(never), max_execution_time=0.05).run_sync("go")
    assert result.state is RunState.TIMED_OUT
    assert "time limit" in result.output


def test_cancelling_the_task_records_cancelled_then_propagates() -> None:
    started = asyncio.Event()
    finished: list[Any] = []

    class Seen:
        def on_finish(self, result: Any) -> None:
            finished.append(result)

    async def wait_forever(_req: ModelRequest) -> ModelResponse:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError

    async def main() -> bool:
        agent = Agent(model=FunctionModel(wait_forever), callbacks=[Seen()])
        task = asyncio.create_task(agent.run("go"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return task.cancelled()

    assert asyncio.run(main()) is True  # asyncio's contract: the caller's task is cancelled
    [result] = finished  # ...and the run recorded its end first
    assert result.state is RunState.CANCELLED and "cancelled" in result.output


def test_model_failure_is_error_state_with_the_error_kept() -> None:
    boom = ModelError("provider exploded")
    result = Agent(model=ScriptedModel([boom])).run_sync("go")
    assert result.state is RunState.ERROR and result.error is boom
    assert "provider exploded" in result.output


# -- events and callbacks (L11) ------------------------------------------------------------
def test_stream_yields_typed_events_in_order() -> None:
    model = ScriptedModel([call("add", a=1, b=2), "three"])

    async def collect() -> list[str]:
        return [e.type async for e in Agent(model=model, tools=[add]).stream("go")]

    types = asyncio.run(collect())
    assert types[:5] == ["run_start", "iteration_start", "request", "model_response",
                         "tool_call"]
    assert types[5] == "tool_result"
    assert types[6:9] == ["iteration_start", "request", "text_delta"]
    assert types[-2:] == ["model_response", "run_end"]


def test_streamed_and_plain_runs_end_identically() -> None:
    def script() -> ScriptedModel:
        return ScriptedModel([call("add", a=1, b=2), "three point zero"])

    plain = Agent(model=script(), tools=[add]).run_sync("go")

    async def streamed() -> Any:
        deltas = []
        async for e in Agent(model=script(), tools=[add]).stream("go"):
            if e.type == "text_delta":
                deltas.append(e.text)
            if e.type == "run_end":
                return e.result, "".join(deltas)

    result, text = asyncio.run(streamed())
    assert text == "three point zero" == result.output == plain.output

    def shape(messages: Any) -> list[Any]:  # call ids are unique per run, the rest is equal
        return [(m.role, m.content, [(c.name, dict(c.arguments)) for c in m.tool_calls])
                for m in messages]

    assert shape(result.messages) == shape(plain.messages)


def test_tool_errors_are_tool_error_events_with_traceback() -> None:
    def bad() -> None:
        """Fails."""
        raise ValueError("nope")

    async def collect() -> list[Any]:
        agent = Agent(model=ScriptedModel([call("bad"), "ok"]), tools=[bad])
        return [e async for e in agent.stream("go") if e.type == "tool_error"]

    [event] = asyncio.run(collect())
    assert event.result.error == "ValueError: nope" and "Traceback" in event.result.traceback


def test_callbacks_are_fed_and_a_failing_callback_does_not_break_the_run() -> None:
    seen: list[str] = []

    class Recorder:
        def on_start(self, event: Any) -> None:
            seen.append("start")

        def on_action(self, event: Any) -> None:
            seen.append(f"action:{event.call.name}")

        def on_observation(self, event: Any) -> None:
            seen.append(f"observation:{event.result.result}")

        def on_step(self, step: Any) -> None:
            seen.append(f"step:{step.iteration}")

        async def on_finish(self, result: Any) -> None:
            seen.append(f"finish:{result.state.value}")

    class Broken:
        def on_start(self, event: Any) -> None:
            raise RuntimeError("callback bug")

    model = ScriptedModel([call("add", a=1, b=2), "3"])
    result = Agent(model=model, tools=[add], callbacks=[Broken(), Recorder()]).run_sync("go")
    assert result.state is RunState.COMPLETED
    assert seen == ["start", "action:add", "observation:3", "step:1", "step:2",
                    "finish:completed"]


def test_on_error_callback_sees_model_errors() -> None:
    errors: list[BaseException] = []

    class OnError:
        def on_error(self, error: BaseException) -> None:
            errors.append(error)

    Agent(model=ScriptedModel([ModelError("x")]), callbacks=[OnError()]).run_sync("go")
    assert len(errors) == 1 and str(errors[0]) == "x"


def test_tools_emit_custom_events() -> None:
    def show(place: str, ctx: ToolContext) -> str:
        """Show a place on the map.

        Args:
            place: where
        """
        ctx.emit("ui", {"show": place})
        return "shown"

    assert "ctx" not in Tool_params(show)

    async def collect() -> list[Any]:
        agent = Agent(model=ScriptedModel([call("show", place="Gate 12"), "ok"]), tools=[show])
        return [e async for e in agent.stream("go") if e.type == "custom"]

    [event] = asyncio.run(collect())
    assert event.name == "ui" and event.data == {"show": "Gate 12"}


def Tool_params(fn: Any) -> dict[str, Any]:
    from reactloop import Tool

    return dict(Tool(fn).parameters["properties"])


# -- multi-turn (M1) -----------------------------------------------------------------------
def test_conversation_keeps_history_across_messages() -> None:
    model = ScriptedModel(["Hi Ada.", "Your name is Ada."])
    conv = Agent(model=model).conversation()
    conv.send_sync("My name is Ada.")
    result = conv.send_sync("What is my name?")
    assert result.output == "Your name is Ada."
    assert [m.content for m in model.requests[1].messages] == [
        "My name is Ada.", "Hi Ada.", "What is my name?"]


def test_waiting_for_user_then_answer_continues_the_conversation() -> None:
    model = ScriptedModel([
        call("ask_question", question="Which city?"),
        call("task_completion", result="Booked to Paris."),
    ])
    conv = Agent(model=model, loop_control=True).conversation()
    assert conv.send_sync("Book a flight").state is RunState.WAITING_FOR_USER
    result = conv.send_sync("Paris")
    assert result.output == "Booked to Paris."
    assert model.requests[1].messages[-1] == Message.user("Paris")


# -- configuration errors ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"tools": [42]}, "is not a tool"),
        ({"tools": [add, add.fn]}, "two tools are named 'add'"),
        ({"max_iterations": 0}, "max_iterations must be an integer of at least 1"),
        ({"max_execution_time": -1}, "max_execution_time must be a positive, finite number"),
        ({"model": "gpt-4"}, "unknown model 'gpt-4'"),
        ({"model": "openai:"}, "names no model"),
        ({"mcp_servers": ["not a server"]}, "is not a tool source"),
    ],
)
def test_bad_configuration_is_a_user_error(kwargs: dict[str, Any], fragment: str) -> None:
    kwargs.setdefault("model", ScriptedModel([]))
    with pytest.raises(UserError, match=fragment.replace("(", r"\(")):
        Agent(**kwargs)


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    with pytest.raises(ModelNotAvailable, match=r"pip install 'reactloop\[local\]'"):
        Agent(model="local")


def test_call_ids_are_unique_across_turns() -> None:
    model = ScriptedModel([call("add", a=1, b=2), "3", call("add", a=2, b=2), "4"])
    conv = Agent(model=model, tools=[add]).conversation()
    conv.send_sync("1+2?")
    result = conv.send_sync("2+2?")
    ids = [c.id for m in result.messages for c in m.tool_calls]
    assert len(ids) == 2 and len(set(ids)) == 2
