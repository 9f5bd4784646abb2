"""Tools: the :func:`tool` decorator, :class:`Tool`, the registry and built-in tool sets."""

from reactloop.tools._registry import ToolRegistry, as_tool, serialize_result
from reactloop.tools._tool import Tool, ToolArgumentsError, ToolContext, tool

__all__ = [
    "Tool",
    "ToolArgumentsError",
    "ToolContext",
    "ToolRegistry",
    "as_tool",
    "serialize_result",
    "tool",
]
