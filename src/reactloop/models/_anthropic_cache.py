"""Anthropic prompt caching: automatic ``cache_control`` breakpoints (pure, no SDK).

reactloop keeps the request prefix byte-stable (tools, then the system prompt, then the
history; volatile notes last), so marking the right places turns it into cache reads:

1. the end of the tools/system block — shared by every run and session of the agent;
2. the end of the previous request's history (the last block of the second-to-last user
   turn) — where the previous call wrote the cache, so this call reads it;
3. the end of the latest stable history message (the last block before the volatile notes)
   — written now, read by the next call.

At most 3 of the provider's limit of 4 breakpoints, on text and ``tool_result`` blocks of user
turns and on the system or the last tool (never on thinking blocks). A breakpoint whose
prefix is estimated (4 characters a token) below the smallest cacheable prompt is left out:
the API would ignore it, and small requests keep their plain shape.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_BREAKPOINTS", "MIN_CACHEABLE_TOKENS", "add_cache_breakpoints"]

MAX_BREAKPOINTS = 4
"""Anthropic's limit of ``cache_control`` blocks per request."""
MIN_CACHEABLE_TOKENS = 1024
"""The smallest prefix Anthropic caches (Sonnet and Opus; Haiku needs more)."""
_EPHEMERAL = {"type": "ephemeral"}


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def add_cache_breakpoints(params: dict[str, Any], *, notes: bool,
                          min_tokens: int = MIN_CACHEABLE_TOKENS) -> int:
    """Mark ``params`` (``messages.create`` keyword arguments) in place; the number of
    breakpoints set. ``notes``: the last block of the last message is volatile."""
    need = min_tokens * 4  # characters, by the documented estimate
    size = _size(params.get("tools") or [])
    marks = 0
    system = params.get("system")
    if system:
        size += _size(system)
        if size >= need:
            params["system"] = [{"type": "text", "text": system, "cache_control": _EPHEMERAL}]
            marks += 1
    elif params.get("tools") and size >= need:
        params["tools"][-1] = {**params["tools"][-1], "cache_control": _EPHEMERAL}
        marks += 1
    for where in _history_marks(params["messages"], notes):
        i, j = where
        size_before = size + sum(_size(m) for m in params["messages"][:i]) + sum(
            _size(b) for b in params["messages"][i]["content"][:j + 1])
        if size_before >= need and marks < MAX_BREAKPOINTS:
            content = params["messages"][i]["content"]
            content[j] = {**content[j], "cache_control": _EPHEMERAL}
            marks += 1
    return marks


def _history_marks(messages: list[dict[str, Any]], notes: bool) -> list[tuple[int, int]]:
    """(message, block) of the previous request's end and of the latest stable block."""
    users = [i for i, m in enumerate(messages) if m["role"] == "user" and m["content"]]
    out: list[tuple[int, int]] = []
    if len(users) >= 2:
        prev = users[-2]
        out.append((prev, len(messages[prev]["content"]) - 1))
    if users:
        last = users[-1]
        j = len(messages[last]["content"]) - 1 - (1 if notes else 0)
        if j >= 0:  # (a last turn of notes only has nothing stable to mark)
            out.append((last, j))
    return out
