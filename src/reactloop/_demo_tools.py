"""A few small, real tools so a first ``reactloop run`` does something useful offline."""

from __future__ import annotations

import ast
import operator
from datetime import datetime, tzinfo
from typing import Any

from reactloop.errors import ToolRetry
from reactloop.tools._tool import Tool, tool

__all__ = ["DEMO_TOOLS", "add", "calculate", "current_time", "multiply"]

_OPS: dict[type, Any] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos,
}


@tool(inline=True)
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: the first number
        b: the second number
    """
    total = a + b
    return int(total) if float(total).is_integer() else total


@tool(inline=True)
def multiply(a: float, b: float) -> float:
    """Multiply two numbers.

    Args:
        a: the first number
        b: the second number
    """
    product = a * b
    return int(product) if float(product).is_integer() else product


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 100:
            raise ToolRetry("exponent too large (at most 100)")
        return float(_OPS[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return float(_OPS[type(node.op)](_eval(node.operand)))
    raise ToolRetry("only numbers and + - * / // % ** and parentheses are allowed")


# what people type for powers and products, in Python's spelling
_TYPED = str.maketrans({"^": "**", "×": "*", "÷": "/", "−": "-"})


@tool(inline=True)
def calculate(expression: str) -> float:
    """Evaluate an arithmetic expression such as "(17 + 25) * 2" or "2**10".

    Args:
        expression: numbers with + - * / // % ** (or ^ for a power) and parentheses
    """
    try:
        value = _eval(ast.parse(expression.translate(_TYPED), mode="eval"))
    except SyntaxError:
        raise ToolRetry(f"not an arithmetic expression: {expression!r}") from None
    except ZeroDivisionError:
        raise ToolRetry("division by zero") from None
    if isinstance(value, float) and not value.is_integer():
        value = float(f"{value:.15g}")  # 3.5 * 4.2 is 14.7, not the binary 14.700000000000001
    return int(value) if float(value).is_integer() else value


@tool(repeatable=True)
def current_time(timezone: str = "UTC") -> str:
    """The current date and time in a timezone or city.

    Args:
        timezone: an IANA timezone name such as "Europe/Paris" or "UTC", or a city such as
            "Paris" or "New York"
    """
    zone = _zone(timezone)
    if zone is None:
        raise ToolRetry(
            f"unknown timezone {timezone!r}; use an IANA name like 'Europe/Paris'"
        )
    return datetime.now(zone).strftime("%Y-%m-%d %H:%M:%S %Z")


def _zone(text: str) -> tzinfo | None:
    """The zone ``text`` names: an IANA name, or a city of one ("new york" is
    America/New_York, "Beijing" Asia/Shanghai), resolved against the timezone database and a
    table of the world's major cities (:mod:`reactloop._zones`)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from reactloop._zones import city_zone

    try:
        return ZoneInfo(text.strip())
    except (ZoneInfoNotFoundError, ValueError):
        pass
    zone = city_zone(text)
    return ZoneInfo(zone) if zone else None


DEMO_TOOLS: list[Tool] = [add, multiply, calculate, current_time]
