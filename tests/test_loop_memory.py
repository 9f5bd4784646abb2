"""What a live run holds (issue 28): the repeated-call cache keys one flat tuple per call, and
saved runs keep their format (``[name, [[arg, value], ...]]``) both ways."""

from __future__ import annotations

import json

from reactloop import ToolCall
from reactloop._repeats import seen_key
from reactloop.result import ToolResult
from reactloop.run_context import RunContext


def test_a_plain_call_is_keyed_by_one_flat_tuple() -> None:
    key = seen_key(ToolCall("add", {"b": 1, "a": "x"}))
    assert key == ("add", "a", "x", "b", 1)
    assert key == seen_key(ToolCall("add", {"a": "x", "b": 1}))
    assert key != seen_key(ToolCall("add", {"a": "x", "b": 2}))
    assert seen_key(ToolCall("add", {})) == ("add",)


def test_saved_runs_keep_the_key_format_both_ways() -> None:
    ctx = RunContext("r1", "hi", [])
    nested = seen_key(ToolCall("f", {"x": [1, 2]}))
    ctx.seen = {seen_key(ToolCall("add", {"b": 1, "a": 2})): ToolResult("add", 3, call_id="c1"),
                nested: ToolResult("f", 0, call_id="c2")}
    data = json.loads(json.dumps(ctx.to_dict()))
    assert [k for k, _ in data["seen"]] == [["add", [["a", 2], ["b", 1]]], nested]
    back = RunContext.from_dict(data)
    assert set(back.seen) == set(ctx.seen)
    assert back.seen[("add", "a", 2, "b", 1)].call_id == "c1"
