"""The tool-execution path per iteration (issue 28): what it skips when unused, and that it
keeps every outcome — arguments, errors, approvals, repeated calls."""

from __future__ import annotations

import asyncio
import enum
import os
from collections.abc import Mapping
from typing import Any

import pytest

from reactloop import Agent, RunState, tool
from reactloop._repeats import Repeats, failures
from reactloop.approvals import DENIED
from reactloop.approvals._gate import gated_calls
from reactloop.messages import ToolCall
from reactloop.result import Step, ToolResult
from reactloop.testing import ScriptedModel
from reactloop.tools import Tool, ToolArgumentsError, ToolRegistry, _tool


@tool
def add(a: int, b: int = 2) -> int:
    """Add."""
    return a + b


def _run(t: Tool, arguments: Any) -> ToolResult:
    [result] = asyncio.run(ToolRegistry([t]).execute([ToolCall(t.name, arguments, "c")]))
    return result


def test_plain_arguments_reach_the_action_without_validation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    add.validate({"a": 1})  # built
    used: list[object] = []
    validate = add.validate
    monkeypatch.setattr(add, "validate", lambda arguments: used.append(arguments)
                        or validate(arguments))
    assert _run(add, {"a": 1}).result == 3  # the default is the action's own
    assert _run(add, {"a": 1, "b": 5}).result == 6
    assert used == []
    assert _run(add, {"a": "1"}).result == 3  # another type: validated (and coerced)
    assert used == [{"a": "1"}]


@pytest.mark.parametrize("arguments, error", [
    ({}, "missing required argument 'a'"),
    ({"a": 1, "c": 0}, "unexpected argument 'c' (expected: a, b)"),
    ({"a": [1]}, "argument 'a': Input should be a valid integer"),
])
def test_bad_arguments_get_the_same_error(arguments: dict[str, Any], error: str) -> None:
    result = _run(add, arguments)
    assert result.error is not None and error in result.error


def test_a_tool_that_raises_timeout_error_itself_gets_its_error_back() -> None:
    async def fetch() -> str:
        raise TimeoutError("upstream did not answer")

    # before: formatting the missing timeout raised TypeError out of the batch
    assert _run(Tool(fetch), {}).error == "TimeoutError: upstream did not answer"


def test_a_tool_timeout_still_says_so() -> None:
    async def slow() -> str:
        await asyncio.sleep(10)
        return "late"

    error = _run(Tool(slow, timeout=0.01), {}).error
    assert error is not None and error.startswith("Tool 'slow' timed out after 0.01 s")


def test_the_registry_knows_whether_any_tool_asks_for_approval() -> None:
    plain = ToolRegistry([add])
    assert not plain.approval_rules
    twin = plain.copy()
    assert not twin.approval_rules
    twin.add(Tool(lambda: "x", name="risky", requires_approval=True))
    assert twin.approval_rules and not plain.approval_rules
    assert plain.copy().approval_rules is False


def test_a_rule_set_after_the_tool_was_added_still_gates(monkeypatch: pytest.MonkeyPatch) -> None:
    # the setter flips a process-wide flag: set back after the test (tests after this one
    # count the lookups of the fast path, which the flag turns off)
    monkeypatch.setattr(_tool, "rules_changed", _tool.rules_changed)
    t = Tool(lambda x: x, name="late")
    registry = ToolRegistry([t])
    call = ToolCall("late", {"x": 1}, "c1")
    assert gated_calls([call], registry, False, "run", None, {}) == {}
    t.requires_approval = True
    assert list(gated_calls([call], registry, False, "run", None, {})) == ["c1"]


def _step(i: int, *results: ToolResult) -> Step:
    return Step(i, None, (), results, 0.0, 0.0)


