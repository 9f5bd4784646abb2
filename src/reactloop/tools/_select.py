"""Tool selection: offer an agent only the tools that fit the request
(``Agent(tool_selection=...)``).

An agent facing hundreds of tools (MCP servers) — or a tiny model facing more than a handful —
does better when it is offered only the tools that fit the request. The ranking itself (BM25
with stemming and everyday synonyms) lives in :mod:`reactloop._ranking`, a neutral module the
embedded model uses too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TypeAlias

from reactloop._ranking import rank_tools
from reactloop.errors import UserError
from reactloop.messages import ToolSpec

__all__ = ["ToolSelector", "chosen_names", "tool_selector"]

ToolSelector: TypeAlias = Callable[[Sequence[ToolSpec], str], Sequence[ToolSpec | str]]
"""``fn(tools, request_text)`` → the tools (or their names) to offer for that request."""



def _best_matches(specs: Sequence[ToolSpec], query: str, k: int) -> list[ToolSpec]:
    """The ``k`` best tools that match a word of ``query``; all of them when none does (the
    ranking has nothing to go on, and hiding every tool could leave the request unanswerable).
    """
    matched = [s for score, s in rank_tools(specs, query) if score > 0]
    return matched[:k] if matched else list(specs)


def tool_selector(value: int | ToolSelector | None) -> ToolSelector | None:
    """``Agent(tool_selection=...)`` as a function: ``k`` (BM25: at most the best ``k`` that
    match the request), a function of the caller's, or None (offer every tool)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise UserError(f"tool_selection must be at least 1 (the number of tools to offer), "
                            f"got {value}")
        return functools.partial(_best_matches, k=value)
    if callable(value):
        return value
    raise UserError(f"tool_selection must be a number of tools (e.g. 10) or a function "
                    f"(tools, request_text) -> tools, got {value!r}")


def chosen_names(chosen: Sequence[ToolSpec | str], pool: Sequence[ToolSpec]) -> frozenset[str]:
    """The names ``tool_selection`` returned, each checked against the tools it was given."""
    known = {s.name for s in pool}
    names = frozenset(c if isinstance(c, str) else getattr(c, "name", repr(c)) for c in chosen)
    unknown = sorted(names - known)
    if unknown:
        raise UserError(f"tool_selection returned {', '.join(map(repr, unknown))}, which is not "
                        f"among the tools it was given ({', '.join(sorted(known))})")
    return names
