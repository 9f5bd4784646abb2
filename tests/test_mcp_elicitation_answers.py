"""Answers to an MCP server's question that arrive over the wire (``reactloop serve``: the
sessions API, AG-UI, A2A) are checked against the requested schema before the server gets
them (``reactloop.mcp._elicitation.checked_answer``): types, ranges, choices, formats, required
fields; defaults fill what is left out; decline and cancel carry nothing."""

from __future__ import annotations

import pytest

from reactloop.mcp import Elicitation, ElicitationAnswer
from reactloop.mcp._elicitation import checked_answer

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "seats": {"type": "integer", "minimum": 1, "maximum": 8},
        "budget": {"type": "number", "default": 100.0},
        "window": {"type": "boolean", "default": False},
        "meal": {"type": "string", "enum": ["none", "vegan"], "enumNames": ["None", "Vegan"]},
        "email": {"type": "string", "format": "email"},
        "extras": {"type": "array", "maxItems": 2,
                   "items": {"anyOf": [{"const": "bag", "title": "Bag"},
                                       {"const": "seat", "title": "Seat"},
                                       {"const": "meal", "title": "Meal"}]}},
    },
    "required": ["name", "seats"],
}
ASKED = Elicitation("asker", "Who?", SCHEMA)


def test_values_are_typed_and_defaults_fill_the_rest() -> None:
    answer = checked_answer(ASKED, "accept", {"name": " Ada ", "seats": "2", "window": "yes",
                                              "meal": "vegan", "extras": ["bag", "seat"]})
    assert answer == ElicitationAnswer("accept", {
        "name": "Ada", "seats": 2, "budget": 100.0, "window": True, "meal": "vegan",
        "extras": ["bag", "seat"]})
    native = checked_answer(ASKED, "accept", {"name": "Bo", "seats": 3.0, "budget": 5,
                                              "window": False, "email": "bo@example.com"})
    assert native.content == {"name": "Bo", "seats": 3, "budget": 5.0, "window": False,
                              "email": "bo@example.com"}


@pytest.mark.parametrize(("content", "problem"), [
    ({"seats": 2}, "Name: an answer is required"),
    ({"name": "Ada", "seats": 2.5}, "seats: not an integer"),
    ({"name": "Ada", "seats": 0}, "seats: must be at least 1"),
    ({"name": "Ada", "seats": True}, "seats: expected integer, got True"),
    ({"name": "Ada", "seats": 2, "window": "perhaps"}, "window: answer yes or no"),
    ({"name": "Ada", "seats": 2, "meal": "fish"},
     "meal: choose one of the values 'none', 'vegan'"),
    ({"name": "Ada", "seats": 2, "email": "ada"}, "email: not a valid email"),
    ({"name": "Ada", "seats": 2, "extras": ["bag", "seat", "meal"]}, "extras: choose at most 2"),
    ({"name": "Ada", "seats": 2, "extras": 3}, "extras: expected a list of choices, got 3"),
    ({"name": "Ada", "seats": 2, "age": 3}, "the form has no field 'age'"),
])
def test_wrong_values_are_refused_naming_the_field(content: dict, problem: str) -> None:
    with pytest.raises(ValueError, match="^" + problem.replace("(", r"\(").replace(")", r"\)")):
        checked_answer(ASKED, "accept", content)


def test_decline_cancel_and_url_questions_carry_no_content() -> None:
    assert checked_answer(ASKED, "decline", {"name": "x"}) == ElicitationAnswer.decline()
    assert checked_answer(ASKED, "cancel") == ElicitationAnswer.cancel()
    url = Elicitation("s", "Sign in", mode="url", url="https://example.com")
    assert checked_answer(url, "accept", {"x": 1}) == ElicitationAnswer("accept")
    with pytest.raises(ValueError, match="accept, decline or cancel"):
        checked_answer(ASKED, "maybe")
    with pytest.raises(ValueError, match="content must be an object"):
        checked_answer(ASKED, "accept", ["Ada"])


SIZES = {"type": "object", "properties": {
    "size": {"type": "string", "enum": ["10", "5", "1"], "enumNames": ["Large", "1", "Small"]},
    "sizes": {"type": "array", "items": {"enum": ["10", "5", "1"]}},
    "note": {"type": "string", "minLength": 2, "maxLength": 5},
    "count": {"type": "integer", "minimum": 0, "maximum": 9},
    "ratio": {"type": "number", "minimum": 0, "maximum": 1},
    "tags": {"type": "array", "items": {"enum": ["a,b", "c"]}},
}}
SIZED = Elicitation("s", "Which?", SIZES)


def test_a_choice_on_the_wire_is_one_of_the_values_exactly() -> None:
    # "1" is a value (and the label of "5"); by number in the list it would be "10"
    assert checked_answer(SIZED, "accept", {"size": "1"}).content == {"size": "1"}
    assert checked_answer(SIZED, "accept", {"sizes": ["1", "5"]}).content == {
        "sizes": ["1", "5"]}
    for wrong in ({"size": "Large"}, {"size": " 5"}, {"sizes": ["Small"]}, {"sizes": "1"}):
        with pytest.raises(ValueError, match=r"^size"):
            checked_answer(SIZED, "accept", wrong)
    # the terminal keeps its shorthand: a label or the number in the list
    (size, *_) = SIZED.fields
    assert (size.parse("Large"), size.parse("3")) == ("10", "1")


def test_a_choice_holding_a_comma_can_be_picked() -> None:
    assert checked_answer(SIZED, "accept", {"tags": ["a,b", "c"]}).content == {
        "tags": ["a,b", "c"]}
    with pytest.raises(ValueError, match=r"^tags: choose one of the values 'a,b', 'c'"):
        checked_answer(SIZED, "accept", {"tags": ["a"]})


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), "NaN",
                                   "Infinity", "1e999"])
@pytest.mark.parametrize("name", ["count", "ratio"])
def test_numbers_that_are_not_finite_are_refused(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"^{name}: not "):
        checked_answer(SIZED, "accept", {name: value})


def test_the_length_of_text_is_checked() -> None:
    assert checked_answer(SIZED, "accept", {"note": "abc"}).content == {"note": "abc"}
    with pytest.raises(ValueError, match=r"^note: at least 2 characters"):
        checked_answer(SIZED, "accept", {"note": "a"})
    with pytest.raises(ValueError, match=r"^note: at most 5 characters"):
        checked_answer(SIZED, "accept", {"note": "abcdef"})
