"""What a live run holds (issue 28): the repeated-call cache keys each result by a small hash
of the call (checked against the result on a hit), and saved runs keep their format
(``[name, [[arg, value], ...]]``) both ways."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

import pytest

from reactloop import Agent, ModelResponse, ToolCall
from reactloop import _repeats as repeats
from reactloop._repeats import seen_hash, seen_key
from reactloop.result import ToolResult
from reactloop.run_context import RunContext
from reactloop.testing import ScriptedModel


def test_a_plain_call_is_keyed_by_one_flat_tuple() -> None:
    key = seen_key(ToolCall("add", {"b": 1, "a": "x"}))
    assert key == ("add", "a", "x", "b", 1)
    assert key == seen_key(ToolCall("add", {"a": "x", "b": 1}))
    assert key != seen_key(ToolCall("add", {"a": "x", "b": 2}))
    assert seen_key(ToolCall("add", {})) == ("add",)


def test_the_cache_keys_a_call_by_a_small_int() -> None:
    h = seen_hash(ToolCall("add", {"b": 1, "a": "x"}))
    assert h == seen_hash(ToolCall("add", {"a": "x", "b": 1}))
    assert type(h) is int and 0 <= h < 2**30
    assert sys.getsizeof(h) <= 28 < sys.getsizeof(seen_key(ToolCall("add", {"a": "x", "b": 1})))


def _result(name: str, args: Mapping[str, Any], value: Any, call_id: str) -> ToolResult:
    return ToolResult(name, value, call_id=call_id, arguments=dict(args), content=str(value))


def test_saved_runs_keep_the_key_format_both_ways() -> None:
    ctx = RunContext("r1", "hi", [])
    nested = ToolCall("f", {"x": [1, 2]})
    add = ToolCall("add", {"b": 1, "a": 2})
    ctx.seen = {seen_hash(add): _result("add", add.arguments, 3, "c1"),
                seen_hash(nested): _result("f", nested.arguments, 0, "c2")}
    data = json.loads(json.dumps(ctx.to_dict()))
    # what reactloop always wrote (older versions read it back)
    assert [k for k, _ in data["seen"]] == [["add", [["a", 2], ["b", 1]]], seen_key(nested)]
    back = RunContext.from_dict(data)
    assert set(back.seen) == set(ctx.seen)
    assert back.seen[seen_hash(ToolCall("add", {"a": 2, "b": 1}))].call_id == "c1"


def test_a_run_saved_with_any_key_is_keyed_from_its_results() -> None:
    """An older snapshot's keys are not read: each result gives its own."""
    data = RunContext("r1", "hi", []).to_dict()
    data["seen"] = [[["add", [["a", 2], ["b", 1]]],
                     _result("add", {"a": 2, "b": 1}, 3, "c1").to_dict(full=True)],
                    ["not what it says", _result("f", {"x": [1]}, 0, "c2").to_dict(full=True)]]
    back = RunContext.from_dict(data)
    assert back.seen == {seen_hash(ToolCall("add", {"a": 2, "b": 1})): back.seen[
        seen_hash(ToolCall("add", {"b": 1, "a": 2}))],
        seen_hash(ToolCall("f", {"x": [1]})): back.seen[seen_hash(ToolCall("f", {"x": [1]}))]}
    assert [r.call_id for r in back.seen.values()] == ["c1", "c2"]


def _lookup_agent(runs: list[str], replies: list[Any]) -> tuple[Agent[str], ScriptedModel]:
    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: the key
        """
        runs.append(key)
        return f"value of {key}"

    model = ScriptedModel(replies)
    return Agent(model=model, tools=[lookup]), model


def _calls(*keys: str) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall("lookup", {"key": k}) for k in keys])


@pytest.mark.parametrize("batch", [False, True])
def test_a_hash_collision_runs_the_call_and_never_answers_with_another_result(
        monkeypatch: pytest.MonkeyPatch, batch: bool) -> None:
    """Every call hashes alike: only a call equal to the stored one is answered from it."""
    monkeypatch.setattr(repeats, "_MASK", 0)  # every hash is 0
    runs: list[str] = []
    replies = ([_calls("a", "x"), _calls("b", "a"), _calls("b"), "done"] if batch
               else [_calls("a"), _calls("b"), _calls("b"), _calls("a"), "done"])
    agent, _ = _lookup_agent(runs, replies)
    result = agent.run_sync("go")
    got = [(r.arguments["key"], r.content, r.cached) for s in result.steps for r in s.results]
    for key, content, _ in got:  # every call has its own result
        assert f"value of {key}" in content and content.count("value of") == 1, got
    if batch:  # hash 0 holds x, then a (the batch's last): b and a run, then b again
        assert runs == ["a", "x", "b", "a", "b"]
        assert [c for *_, c in got] == [False] * 5
    else:  # each call replaces the other under hash 0: none is ever answered from the cache
        assert runs == ["a", "b", "a"]
        assert [c for *_, c in got] == [False, False, True, False]


def test_a_repeat_in_a_batch_reads_the_result_it_matched_before_the_batch_ran(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A colliding call that runs in the same batch does not replace the result a repeat of
    an earlier call is answered with."""
    monkeypatch.setattr(repeats, "_MASK", 0)
    runs: list[str] = []
    agent, _ = _lookup_agent(runs, [_calls("a"), _calls("b", "a"), "done"])
    result = agent.run_sync("go")
    second = result.steps[1].results
    assert runs == ["a", "b"]
    assert [(r.arguments["key"], r.cached) for r in second] == [("b", False), ("a", True)]
    assert "value of a" in second[1].content and "value of b" not in second[1].content
