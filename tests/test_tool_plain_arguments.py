"""Arguments that already have the declared plain types skip pydantic (issue 28) — with the
same outcome as validation: the same values, defaults filled, and every other case (another
type, a missing or unknown argument) still validated and explained."""

from __future__ import annotations

import pytest

from reactloop import tool
from reactloop.tools._tool import ToolArgumentsError


@tool
def f(a: int, b: str, c: float = 1.5, d: bool = False, e: int | None = None) -> str:
    """F."""
    return ""


@tool
def g(a: int, b: str, c: float = 1.5, d: bool = False) -> str:
    """G."""
    return ""


def test_plain_arguments_come_back_as_pydantic_gives_them() -> None:
    g.validate({"a": 0, "b": "x"})  # built
    assert g._plain is not None
    assert g.validate({"a": 1, "b": "x"}) == {"a": 1, "b": "x", "c": 1.5, "d": False}
    assert g.validate({"b": "y", "a": 2, "c": 2.5, "d": True}) == {"a": 2, "b": "y", "c": 2.5,
                                                                   "d": True}


def test_an_optional_type_is_not_plain() -> None:
    f.validate({"a": 0, "b": "x"})
    assert f._plain is None


@pytest.mark.parametrize("arguments, expected", [
    ({"a": "3", "b": "x"}, {"a": 3, "b": "x", "c": 1.5, "d": False}),  # coerced by pydantic
    ({"a": 1, "b": "x", "c": 2}, {"a": 1, "b": "x", "c": 2.0, "d": False}),
])
def test_other_types_still_go_through_validation(arguments: dict[str, object],
                                                 expected: dict[str, object]) -> None:
    assert g.validate(arguments) == expected


@pytest.mark.parametrize("arguments, problem", [
    ({"a": 1}, "b"),  # missing
    ({"a": 1, "b": "x", "z": 0}, "z"),  # unknown
    ({"a": [1], "b": "x"}, "a"),  # wrong
])
def test_bad_arguments_are_still_explained(arguments: dict[str, object], problem: str) -> None:
    with pytest.raises(ToolArgumentsError, match=problem):
        g.validate(arguments)


def test_plain_arguments_skip_pydantic(monkeypatch: pytest.MonkeyPatch) -> None:
    g.validate({"a": 0, "b": "x"})
    model, used = g._model, []

    class Spy:
        @staticmethod
        def model_validate(arguments: object) -> object:
            used.append(arguments)
            return model.model_validate(arguments)  # type: ignore[union-attr]

    monkeypatch.setattr(g, "_model", Spy)
    g.validate({"a": 1, "b": "x", "d": True})
    assert used == []
    g.validate({"a": "1", "b": "x"})
    assert used == [{"a": "1", "b": "x"}]


@pytest.mark.parametrize("value", [0, -7, 10**30, True, 1.5, "text", None, [1, "a"]])
def test_plain_results_read_as_before(value: object) -> None:
    import json

    from reactloop.tools._registry import split_result

    text, parts = split_result(value)
    assert parts == ()
    assert text == (value if isinstance(value, str) else json.dumps(value, separators=(",", ":")))
