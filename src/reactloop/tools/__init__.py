"""Tools: the :func:`tool` decorator, :class:`Tool`, the registry and built-in tool sets;
:func:`thread_stats` tells how the threads sync tools run on are doing (stuck ones included)."""

from reactloop._threads import ThreadStats, thread_stats
from reactloop.tools._registry import ToolRegistry, as_tool, serialize_result
from reactloop.tools._tool import Tool, ToolArgumentsError, ToolContext, tool

__all__ = [
    "ThreadStats",
    "Tool",
    "ToolArgumentsError",
    "ToolContext",
    "ToolRegistry",
    "as_tool",
    "serialize_result",
    "thread_stats",
    "tool",
]