def test_repeats_reads_the_failures_the_steps_hold() -> None:
    ok = ToolResult("add", 3, None, "c1", {"a": 1})
    bad = ToolResult("add", None, "ValueError: no", "c2", {"a": 2})
    denied = ToolResult("add", None, DENIED + "no", "c3", {"a": 3})
    later = ToolResult("add", None, "ValueError: again", "c4", {"a": 2})
    steps: list[Step] = []
    repeats = Repeats()
    assert repeats.failures(steps) == failures(steps) == {}
    steps.append(_step(1, ok, bad))
    assert repeats.failures(steps) == failures(steps)
    steps.extend([_step(2, denied), _step(3, later)])
    assert repeats.failures(steps) == failures(steps)
    assert list(repeats.failures(steps).values()) == [later]
    other = [_step(1, ok)]  # another run's steps: read from the start
    assert repeats.failures(other) == failures(other) == {}


def test_identical_calls_in_a_run_are_answered_once_each_way() -> None:
    ran: list[int] = []

    @tool
    def flaky(n: int) -> str:
        """Fails for odd numbers."""
        ran.append(n)
        if n % 2:
            raise ValueError("odd")
        return "even"

    model = ScriptedModel([
        ToolCall("flaky", {"n": 2}), ToolCall("flaky", {"n": 2}),
        ToolCall("flaky", {"n": 1}), ToolCall("flaky", {"n": 1}), "done"])
    result = Agent(model=model, tools=[flaky]).run_sync("go")
    assert result.state is RunState.COMPLETED
    assert ran == [2, 1]
    [r1], [r2], [r3], [r4] = (s.results for s in result.steps[:4])
    assert (r1.cached, r2.cached, r2.result) == (False, True, "even")
    assert r3.error == "ValueError: odd" and r4.cached and "not run again" in r4.content


def test_a_tool_finds_its_run_through_one_context_variable() -> None:
    from reactloop import _nesting
    from reactloop.tools._source import caller_run

    seen: list[tuple[object, object]] = []

    @tool
    def where() -> str:
        """Where the tool runs."""
        frame, caller = _nesting.current.get(), caller_run.get()
        seen.append((frame, caller and caller.frame))
        return "here"

    model = ScriptedModel([ToolCall("where", {}), "done"])
    Agent(model=model, tools=[where], name="outer").run_sync("go")
    [(frame, carried)] = seen
    assert frame is carried and frame is not None
    assert (frame.agent, frame.depth) == ("outer", 0)  # type: ignore[attr-defined]
    assert _nesting.current.get() is None and caller_run.get() is None


def test_a_tool_with_a_rule_added_during_the_run_still_waits_for_approval() -> None:
    from reactloop import ToolContext

    risky = Tool(lambda: "done", name="risky", requires_approval=True)

    @tool
    def unlock(context: ToolContext) -> str:
        """Offer the risky tool."""
        context.add_tools([risky])
        return "unlocked"

    model = ScriptedModel([ToolCall("unlock", {}), ToolCall("risky", {}), "never"])
    result = Agent(model=model, tools=[unlock]).run_sync("go")
    assert result.state is RunState.WAITING_FOR_APPROVAL
    assert [p.tool_name for p in result.pending_approvals] == ["risky"]


# -- what the fast path must not change (found by review of the issue-28 merge) --------------

class _UnderTmp(Tool):
    """A Tool subclass with its own argument check (``Tool.validate`` is public)."""

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        out = super().validate(arguments)
        if not out["path"].startswith("/tmp/"):
            raise ToolArgumentsError("path must be under /tmp/")
        return out


def _delete(path: str) -> str:
    """Delete a file."""
    return "deleted " + path


def test_a_subclass_validate_runs_even_for_plain_arguments() -> None:
    r = Agent(ScriptedModel([ToolCall("_delete", {"path": "/etc/passwd"}, "c1"), "done"]),
              tools=[_UnderTmp(_delete)]).run_sync("go")
    [res] = r.steps[0].results
    assert res.error == "path must be under /tmp/" and res.result is None


class _Names(enum.StrEnum):
    ADD = "add_one"


