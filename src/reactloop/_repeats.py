"""Identical calls: the key that makes two calls the same, and the run's failed calls by it
(a call identical to one that failed is not run again). :class:`Repeats` sorts a batch's calls
into those that run and those answered without running, per run, scanning each step once.

``RunContext.seen`` keeps a run's successful results by :func:`seen_hash`, a 30-bit hash of the
key (a 28-byte int where the key was an 80-byte tuple, per call, issue 28): a hit counts only
when the stored result's name and arguments equal the call's (a collision runs the call)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from reactloop import _notes as notes
from reactloop.approvals import DENIED
from reactloop.messages import ToolCall
from reactloop.result import Step, ToolResult
from reactloop.tools._registry import ToolRegistry
from reactloop.tools._tool import Tool

__all__ = ["Repeats", "failures", "seen_hash", "seen_key", "seen_results"]

_NO_FAILURES: dict[object, ToolResult] = {}  # shared, never written to
_NO_TOOLS = ToolRegistry()

_SCALARS = (str, int, float, bool, type(None))
_MASK = (1 << 30) - 1  # a hash below 2**30 is a 28-byte int (a full one: 36)


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


def seen_hash(call: ToolCall) -> int:
    """The call's key in ``RunContext.seen``: a 30-bit hash of :func:`seen_key` (the same for
    identical calls in one process; saved runs write :func:`seen_key`, not this)."""
    return seen_key(call).__hash__() & _MASK


def seen_results(results: Iterable[ToolResult]) -> dict[int, ToolResult]:
    """``RunContext.seen`` made from its results (each keyed by its own name and arguments)."""
    return {seen_hash(ToolCall(r.name, dict(r.arguments))): r for r in results}


def _hit(seen: dict[int, ToolResult], h: int | None, call: ToolCall) -> bool:
    """An identical call succeeded before (the same hash, name and arguments)."""
    return h in seen and (r := seen[h]).name == call.name and r.arguments == call.arguments


_Split = tuple[Sequence[int | None], Sequence[ToolResult | None], Sequence[ToolCall]]
"""A batch's calls sorted: each call's :func:`seen_hash` (None: repeatable), the earlier
failure of an identical call (None: none), and the calls that run."""


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
                   seen: dict[int, ToolResult], steps: Sequence[Step]) -> _Split:
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
            # _hit's work, without its call
            h = None if key is None else key.__hash__() & _MASK
            return (h,), (f,), (calls if f is None and not (
                h in seen and (r := seen[h]).name == c.name and r.arguments == c.arguments)
                else ())
        keys: list[int | None] = []
        again: list[ToolResult | None] = []
        fresh: list[ToolCall] = []
        for c in calls:
            t = tools.get(c.name) if type(c.name) is str or isinstance(c.name, str) else None
            key = None if t is None or t.repeatable or t.internal else seen_key(c)
            # a call identical to one that failed is not run again: it would fail the same way
            f = failed.get(seen_key(c) if key is None else key) if failed else None
            h = None if key is None else key.__hash__() & _MASK
            keys.append(h)
            again.append(f)
            if f is None and not _hit(seen, h, c):
                fresh.append(c)
        return keys, again, fresh

    @staticmethod
    def answers(calls: Sequence[ToolCall], split: _Split, done: Sequence[ToolResult],
                seen: dict[int, ToolResult]) -> list[ToolResult]:
        """The batch's results in call order: those that ran (remembered for identical calls
        to come when they succeeded), the others answered from the earlier ones."""
        keys, again, _ = split
        if done and len(calls) == 1:  # the one call ran
            ran = done[0]
            if ran.error is None and keys[0] is not None:
                seen[keys[0]] = ran
            return [ran]
        by_id = {r.call_id: r for r in done}
        results: list[ToolResult] = []
        kept: list[tuple[int, ToolResult]] = []
        for c, key, f in zip(calls, keys, again, strict=True):
            r = by_id.get(c.id or "")
            if r is None and f is not None:
                r = notes.repeated_failure(f, c.id or "")
            elif r is None and key is not None:  # identical to an earlier call: its result
                r = notes.repeated(seen[key], c.id or "")
            elif r is not None and r.error is None and key is not None:
                kept.append((key, r))  # kept once all are answered (a colliding call that
                # ran does not replace the result a repeat in this batch reads)
            assert r is not None
            results.append(r)
        seen.update(kept)
        return results
