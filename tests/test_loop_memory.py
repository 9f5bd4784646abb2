"""What a live run holds (issue 28): the repeated-call cache is a tuple of the successful
results (a call is answered by one with its name and arguments: no key per call), and saved
runs keep their format (``[name, [[arg, value], ...]]``) both ways."""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

import pytest

from reactloop import Agent, ModelResponse, ToolCall
from reactloop import _repeats as repeats
from reactloop._repeats import seen_key
from reactloop.result import ToolResult
from reactloop.run_context import RunContext
from reactloop.testing import ScriptedModel


def test_a_plain_call_is_keyed_by_one_flat_tuple() -> None:
    key = seen_key(ToolCall("add", {"b": 1, "a": "x"}))
    assert key == ("add", "a", "x", "b", 1)
    assert key == seen_key(ToolCall("add", {"a": "x", "b": 1}))
    assert key != seen_key(ToolCall("add", {"a": "x", "b": 2}))
    assert seen_key(ToolCall("add", {})) == ("add",)


def _result(name: str, args: Mapping[str, Any], value: Any, call_id: str) -> ToolResult:
    return ToolResult(name, value, call_id=call_id, arguments=dict(args), content=str(value))


def test_saved_runs_keep_the_key_format_both_ways() -> None:
    ctx = RunContext("r1", "hi", [])
    nested = ToolCall("f", {"x": [1, 2]})
    ctx.seen = (_result("add", {"b": 1, "a": 2}, 3, "c1"), _result("f", nested.arguments, 0, "c2"))
    data = json.loads(json.dumps(ctx.to_dict()))
    # what reactloop always wrote (older versions read it back)
    assert [k for k, _ in data["seen"]] == [["add", [["a", 2], ["b", 1]]], seen_key(nested)]
    back = RunContext.from_dict(data)
    assert back.seen == ctx.seen


def test_a_saved_run_s_cache_is_its_results_whatever_their_keys() -> None:
    """An older snapshot's keys are not needed: each result has its name and arguments."""
    data = RunContext("r1", "hi", []).to_dict()
    data["seen"] = [[["add", [["a", 2], ["b", 1]]],
                     _result("add", {"a": 2, "b": 1}, 3, "c1").to_dict(full=True)],
                    ["not what it says", _result("f", {"x": [1]}, 0, "c2").to_dict(full=True)]]
    back = RunContext.from_dict(data)
    assert [(r.name, r.arguments, r.call_id) for r in back.seen] == [
        ("add", {"a": 2, "b": 1}, "c1"), ("f", {"x": [1]}, "c2")]


def _lookup_agent(runs: list[str], replies: list[Any], callbacks: list[Any] | None = None
                  ) -> tuple[Agent[str], ScriptedModel]:
    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: the key
        """
        runs.append(key)
        return f"value of {key}"

    model = ScriptedModel(replies)
    return Agent(model=model, tools=[lookup], callbacks=callbacks or []), model


def _calls(*keys: str) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall("lookup", {"key": k}) for k in keys])


def test_the_cache_holds_results_without_keys() -> None:
    runs: list[str] = []
    agent, _ = _lookup_agent(runs, [_calls("a"), _calls("b"), _calls("a"), "done"])
    result = agent.run_sync("go")
    assert runs == ["a", "b"]
    ctx = result.context
    assert ctx is not None and type(ctx.seen) is tuple
    assert [r.arguments["key"] for r in ctx.seen] == ["a", "b"]
    third = result.steps[2].results[0]
    assert third.cached and "value of a" in third.content


@pytest.mark.parametrize("batch", [False, True])
def test_only_an_equal_call_is_answered_from_an_earlier_result(
        monkeypatch: pytest.MonkeyPatch, batch: bool) -> None:
    """Even when every call had the same key (what a hash collision would be), a call is
    answered only by an earlier result with its own name and arguments."""
    monkeypatch.setattr(repeats, "seen_key", lambda call: "same")
    runs: list[str] = []
    replies = ([_calls("a", "x"), _calls("b", "a"), _calls("x"), "done"] if batch
               else [_calls("a"), _calls("b"), _calls("b"), _calls("a"), "done"])
    agent, _ = _lookup_agent(runs, replies)
    result = agent.run_sync("go")
    got = [(r.arguments["key"], r.content, r.cached) for s in result.steps for r in s.results]
    for key, content, _ in got:  # every call has its own result
        assert f"value of {key}" in content and content.count("value of") == 1, got
    if batch:
        assert sorted(runs) == ["a", "b", "x"]  # a batch runs its calls concurrently
        assert [c for *_, c in got] == [False, False, False, True, True]
    else:
        assert runs == ["a", "b"]
        assert [c for *_, c in got] == [False, False, True, True]


def test_a_call_is_the_same_whatever_its_arguments_order() -> None:
    runs: list[str] = []

    def pair(a: str, b: str) -> str:
        """Pair two keys.

        Args:
            a: one
            b: two
        """
        runs.append(a + b)
        return f"{a}-{b}"

    model = ScriptedModel([ModelResponse(tool_calls=[ToolCall("pair", {"a": "1", "b": "2"})]),
                           ModelResponse(tool_calls=[ToolCall("pair", {"b": "2", "a": "1"})]),
                           ModelResponse(tool_calls=[ToolCall("pair", {"b": "1", "a": "2"})]),
                           "done"])
    result = Agent(model=model, tools=[pair]).run_sync("go")
    assert runs == ["12", "21"]
    assert [s.results[0].cached for s in result.steps if s.results] == [False, True, False]


class _OnStep:
    def __init__(self) -> None:
        self.steps: list[Any] = []

    def on_step(self, step: Any) -> None:
        self.steps.append(step)


def test_a_quiet_step_starts_at_the_very_end_of_the_one_before() -> None:
    """Nothing but the loop's bookkeeping runs between two steps of a quiet run: the next
    one starts at the float that ended the last (24 bytes fewer per step). When someone
    saw the step in between (a callback, an event consumer), it starts when it starts."""
    runs: list[str] = []
    agent, _ = _lookup_agent(runs, [_calls("a"), _calls("b"), _calls("c"), "done"])
    steps = agent.run_sync("go").steps
    assert [s.started_at is b.ended_at for b, s in pairwise(steps)] == [True] * 3
    assert all(s.started_at <= s.ended_at for s in steps)
    seen = _OnStep()
    agent, _ = _lookup_agent(runs, [_calls("a"), _calls("b"), "done"], [seen])
    steps = agent.run_sync("go").steps
    assert len(seen.steps) == 3 and steps[1].started_at is not steps[0].ended_at
    assert steps[0].ended_at <= steps[1].started_at