def test_a_tool_name_of_a_str_subclass_finds_the_tool() -> None:
    @tool
    def add_one(a: int) -> int:
        """Add one."""
        return a + 1

    r = Agent(ScriptedModel([ToolCall(_Names.ADD, {"a": 1}, "c1"),
                             ToolCall(_Names.ADD, {"a": 1}, "c2"), "done"]),
              tools=[add_one]).run_sync("go")
    assert [res.result for s in r.steps for res in s.results] == [2, 2]
    assert all(res.error is None for s in r.steps for res in s.results)


def test_a_broken_annotation_names_its_own_attribute_error() -> None:
    def f(p: os.NoSuchThing) -> str:  # type: ignore[name-defined]
        """x"""
        return "y"

    t = Tool(f)
    with pytest.raises(AttributeError, match="NoSuchThing"):
        t.parameters  # noqa: B018
    with pytest.raises(AttributeError, match="NoSuchThing"):
        t.wants_context  # noqa: B018


def test_a_long_run_finds_identical_calls_by_key_not_by_scanning(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``SCAN`` results a call is looked up by key: the same answers as the scan, and
    an identical call among hundreds is still answered from the earlier one."""
    from reactloop import _repeats

    looked_up: list[str] = []
    by_key = Repeats.earlier

    def earlier(self: Repeats, seen: Any, call: ToolCall) -> Any:
        looked_up.append(call.id or "")
        return by_key(self, seen, call)

    monkeypatch.setattr(Repeats, "earlier", earlier)
    ran: list[int] = []

    @tool
    def square(n: int) -> int:
        """Square."""
        ran.append(n)
        return n * n

    n = _repeats.SCAN * 3
    calls: list[Any] = [[ToolCall("square", {"n": i}, f"a{i}") for i in range(n)]]
    calls += [ToolCall("square", {"n": 7}), [ToolCall("square", {"n": 5}, "x"),
                                              ToolCall("square", {"n": n}, "y")], "done"]
    result = Agent(model=ScriptedModel(calls), tools=[square]).run_sync("go")
    assert result.state is RunState.COMPLETED
    assert sorted(ran) == [*range(n), n]  # 7 and 5 were answered from the first batch
    [again], [five, fresh] = result.steps[1].results, result.steps[2].results
    assert (again.cached, again.result, five.cached, five.result) == (True, 49, True, 25)
    assert (fresh.cached, fresh.result) == (False, n * n)
    assert {"x", "y"} <= set(looked_up)  # the batch of two after 96 results: by key

    # one call per step: past SCAN steps the same, by key
    steps: list[Any] = [ToolCall("square", {"n": i}, f"s{i}") for i in range(_repeats.SCAN + 8)]
    ran.clear()
    result = Agent(model=ScriptedModel([*steps, ToolCall("square", {"n": 3}), "done"]),
                   tools=[square], max_iterations=_repeats.SCAN + 20).run_sync("go")
    assert result.state is RunState.COMPLETED and ran == list(range(_repeats.SCAN + 8))
    [last] = result.steps[-2].results
    assert (last.cached, last.result) == (True, 9)
    assert len(looked_up) > 2  # the one-call steps past SCAN: by key too

    # the index follows RunContext.seen: added to, then filtered (a held call taken out)
    repeats = Repeats()
    seen = tuple(ToolResult("square", i * i, None, f"c{i}", {"n": i}) for i in range(n))
    assert repeats.earlier(seen, ToolCall("square", {"n": 3})) is seen[3]
    seen += (ToolResult("square", 4, None, "z", {"n": -2}),)
    assert repeats.earlier(seen, ToolCall("square", {"n": -2})) is seen[-1]
    kept = seen[:3] + seen[4:]
    assert repeats.earlier(kept, ToolCall("square", {"n": 3})) is True
    assert repeats.earlier(kept, ToolCall("square", {"n": 4})) is seen[4]
