"""Identical calls: the key that makes two calls the same, and the run's failed calls by it
(a call identical to one that failed is not run again). :class:`Repeats` sorts a batch's calls
into those that run and those answered without running, per run, scanning each step once."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from reactloop import _notes as notes
from reactloop.approvals import DENIED
from reactloop.messages import ToolCall
from reactloop.result import Step, ToolResult
from reactloop.tools._registry import ToolRegistry
from reactloop.tools._tool import Tool

__all__ = ["Repeats", "failures", "seen_key"]

_NO_FAILURES: dict[object, ToolResult] = {}  # shared, never written to
_NO_TOOLS = ToolRegistry()

_SCALARS = (str, int, float, bool, type(None))


def failures(steps: Sequence[Step]) -> dict[object, ToolResult]:
    """The run's failed calls (not those a person denied) by name and arguments."""
    return {seen_key(ToolCall(r.name, dict(r.arguments))): r for s in steps
            for r in s.results if r.error is not None and not r.error.startswith(DENIED)}


def seen_key(call: ToolCall) -> object:
    """Equal for calls with the same name and arguments (in any key order)."""
    args = call.arguments
    if type(args) is dict:
        for v in args.values():
            if type(v) not in _SCALARS:
                break
        else:  # the common case, without JSON: one flat tuple (name, k1, v1, k2, v2…)
            flat: list[Any] = [call.name]
            for k in sorted(args):  # no items() or chain (issue 28)
                flat += (k, args[k])
            return tuple(flat)
    try:
        return call.name + "\0" + json.dumps(args, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return f"{call.name}\0{args!r}"


_Split = tuple[Sequence[object], Sequence[ToolResult | None], Sequence[ToolCall]]
"""A batch's calls sorted: each call's key (None: repeatable), the earlier failure of an
identical call (None: none), and the calls that run."""


class Repeats:
    """One run's repeated calls: a call identical to an earlier successful one is answered
    with its result (``RunContext.seen``), one identical to a failed one with its error; the
    failures are collected from the run's steps as they are added (each step read once).

    The loop is one (a base class: no object of its own per live run)."""

    __slots__ = ("failed", "found", "scanned", "steps")

    def __init__(self) -> None:
        self.failed = _NO_FAILURES
        self.scanned = 0
        self.steps: Sequence[Step] | None = None
        self.found: Tool | None = None
        """The tool of the last one-call batch sorted (None: not found), so that running
        it needs no second lookup (``ToolRegistry.execute_one(tool=...)``)."""

    def failures(self, steps: Sequence[Step]) -> dict[object, ToolResult]:
        """What :func:`failures` returns, reading only the steps added since the last time."""
        self.sort_calls((), _NO_TOOLS, {}, steps)
        return self.failed

    def sort_calls(self, calls: Sequence[ToolCall], tools: ToolRegistry,
                   seen: dict[Any, ToolResult], steps: Sequence[Step]) -> _Split:
        """Each call's key and earlier failure, and the calls to run."""
        if steps is not self.steps:  # another list: read it all (a run's steps only grow)
            self.failed, self.scanned, self.steps = _NO_FAILURES, 0, steps
        for s in steps[self.scanned:]:  # the steps added since the last batch (no call)
            self.scanned += 1
            for r in s.results:
                if r.error is not None and not r.error.startswith(DENIED):
                    if self.failed is _NO_FAILURES:
                        self.failed = {}
                    self.failed[seen_key(ToolCall(r.name, dict(r.arguments)))] = r
        failed = self.failed
        if len(calls) == 1:  # the common case, without lists
            c = calls[0]
            t = self.found = (tools.get(c.name) if type(c.name) is str
                              or isinstance(c.name, str) else None)
            key = None if t is None or t.repeatable or t.internal else seen_key(c)
            f = failed.get(seen_key(c) if key is None else key) if failed else None
            return (key,), (f,), (calls if f is None and key not in seen else ())
        keys: list[object] = []
        again: list[ToolResult | None] = []
        fresh: list[ToolCall] = []
        for c in calls:
            t = tools.get(c.name) if type(c.name) is str or isinstance(c.name, str) else None
            key = None if t is None or t.repeatable or t.internal else seen_key(c)
            # a call identical to one that failed is not run again: it would fail the same way
            f = failed.get(seen_key(c) if key is None else key) if failed else None
            keys.append(key)
            again.append(f)
            if f is None and key not in seen:
                fresh.append(c)
        return keys, again, fresh

    @staticmethod
    def answers(calls: Sequence[ToolCall], split: _Split, done: Sequence[ToolResult],
                seen: dict[Any, ToolResult]) -> list[ToolResult]:
        """The batch's results in call order: those that ran (remembered for identical calls
        to come when they succeeded), the others answered from the earlier ones."""
        keys, again, _ = split
        if done and len(calls) == 1:  # the one call ran
            ran = done[0]
            if ran.error is None and keys[0] is not None:
                seen[keys[0]] = ran
            return [ran]
        by_id = {r.call_id: r for r in done}
        results = []
        for c, key, f in zip(calls, keys, again, strict=True):
            r = by_id.get(c.id or "")
            if r is None and f is not None:
                r = notes.repeated_failure(f, c.id or "")
            elif r is None and key is not None:  # identical to an earlier call: its result
                r = notes.repeated(seen[key], c.id or "")
            elif r is not None and r.error is None and key is not None:
                seen[key] = r
            assert r is not None
            results.append(r)
        return results
