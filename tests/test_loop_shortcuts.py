"""Shortcuts of the loop's iteration (issue 28, fifth pass): the history's messages made
without their factories, the tool looked up once per call, and what a waiting run keeps.
Each test fails if a shortcut changed what the run gives back."""

from __future__ import annotations

import asyncio
from typing import Any

from reactloop import Agent, Message, ModelResponse, ToolCall, tool
from reactloop.result import ToolResult
from reactloop.testing import FunctionModel, ScriptedModel
from reactloop.tools import Tool, ToolRegistry


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_the_history_equals_what_the_message_factories_make() -> None:
    details = {"gemini": {"signature": "x"}}
    replies = iter([
        ModelResponse(text=None, tool_calls=[ToolCall("add", {"a": 1, "b": 2}, "c1")],
                      provider_details={}),
        ModelResponse(text="adding", tool_calls=[ToolCall("add", {"a": 3, "b": "x"}, "c2")],
                      provider_details=details),
        ModelResponse(text="done")])
    model = FunctionModel(lambda request: next(replies))  # hands its replies over as they are
    result = Agent(model=model, tools=[add]).run_sync("Add.")
    history = result.messages
    calls = [s.tool_calls for s in result.steps]
    want = [
        Message.assistant(None, calls[0], {}),
        Message.tool("c1", "add", "3"),
        Message.assistant("adding", calls[1], details),
        Message.tool("c2", "add", result.steps[1].results[0].content, is_error=True),
    ]
    assert history[1:5] == want
    for got, made in zip(history[1:5], want, strict=True):
        assert type(got.metadata) is type(made.metadata)  # the shared empty mapping
        assert type(got.tool_calls) is tuple and type(got.attachments) is tuple
    assert history[1].provider_details is None and history[1].content == ""


def test_a_result_s_attachments_given_as_a_list_become_a_tuple() -> None:
    """A runtime may hand back results built from saved data (lists): the tool message
    still holds a tuple, as ``Message.tool`` made it."""
    from reactloop import _loop

    class Loop(_loop._Loop):
        __slots__ = ()

    loop: Any = Loop.__new__(Loop)
    ctx = Agent(model=ScriptedModel([]), tools=[add])._context("hi", (), None, None, None)
    loop.ctx, loop.rt, loop.answered = ctx, type("R", (), {"now": staticmethod(lambda: 1.0)}), None
    call = ToolCall("add", {"a": 1, "b": 2}, "c1")
    r = ToolResult("add", 3, None, "c1", call.arguments, "3", attachments=[])  # type: ignore[arg-type]
    loop._record(1, None, (call,), [r], 0.0)
    assert ctx.messages[-1] == Message.tool("c1", "add", "3")
    assert type(ctx.messages[-1].attachments) is tuple


def test_execute_one_runs_the_tool_it_is_handed_and_looks_it_up_without() -> None:
    registry = ToolRegistry([add])
    call = ToolCall("add", {"a": 1, "b": 2}, "c1")

    async def go() -> tuple[ToolResult, ToolResult, ToolResult]:
        looked_up = await registry.execute_one(call)
        handed = await registry.execute_one(call, tool=registry.get("add"))
        missing = await registry.execute_one(ToolCall("nope", {}, "c2"))
        return looked_up, handed, missing

    looked_up, handed, missing = asyncio.run(go())
    assert looked_up.content == handed.content == "3" and handed.error is None
    assert missing.error is not None and "nope" in missing.error


def test_a_run_hands_each_call_its_tool_looked_up_once(monkeypatch: Any) -> None:
    from reactloop.tools import _tool

    # the fast path (no approval rule set late anywhere in the process, as in a fresh one)
    monkeypatch.setattr(_tool, "rules_changed", False)
    looked: list[str] = []
    handed: list[Tool | None] = []
    get, execute_one = ToolRegistry.get, ToolRegistry.execute_one

    def counting(self: ToolRegistry, name: str) -> Tool | None:
        looked.append(name)
        return get(self, name)

    def executing(self: ToolRegistry, call: ToolCall, *args: Any) -> Any:
        handed.append(args[6] if len(args) > 6 else None)
        return execute_one(self, call, *args)

    monkeypatch.setattr(ToolRegistry, "get", counting)
    monkeypatch.setattr(ToolRegistry, "execute_one", executing)
    model = ScriptedModel([ModelResponse(tool_calls=[ToolCall("add", {"a": 1, "b": 2})]),
                           ModelResponse(tool_calls=[ToolCall("nope", {})]),
                           ModelResponse(text="3")])
    result = Agent(model=model, tools=[add]).run_sync("Add.")
    assert result.steps[0].results[0].content == "3"
    assert result.steps[1].results[0].error is not None  # an unknown tool still says so
    assert looked == ["add", "nope"]  # sort_calls looks up; execute_one is handed the tool
    assert handed == [add, None]


def test_a_run_makes_its_attachment_fitter_only_for_a_request_with_attachments(
        monkeypatch: Any) -> None:
    from reactloop import Image, _loop
    from reactloop._attach import Fitter

    made: list[object] = []

    class Counting(Fitter):
        def __init__(self, model: Any, emit: Any) -> None:
            made.append(model)
            super().__init__(model, emit)

    monkeypatch.setattr(_loop, "Fitter", Counting)
    plain = ScriptedModel([ToolCall("add", {"a": 1, "b": 2}), "3"])
    assert Agent(model=plain, tools=[add]).run_sync("Add.").output == "3"
    assert made == []

    picture = Image.from_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 64, name="p.png")

    @tool
    def plot() -> Image:
        """Draw."""
        return picture

    blind = ScriptedModel([ToolCall("plot", {}), ToolCall("plot", {}), "none"], accepts=())
    Agent(model=blind, tools=[plot]).run_sync("Plot it twice")
    assert made == [blind]  # one per run, for the run's model, made on the first attachment
    assert blind.requests[1].messages[-1].attachments == ()  # fitted: the model takes none
    assert blind.requests[2].messages[-1].attachments == ()


def test_the_repeated_call_key_is_the_sorted_flat_tuple_it_always_was() -> None:
    from itertools import chain

    import pytest

    from reactloop._repeats import seen_key

    for args in ({}, {"b": 1, "a": "x"}, {"a": 1.5, "c": None, "b": True}, {"z": 0, "y": -1}):
        key = seen_key(ToolCall("t", args))
        assert key == ("t", *chain.from_iterable(sorted(args.items())))
        assert key == seen_key(ToolCall("t", dict(reversed(list(args.items())))))
    assert seen_key(ToolCall("t", {"a": [1]})) == 't\0{"a": [1]}'  # JSON for the rest
    with pytest.raises(TypeError):  # keys that do not sort: as before
        seen_key(ToolCall("t", {1: 1, "a": 2}))
    assert seen_key(ToolCall("t", {1: [1], "a": 2})) == "t\0{1: [1], 'a': 2}"
