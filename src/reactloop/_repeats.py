"""Identical calls: the key that makes two calls the same, and the run's failed calls by it
(a call identical to one that failed is not run again). :class:`Repeats` sorts a batch's calls
into those that run and those answered without running, per run, scanning each step once.

``RunContext.seen`` keeps a run's successful results in a tuple, without keys (an 80-byte key
tuple and a dict entry per call were most of what the cache held, issue 28): a call is
answered by an earlier result whose name and arguments equal its own (a short scan: a run
holds a handful; past :data:`SCAN` steps, or results for a batch of several calls, a per-run
index by key, made on first need; failures stay keyed, they are rare)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from reactloop import _notes as notes
from reactloop.approvals import DENIED
from reactloop.messages import ToolCall
from reactloop.result import Step, ToolResult
from reactloop.tools._registry import ToolRegistry
from reactloop.tools._tool import Tool


class _Seen(Protocol):
    """What :meth:`Repeats.answers` writes: ``RunContext.seen`` (this module sits below)."""

    seen: tuple[ToolResult, ...]

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


_Split = tuple[Sequence[ToolResult | bool | None], Sequence[ToolResult | None],
               Sequence[ToolCall]]
"""A batch's calls sorted: per call, the earlier identical success that answers it (else
``True``: its success is kept for identical calls to come; ``None``: a repeatable call), the
earlier failure of an identical call (None: none), and the calls that run."""


class Repeats:
    """One run's repeated calls: a call identical to an earlier successful one is answered
    with its result (``RunContext.seen``), one identical to a failed one with its error; the
    failures are collected from the run's steps as they are added (each step read once).

    The loop is one (a base class: no object of its own per live run)."""

    __slots__ = ("failed", "found", "index", "scanned", "steps")

    def __init__(self) -> None:
        self.failed = _NO_FAILURES
        self.scanned = 0
        self.steps: Sequence[Step] | None = None
        self.found: Tool | None = None
        """The tool of the last one-call batch sorted (None: not found), so that running
        it needs no second lookup (``ToolRegistry.execute_one(tool=...)``)."""
        self.index: _Index | None = None
        """``RunContext.seen`` by key, made once a run holds more than :data:`SCAN` results
        (a long run's calls are not each compared with every earlier one)."""

    def failures(self, steps: Sequence[Step]) -> dict[object, ToolResult]:
        """What :func:`failures` returns, reading only the steps added since the last time."""
        self.sort_calls((), _NO_TOOLS, (), steps)
        return self.failed

    def sort_calls(self, calls: Sequence[ToolCall], tools: ToolRegistry,
                   seen: Sequence[ToolResult], steps: Sequence[Step]) -> _Split:
        """Each call's earlier success or mark, its earlier failure, and the calls to run."""
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
            # a call identical to one that failed is not run again: it would fail the same way
            f = failed.get(seen_key(c)) if failed else None
            if t is None or t.repeatable or t.internal:
                return (None,), (f,), (calls if f is None else ())
            if f is not None:
                return (True,), (f,), ()
            if self.scanned > SCAN:  # many steps (no len() call per iteration: issue 28)
                known = self.earlier(seen, c)
                return (known,), (None,), (calls if known is True else ())
            name, args = c.name, c.arguments
            for r in seen:  # _earlier's work, without its call
                if r.name == name and r.arguments == args:
                    return (r,), (None,), ()
            return (True,), (None,), calls
        marks: list[ToolResult | bool | None] = []
        again: list[ToolResult | None] = []
        fresh: list[ToolCall] = []
        for c in calls:
            t = tools.get(c.name) if type(c.name) is str or isinstance(c.name, str) else None
            f = failed.get(seen_key(c)) if failed else None
            mark = (None if t is None or t.repeatable or t.internal
                    else True if f is not None else self.earlier(seen, c) if len(seen) > SCAN
                    else _earlier(seen, c))
            marks.append(mark)
            again.append(f)
            if f is None and (mark is None or mark is True):
                fresh.append(c)
        return marks, again, fresh

    def earlier(self, seen: Sequence[ToolResult], call: ToolCall) -> ToolResult | bool:
        """What :func:`_earlier` returns, by key: the index is brought up to date with the
        results added since (made again when ``seen`` was not only added to)."""
        index = self.index
        if index is None or index.count > len(seen) or (
                index.count and seen[index.count - 1] is not index.last):
            index = self.index = _Index()
        for r in seen[index.count:]:
            index.by_key.setdefault(seen_key(ToolCall(r.name, r.arguments)), []).append(r)
        index.count, index.last = len(seen), seen[-1] if seen else None
        name, args = call.name, call.arguments
        for r in index.by_key.get(seen_key(call), ()):
            if r.name == name and r.arguments == args:
                return r
        return True

    @staticmethod
    def answers(calls: Sequence[ToolCall], split: _Split, done: Sequence[ToolResult],
                ctx: _Seen) -> list[ToolResult]:
        """The batch's results in call order: those that ran (their successes added to
        ``ctx.seen`` for identical calls to come), the others answered from earlier ones."""
        marks, again, _ = split
        if done and len(calls) == 1:  # the one call ran
            ran = done[0]
            if ran.error is None and marks[0] is True:
                ctx.seen += (ran,)
            return [ran]
        by_id = {r.call_id: r for r in done}
        results: list[ToolResult] = []
        kept: list[ToolResult] = []
        for c, mark, f in zip(calls, marks, again, strict=True):
            r = by_id.get(c.id or "")
            if r is None and f is not None:
                r = notes.repeated_failure(f, c.id or "")
            elif r is None and isinstance(mark, ToolResult):  # an earlier identical call's
                r = notes.repeated(mark, c.id or "")
            elif r is not None and r.error is None and mark is True:
                kept.append(r)
            assert r is not None
            results.append(r)
        if kept:
            ctx.seen += tuple(kept)
        return results


SCAN = 32
"""Steps (one call per batch) or results (a batch of several) a run holds before identical
calls are found by key rather than by a scan."""


class _Index:
    """A long run's successful results by :func:`seen_key`: how many of ``RunContext.seen``
    are in it, and the last of them (to see that ``seen`` was only added to since)."""

    __slots__ = ("by_key", "count", "last")

    def __init__(self) -> None:
        self.by_key: dict[object, list[ToolResult]] = {}
        self.count = 0
        self.last: ToolResult | None = None


def _earlier(seen: Sequence[ToolResult], call: ToolCall) -> ToolResult | bool:
    """The earlier success of a call identical to ``call`` (same name and arguments, in any
    key order), else True."""
    name, args = call.name, call.arguments
    for r in seen:
        if r.name == name and r.arguments == args:
            return r
    return True
