"""Levers of the eleventh sitting's lead round (issue 23), built on the misses of the blind
validation sets everyday_more7/8 and checked here in phrasings of their own: a thing only a
data description says finds its skill; a thing said in another form than the data's ("nurse",
"check-in") is searched by the data's name; advice on a kind of thing calls no tool; a
percentage raise on a named amount, a number word typed wrong, an operation after a power;
a priced trip on a day is searched, not read from the fare rules; a failed tool does not
lose another tool's settled arguments; a table row with a percentage added."""

from __future__ import annotations

import pytest
from tests.test_levers_workspace_expr import ARITHMETIC, SKILLS, WORKSPACE, _first

from reactloop import Agent, ToolCall
from reactloop.models._skill_select import skill_call
from reactloop.models.local import Guidance, plan_reply
from reactloop.testing import ScriptedModel


def _after(question: str, *calls: ToolCall):  # type: ignore[no-untyped-def]
    model = ScriptedModel([*calls, "ok"])
    Agent(model=model, tools=ARITHMETIC, skills=[SKILLS], workspace=WORKSPACE).run_sync(question)
    return plan_reply(model.requests[len(calls)], Guidance())


@pytest.mark.parametrize("question", [
    "anywhere nearby that serves pastries? bit peckish",
    "is there a place which does dumplings around here",
])
def test_a_thing_only_a_description_of_the_data_says_finds_its_skill(question: str) -> None:
    call = skill_call(_first(question))
    assert call is not None and call.arguments == {"name": "airport"}, question


def test_a_thing_the_data_says_whole_wins_over_a_stem_another_skill_holds() -> None:
    # "check-in" is the airport's (a tag, "Check-in Hall"); book-flight only holds "checked bags"
    question = "We land at 5am. When does check-in open?"
    call = skill_call(_first(question))
    assert call is not None and call.arguments == {"name": "airport"}
    plan = _after(question, ToolCall("load_skill", {"name": "airport"}))
    assert [t.name for t in plan.callable] == ["search_pois"]
    assert plan.candidates is not None
    assert plan.candidates["search_pois"].strings == ("Check-in Hall",)


def test_the_data_form_of_a_thing_said_in_another_form() -> None:
    from reactloop.models._spelled import data_form

    known = ("Family Room", "nursing", "baby", "Check-in Hall", "checkin", "counters")
    assert data_form("is there somewhere we can nurse him in peace?", known) == ("nursing",)
    assert data_form("when does the check-in open on sundays?", known) == ("Check-in Hall",)
    assert data_form("is there somewhere to sit?", known) == ()


@pytest.mark.parametrize(("question", "talk"), [
    ("which type of graph is best for yearly revenue figures?", True),
    ("what's the right kind of font for a report to my manager?", True),
    ("what kind of notebook should I buy for uni?", True),
    ("what kind of snacks does the lounge have?", False),
    ("what kinds of shops are there in Terminal B?", False),
])
def test_advice_on_a_kind_of_thing_calls_no_tool(question: str, talk: bool) -> None:
    from reactloop.models._fit import small_talk

    assert small_talk(question) is talk, question


def test_a_percentage_raise_on_a_named_amount_and_number_words_typed_wrong() -> None:
    from reactloop._amounts import said_arithmetic, words_to_digits

    assert said_arithmetic("they gave me a 4% raise on my monthly salary of 2,300") == [
        "2300 * 104 / 100"]
    assert said_arithmetic("a 5% rent rise on 1800, what's the new rent") == ["1800 * 105 / 100"]
    assert words_to_digits("three hundered and twenty") == "320"
    assert words_to_digits("two thousend") == "2000"


def test_an_operation_after_a_power_said_in_words_is_part_of_it() -> None:
    from reactloop.models._fit import spoken_powers

    assert spoken_powers("19 cubed plus 250?") == ["19**3 + 250"]
    assert spoken_powers("what is 6 squared times 4 minus 10") == ["6**2 * 4 - 10"]
    assert spoken_powers("7 squared, then 3 squared") == ["7**2", "3**2"]


def test_the_fare_of_a_trip_on_a_day_is_searched_not_read_from_the_rules() -> None:
    load = ToolCall("load_skill", {"name": "book-flight"})
    priced = _after("New York to London on 9 March 2027 in business, what's the fare?", load)
    assert [t.name for t in priced.callable] == ["search_flights"]
    rules = _after("New York to London on 9 March 2027: the fare rules for a refund?", load)
    assert "load_skill_reference" in [t.name for t in rules.callable]


def test_a_failed_tool_does_not_lose_another_tools_settled_arguments() -> None:
    plan = _after("New York to London on 9 March 2027 in business, which flights?",
                  ToolCall("load_skill", {"name": "book-flight"}),
                  ToolCall("load_skill_reference", {"skill": "9 March", "path": "9 March"}))
    search = next(t for t in plan.callable if t.name == "search_flights")
    assert search.parameters["properties"]["date"]["enum"] == ["2027-03-09"]


def test_a_percentage_added_to_a_named_row() -> None:
    from reactloop.models._tables import row_arithmetic

    table = "     1\tquarter,revenue\n     2\tq1,4000\n     3\tq2,5200"
    assert row_arithmetic(table, "take q2 and add 15% tax") == "revenue q2 5200 + 780 = 5980"
    assert row_arithmetic(table, "q1 with a 10% bonus?") == "revenue q1 4000 + 400 = 4400"
    assert row_arithmetic(table, "knock off 200 from q1") == "revenue q1 4000 - 200 = 3800"


def test_a_pleasantry_is_no_search_term() -> None:
    plan = _after("put gate 14 on the map pls, ty", ToolCall("load_skill", {"name": "airport"}))
    assert plan.candidates is not None
    strings = plan.candidates["search_pois"].strings
    assert "gate 14" in strings and not {"pls", "ty", "pls ty"} & set(strings)
