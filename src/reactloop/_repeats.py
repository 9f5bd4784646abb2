"""Identical calls: the key that makes two calls the same, and the run's failed calls by it
(a call identical to one that failed is not run again)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import chain

from reactloop.approvals import DENIED
from reactloop.messages import ToolCall
from reactloop.result import Step, ToolResult

__all__ = ["failures", "seen_key"]

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
            return (call.name, *chain.from_iterable(sorted(args.items())))
    try:
        return call.name + "\0" + json.dumps(args, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return f"{call.name}\0{args!r}"
