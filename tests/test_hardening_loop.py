"""Issue 10, loop side: cancellation, endings, exceptions, results and ids, notes.

Each test failed before its fix (see the closing note of the hardening issue)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, ModelResponse, RunState, ToolCall, tool
from reactloop.context import check_pairs
from reactloop.errors import UserError
from reactloop.events import Event
from reactloop.messages import ModelRequest
from reactloop.testing import FunctionModel, ScriptedModel


def call(name: str, id: str | None = None, **arguments: Any) -> ToolCall:
    return ToolCall(name, arguments, id)


class Finished:
    """Callbacks that keep the run's result (the run_end the loop records)."""

    def __init__(self) -> None:
        self.results: list[Any] = []

    def on_finish(self, result: Any) -> None:
        self.results.append(result)


def blocking_tool(started: asyncio.Event) -> Any:
    @tool
    async def slow(x: int) -> int:
        """Wait forever.

        Args:
            x: anything
        """
        started.set()
        await asyncio.Event().wait()
        return x

    return slow


@tool(inline=True)
def add(a: int, b: int) -> int:
    """Add.

    Args:
        a: a
        b: b
    """
    return a + b


# -- cancellation follows asyncio --------------------------------------------------------------
def test_enclosing_timeout_still_bounds_the_caller_and_the_run_records_cancelled() -> None:
    seen = Finished()

    async def never(_r: ModelRequest) -> ModelResponse:
        await asyncio.Event().wait()
        raise AssertionError

    async def main() -> str:
        agent = Agent(model=FunctionModel(never), callbacks=[seen])
        try:
            async with asyncio.timeout(0.05):
                await agent.run("go")
        except TimeoutError:
            return "timeout reached the caller"
        return "swallowed"

    assert asyncio.run(main()) == "timeout reached the caller"
    assert [r.state for r in seen.results] == [RunState.CANCELLED]


def test_a_failing_sibling_in_a_task_group_cancels_the_run() -> None:
    seen = Finished()
    started = asyncio.Event()

    async def never(_r: ModelRequest) -> ModelResponse:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError

    async def sibling() -> None:
        await started.wait()
        raise ValueError("sibling failed")

    async def main() -> None:
        agent = Agent(model=FunctionModel(never), callbacks=[seen])
        async with asyncio.TaskGroup() as tg:
            tg.create_task(agent.run("go"))
            tg.create_task(sibling())

    with pytest.raises(ExceptionGroup) as info:
        asyncio.run(main())
    assert info.group_contains(ValueError, match="sibling failed")
    assert [r.state for r in seen.results] == [RunState.CANCELLED]


