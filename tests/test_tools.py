"""Tools: schemas from signatures and docstrings, validation, results, errors (T1, T2, L5)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from reactloop import Tool, ToolCall, UserError, tool
from reactloop.tools import ToolRegistry, serialize_result


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


class Point(BaseModel):
    x: float
    y: float


def test_schema_comes_from_hints_and_docstring() -> None:
    spec = add.spec()
    assert spec.name == "add"
    assert spec.description == "Add two integers."
    assert spec.parameters["properties"]["a"] == {"type": "integer", "description": "first addend"}
    assert spec.parameters["required"] == ["a", "b"]
    assert spec.parameters["additionalProperties"] is False


def test_decorated_function_is_still_callable() -> None:
    assert add(2, 3) == 5


def test_plain_function_defaults_literals_and_models() -> None:
    def move(p: Point, unit: Literal["m", "km"] = "m", steps: int = 1) -> str:
        """Move a point."""
        return f"{p.x},{p.y} {unit} x{steps}"

    t = Tool(move)
    params = t.parameters
    assert params["required"] == ["p"]
    assert params["properties"]["unit"]["enum"] == ["m", "km"]
    assert "$defs" in params  # the nested model is described
    kwargs = t.validate({"p": {"x": 1, "y": 2}, "unit": "km"})
    assert isinstance(kwargs["p"], Point) and kwargs["steps"] == 1


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({"a": "x", "b": 1}, "argument 'a'"),
        ({"a": 1}, "missing required argument 'b'"),
        ({"a": 1, "b": 2, "c": 3}, "unexpected argument 'c'"),
    ],
)
def test_invalid_arguments_name_the_field(args: dict[str, object], fragment: str) -> None:
    registry = ToolRegistry([add])
    [result] = asyncio.run(registry.execute([ToolCall("add", args, "c1")]))
    assert result.error is not None and fragment in result.error
    assert result.content.startswith("Error: Invalid arguments")


def test_unknown_tool_names_available_tools_and_closest_match() -> None:
    registry = ToolRegistry([add, Tool(lambda: 1, name="multiply")])
    [result] = asyncio.run(registry.execute([ToolCall("ad", {}, "c1")]))
    assert result.error is not None
    assert "Did you mean 'add'?" in result.error
    assert "Available tools: add, multiply" in result.error


def test_exception_gives_type_and_message_and_keeps_traceback_out_of_content() -> None:
    def boom() -> None:
        """Fail."""
        raise KeyError("missing")

    [result] = asyncio.run(ToolRegistry([Tool(boom)]).execute([ToolCall("boom", {}, "c")]))
    assert result.error == "KeyError: 'missing'"
    assert result.traceback is not None and "raise KeyError" in result.traceback
    assert "Traceback" not in result.content


def test_timeout_is_an_error_result() -> None:
    @tool(timeout=0.05)
    async def slow() -> str:
        """Never finishes in time."""
        await asyncio.Event().wait()
        return "never"

    [result] = asyncio.run(ToolRegistry([slow]).execute([ToolCall("slow", {}, "c")]))
    assert result.error is not None and "timed out after 0.05 s" in result.error


def test_results_are_serialized_for_the_model() -> None:
    assert serialize_result("plain") == "plain"
    assert serialize_result(3) == "3"
    assert serialize_result({"a": [1, 2]}) == '{"a":[1,2]}'
    assert serialize_result(Point(x=1, y=2)) == '{"x":1.0,"y":2.0}'
    assert serialize_result(None) == "null"


def test_uniform_result_shape() -> None:
    [ok] = asyncio.run(ToolRegistry([add]).execute([ToolCall("add", {"a": 1, "b": 2}, "c")]))
    assert ok.to_dict() == {"name": "add", "result": 3, "error": None}


def test_bad_tool_definitions_are_user_errors() -> None:
    with pytest.raises(UserError, match="not callable"):
        Tool(42)  # type: ignore[arg-type]
    with pytest.raises(UserError, match="invalid"):
        Tool(lambda: 1, name="has space")

    def varargs(*items: int) -> int:
        return sum(items)

    with pytest.raises(UserError, match=r"\*args"):
        _ = Tool(varargs).parameters


def test_name_collision_names_both_origins() -> None:
    def add(x: int) -> int:  # same name as the module-level tool
        return x

    with pytest.raises(UserError) as info:
        ToolRegistry([globals()["add"], Tool(add)])
    message = str(info.value)
    assert "two tools are named 'add'" in message
    assert "test_tools.add" in message and "test_name_collision_names_both_origins" in message


def test_sync_tools_use_a_worker_thread_unless_inline() -> None:
    import threading

    def where() -> int:
        """Which thread runs me."""
        return threading.get_ident()

    async def both() -> tuple[int, int, int]:
        registry = ToolRegistry([Tool(where), Tool(where, name="where_inline", inline=True)])
        threaded, inline = await registry.execute(
            [ToolCall("where", {}, "a"), ToolCall("where_inline", {}, "b")])
        return threaded.result, inline.result, threading.get_ident()

    threaded, inline, loop_thread = asyncio.run(both())
    assert inline == loop_thread != threaded


def test_annotated_constraints_reach_schema_and_validation() -> None:
    def page(n: Annotated[int, Field(ge=1)]) -> int:
        """A page.

        Args:
            n: page number
        """
        return n

    t = Tool(page)
    assert t.parameters["properties"]["n"]["minimum"] == 1
    [result] = asyncio.run(ToolRegistry([t]).execute([ToolCall("page", {"n": 0}, "c")]))
    assert result.error is not None and "argument 'n'" in result.error


def test_unresolvable_hint_is_a_user_error() -> None:
    def f(x: NotDefinedAnywhere) -> int:  # type: ignore[name-defined]  # noqa: F821
        """F."""
        return 1

    with pytest.raises(UserError, match="cannot resolve the type hint 'NotDefinedAnywhere'"):
        _ = Tool(f).parameters


def test_a_copied_registry_shares_its_tools_until_one_side_adds() -> None:
    """Every run gets a copy of its agent's registry: they share the tools and the specs (no
    dict and no specs per run), and a tool added on either side stays on that side."""

    def mul(a: int, b: int) -> int:
        """Multiply."""
        return a * b

    agent_tools = ToolRegistry([add])
    run_a, run_b = agent_tools.copy(), agent_tools.copy()
    assert run_a.specs() is agent_tools.specs() is run_b.specs()  # made once, for all three
    run_a.add(Tool(mul))
    assert run_a.names == ["add", "mul"] and [s.name for s in run_a.specs()] == ["add", "mul"]
    assert agent_tools.names == run_b.names == ["add"]
    assert [s.name for s in agent_tools.specs()] == [s.name for s in run_b.specs()] == ["add"]
    agent_tools.add(Tool(lambda: 1, name="one"))
    assert agent_tools.names == ["add", "one"] and run_b.names == ["add"]
    assert [s.name for s in run_b.specs()] == ["add"]
    assert [s.name for s in agent_tools.specs()] == ["add", "one"]
    run_c = run_b.copy()
    run_c.add(Tool(lambda: 2, name="two"))
    assert run_b.names == ["add"] and run_c.names == ["add", "two"]