def test_cancelled_while_a_tool_runs_answers_every_call_and_propagates() -> None:
    seen = Finished()

    async def main() -> None:
        started = asyncio.Event()
        model = ScriptedModel([ModelResponse(tool_calls=[call("slow", x=1), call("add", a=1, b=2)])])
        agent = Agent(model=model, tools=[blocking_tool(started), add], callbacks=[seen])
        task = asyncio.create_task(agent.run("go"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    [result] = seen.results
    assert result.state is RunState.CANCELLED
    assert check_pairs(result.messages) == []  # every call has exactly one result
    tool_msgs = [m for m in result.messages if m.role == "tool"]
    assert [m.name for m in tool_msgs] == ["slow", "add"]
    assert tool_msgs[0].is_error and "cancelled" in tool_msgs[0].content
    assert tool_msgs[1].content == "3"  # the call that finished keeps its real result
    assert "No tools were called" not in result.output and "slow" in result.output


def test_timed_out_while_a_tool_runs_leaves_a_usable_conversation() -> None:
    started = asyncio.Event()
    model = ScriptedModel([ModelResponse(tool_calls=[call("slow", x=1)]), "second turn ok"])
    agent = Agent(model=model, tools=[blocking_tool(started)], max_execution_time=0.2)
    conversation = agent.conversation()
    first = conversation.send_sync("go")
    assert first.state is RunState.TIMED_OUT
    assert check_pairs(first.messages) == []
    assert "slow(x=1)" in first.output and "time limit" in first.output
    second = conversation.send_sync("again")
    assert second.state is RunState.COMPLETED and second.output == "second turn ok"
    assert check_pairs(model.requests[-1].messages) == []  # what the provider would get


def test_closing_the_stream_mid_batch_answers_the_calls_without_raising() -> None:
    written: list[Any] = []

    async def main() -> None:
        started = asyncio.Event()
        model = ScriptedModel([ModelResponse(tool_calls=[call("slow", x=1)])])
        agent = Agent(model=model, tools=[blocking_tool(started)])
        stream = agent.stream("go", on_message=written.append)
        async for event in stream:
            if event.type == "tool_call":
                break
        await stream.aclose()

    asyncio.run(main())
    assert [m.role for m in written] == ["user", "assistant", "tool"]
    assert written[-1].is_error and "cancelled" in written[-1].content


def test_a_tool_raising_cancelled_error_is_an_error_result() -> None:
    @tool
    async def flaky() -> str:
        """Raise CancelledError by itself."""
        raise asyncio.CancelledError

    model = ScriptedModel([ModelResponse(tool_calls=[call("flaky")]), "recovered"])
    result = Agent(model=model, tools=[flaky]).run_sync("go")
    assert result.state is RunState.COMPLETED and result.output == "recovered"
    assert "CancelledError" in model.requests[1].messages[-1].content


# -- exceptions that used to escape run() ------------------------------------------------------
def test_a_raising_context_provider_is_a_warning_and_the_run_goes_on() -> None:
    def broken(_prompt: str) -> str:
        raise RuntimeError("index offline")

    def fine(_prompt: str) -> str:
        return "retrieved fact"

    async def main() -> list[Event]:
        model = ScriptedModel(["answer"])
        agent = Agent(model=model, context_providers=[broken, fine])
        events = [e async for e in agent.stream("q")]
        assert "retrieved fact" in model.requests[0].notes[-1]
        return events

    events = asyncio.run(main())
    warnings = [e for e in events if e.type == "warning"]
    assert len(warnings) == 1 and "index offline" in warnings[0].to_dict()["message"]
    assert events[-1].to_dict()["result"]["state"] == "completed"


@pytest.mark.parametrize("exc", [SystemExit(2), type("Odd", (BaseException,), {})()])
def test_base_exceptions_from_tools_become_error_results(exc: BaseException) -> None:
    @tool
    def argparse_like() -> str:
        """Exit like argparse does."""
        raise exc

    model = ScriptedModel([ModelResponse(tool_calls=[call("argparse_like")]), "done"])
    result = Agent(model=model, tools=[argparse_like]).run_sync("go")
    assert result.state is RunState.COMPLETED
    sent = model.requests[1].messages[-1]
    assert sent.role == "tool" and sent.is_error
    assert type(exc).__name__ in sent.content


def test_a_tool_name_that_is_not_a_string_is_an_error_result() -> None:
    model = ScriptedModel([ModelResponse(tool_calls=[ToolCall(42, {}, "c1")]),  # type: ignore[arg-type]
                           "done"])
    result = Agent(model=model, tools=[add]).run_sync("go")
    assert result.state is RunState.COMPLETED
    assert "Unknown tool '42'" in model.requests[1].messages[-1].content
    assert result.to_json()  # the history still serialises


# -- results and ids ---------------------------------------------------------------------------
def test_unserialisable_results_are_error_results() -> None:
    circular: dict[str, Any] = {}
    circular["self"] = circular

    @tool
    def loop_dict() -> dict[str, Any]:
        """Return a circular dict."""
        return circular

    @tool
    def raw_bytes() -> bytes:
        """Return bytes that are not UTF-8."""
        return b"\xff\xfe\xfa"

    model = ScriptedModel([ModelResponse(tool_calls=[call("loop_dict"), call("raw_bytes"),
                                                     call("add", a=40, b=2)]), "done"])
    result = Agent(model=model, tools=[loop_dict, raw_bytes, add]).run_sync("go")
    assert result.state is RunState.COMPLETED
    sent = [m for m in model.requests[1].messages if m.role == "tool"]
    assert [m.is_error for m in sent] == [True, True, False]
    assert "cannot be shown as text or JSON" in sent[0].content
    assert sent[2].content == "42"


@pytest.mark.skipif(sys.platform != "linux", reason="needs a filesystem with byte file names")
def test_list_dir_with_a_non_utf8_file_name_does_not_end_the_run(tmp_path: Path) -> None:
    os.mkdir(tmp_path / "ws")
    with open(os.path.join(os.fsencode(tmp_path / "ws"), b"bad\xffname.txt"), "wb") as f:
        f.write(b"x")
    model = ScriptedModel([ModelResponse(tool_calls=[call("list_dir", path=".")]), "listed"])
    result = Agent(model=model, workspace=tmp_path / "ws").run_sync("list")
    assert result.state is RunState.COMPLETED
    assert check_pairs(result.messages) == []
    assert result.to_json()


def test_duplicate_call_ids_in_one_response_keep_their_own_results() -> None:
    @tool(inline=True)
    def echo(text: str) -> str:
        """Echo.

        Args:
            text: text
        """
        return text

    model = ScriptedModel([ModelResponse(tool_calls=[call("add", "X", a=40, b=2),
                                                     call("echo", "X", text="hi")]), "done"])
    result = Agent(model=model, tools=[add, echo]).run_sync("go")
    results = result.steps[0].results
    assert [r.content for r in results] == ["42", "hi"]
    ids = [c.id for c in result.steps[0].tool_calls]
    assert len(set(ids)) == 2 and ids[0] == "X"
    assert check_pairs(result.messages) == []


# -- deadlines ---------------------------------------------------------------------------------
def test_the_deadline_bounds_mcp_server_start_up(tmp_path: Path) -> None:
    from reactloop.mcp import MCPServer

    hang = tmp_path / "hang.py"
    hang.write_text("import sys\nfor _ in sys.stdin:\n    pass\n", encoding="utf-8")
    server = MCPServer.stdio(sys.executable, [str(hang)], name="hang")
    agent = Agent(model=ScriptedModel(["never asked"]), mcp_servers=[server],
                  max_execution_time=1.0)
    result = agent.run_sync("go")
    assert result.state is RunState.TIMED_OUT  # it used to take the server's 60 s and end ERROR


@pytest.mark.parametrize("kwargs", [{"max_execution_time": float("nan")},
                                    {"tool_timeout": float("inf")},
                                    {"max_execution_time": float("-inf")}])
def test_nan_and_infinite_limits_are_configuration_errors(kwargs: dict[str, float]) -> None:
    with pytest.raises(UserError, match="finite"):
        Agent(model=ScriptedModel(["x"]), **kwargs)  # type: ignore[arg-type]


# -- the loop's notes never become the answer --------------------------------------------------
def test_a_copied_repeat_note_is_not_the_answer() -> None:
    def model_fn(request: ModelRequest) -> ModelResponse:
        tool_msgs = [m for m in request.messages if m.role == "tool"]
        if len(tool_msgs) < 2:
            return ModelResponse(tool_calls=[call("lookup", order="4521")])
        return ModelResponse(text=tool_msgs[-1].content.split("\n")[-1])  # copies the note

    @tool
    def lookup(order: str) -> str:
        """Order status.

        Args:
            order: the order number
        """
        return "shipped"

    result = Agent(model=FunctionModel(model_fn), tools=[lookup]).run_sync("status of 4521?")
    assert "You already called" not in result.output
    assert "lookup" in result.output  # the fallback says what was done instead
    assert all("You already called" not in m.content for m in result.messages
               if m.role == "assistant")


def test_a_copied_last_iteration_note_is_not_the_answer() -> None:
    from reactloop._notes import final_iteration

    model = ScriptedModel([ModelResponse(tool_calls=[call("add", a=1, b=2)]),
                           "Sum is 3. " + final_iteration(False)])
    result = Agent(model=model, tools=[add], max_iterations=2).run_sync("1+2?")
    assert result.output == "Sum is 3."
