"""The embedded model's levers trained on ``benchmarks/evals/everyday_more2.yaml`` (issue 23),
each checked without running the model: a city that is no zone's name is resolved (by the demo
tool, and as the choices of a timezone argument, in the question's order), a power said in
words is an expression, an action on what a search finds waits for the search's id, a skill
just loaded offers its own tools (as many names as the question gives), a question from one
place to another asks for the route, a listing question is answered with the names, and an
``enum`` argument's alternatives are grouped in the grammar."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reactloop import Agent, ModelRequest, ToolCall, tool
from reactloop._demo_tools import current_time
from reactloop._ranking import best_choice, terms
from reactloop._zones import city_zone, zones_in
from reactloop.messages import ToolSpec
from reactloop.models._fit import (
    expressions,
    needs_found_id,
    spoken_powers,
    trip_query,
    zone_choices,
)
from reactloop.models._gbnf import Candidates, reply_grammar
from reactloop.models._shaping import order_directions, render_result
from reactloop.testing import ScriptedModel

pytest.importorskip("llama_cpp")

from reactloop.models.local import Guidance, plan_reply

ROOT = Path(__file__).resolve().parents[1]
SKILLS = ROOT / "examples" / "skills"

CONVERT = ToolSpec("time_convert_time", "Convert time between timezones", {
    "type": "object", "properties": {
        "source_timezone": {"type": "string", "description": "Source IANA timezone name"},
        "time": {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
        "target_timezone": {"type": "string", "description": "Target IANA timezone name"}},
    "required": ["source_timezone", "time", "target_timezone"]})


@pytest.mark.parametrize(("city", "zone"), [
    ("Beijing", "Asia/Shanghai"), ("mumbai", "Asia/Kolkata"),
    ("San Francisco", "America/Los_Angeles"), ("New York, USA", "America/New_York"),
    ("Toronto", "America/Toronto"), ("nowhere", None)])
def test_a_city_resolves_to_its_zone(city: str, zone: str | None) -> None:
    assert city_zone(city) == zone


def test_the_demo_clock_takes_a_city_that_is_no_zone_name() -> None:
    assert current_time.fn("Beijing").endswith("CST")  # type: ignore[attr-defined]


def test_places_are_found_in_order_and_only_when_named() -> None:
    assert zones_in("If it's 15:00 in London, what time is it in Tokyo?") == [
        "Europe/London", "Asia/Tokyo"]
    assert zones_in("what's the time in san francisco") == ["America/Los_Angeles"]
    assert zones_in("I will call you later, nice to meet you.") == []


def test_a_timezone_argument_chooses_among_the_zones_of_the_places_said() -> None:
    spec = zone_choices(CONVERT, "Convert 10:00 Paris time to Sydney time.")
    props = spec.parameters["properties"]
    # two places: the first said is the source, the second the target (levers5)
    assert props["source_timezone"]["enum"] == ["Europe/Paris"]
    assert props["target_timezone"]["enum"] == ["Australia/Sydney"]
    assert "enum" not in props["time"]
    three = zone_choices(CONVERT, "Convert 10:00 Paris time to Sydney and Tokyo time.")
    assert three.parameters["properties"]["source_timezone"]["enum"] == [
        "Europe/Paris", "Australia/Sydney", "Asia/Tokyo"]
    assert zone_choices(CONVERT, "Convert 10:00 to 11:00") is CONVERT


def test_an_enum_argument_is_one_value_of_the_call_in_the_grammar() -> None:
    # regression: the alternatives were not grouped, so a call could end after the first
    # argument ({"source_timezone": "Europe/Paris"} with the others missing)
    spec = zone_choices(CONVERT, "Convert 10:00 Paris time to Sydney or Tokyo time.")
    grammar = reply_grammar([spec], answer=False,
                            candidates={spec.name: Candidates((), ("10:00",))})
    assert '("\\"Europe/Paris\\"" | "\\"Australia/Sydney\\"" | "\\"Asia/Tokyo\\"")' in grammar


def test_zones_given_the_wrong_way_round_follow_the_question() -> None:
    call = ToolCall("time_convert_time", {"source_timezone": "Asia/Tokyo", "time": "15:00",
                                          "target_timezone": "Europe/London"})
    fixed = order_directions(call, "If it's 15:00 in London, what time is it in Tokyo?")
    assert fixed.arguments["source_timezone"] == "Europe/London"
    assert fixed.arguments["target_timezone"] == "Asia/Tokyo"


@tool
def calculate(expression: str) -> float:
    """Evaluate an arithmetic expression.

    Args:
        expression: numbers with + - * / and parentheses
    """
    return 0.0


def test_a_power_said_in_words_is_an_expression() -> None:
    assert spoken_powers("What is 2 to the power of 5?") == ["2**5"]
    assert spoken_powers("10 raised to the power 3, and 7 squared") == ["10**3", "7**2"]
    assert "calculate" in terms("What is 2 to the power of 5?", expand=True)
    found = Candidates((), ("2 to the power of 5", "power", "2 to the power"))
    assert expressions(calculate.spec(), "What is 2 to the power of 5?", found).strings == (
        "2**5",)
    typed = Candidates((), ("(50 - 5) / 9", "50 - 5 / 9 for me", "work out"))
    assert expressions(calculate.spec(), "Can you work out (50 - 5) / 9 for me?", typed
                       ).strings == ("(50 - 5) / 9",)


def test_an_action_on_a_found_thing_waits_for_the_search() -> None:
    show = ToolSpec("show_poi", "Show a place", {"type": "object", "properties": {
        "poi_id": {"type": "integer"}}, "required": ["poi_id"]})
    assert needs_found_id(show, "Show me the Burger Point on the map.", False)
    assert not needs_found_id(show, "Show me the Burger Point on the map.", True)
    assert not needs_found_id(show, "Show gate 3 on the map", False)  # a value to look up


def _plan(model: ScriptedModel, at: int) -> tuple[list[str], bool]:
    plan = plan_reply(model.requests[at], Guidance())
    return [t.name for t in plan.callable if not t.internal], plan.answer


def test_a_skill_loaded_offers_its_own_tools_not_a_plain_tool_sharing_a_word() -> None:
    @tool
    def add(a: float, b: float) -> float:
        """Add two numbers: their sum, the total.

        Args:
            a: the first number
            b: the second number
        """
        return a + b

    question = "What is the total amount in consolidation_mart for company 1001?"
    model = ScriptedModel([ToolCall("load_skill", {"name": "data-analyst"}), "done"])
    Agent(model=model, tools=[add], skills=[SKILLS]).run_sync(question)
    # one name said: the tool that takes one source, not add(1001, 1001)
    assert _plan(model, 1) == (["query_source"], False)


def test_two_names_said_offer_the_tool_that_takes_two() -> None:
    question = "Please check the data quality of bpc_reporting against fi_reporting."
    model = ScriptedModel([ToolCall("load_skill", {"name": "data-analyst"}), "done"])
    Agent(model=model, skills=[SKILLS]).run_sync(question)
    assert _plan(model, 1) == (["compare_sources"], False)


def test_a_name_only_one_skill_spells_chooses_that_skill() -> None:
    @tool
    def add(a: float, b: float) -> float:
        """Add two numbers: their sum, the total."""
        return a + b

    loader = ToolSpec("load_skill", "Load a skill", {"type": "object", "properties": {
        "name": {"type": "string"}}, "required": ["name"]}, choices=(
            ("data-analyst", "Compare sources fi_reporting and consolidation_mart"),
            ("airport", "Find gates and restrooms")))
    chosen = best_choice([add.spec(), loader], "What is the total in consolidation_mart?")
    assert chosen is not None and chosen[1] == "data-analyst"


def test_a_question_from_one_place_to_another_ranks_the_route() -> None:
    from reactloop._ranking import rank_tools

    show = ToolSpec("show_poi", "Show a place (a gate, a cafe) on the map.", {})
    route = ToolSpec("show_directions", "Draw the walking route from one place to another.",
                     {"type": "object", "properties": {"start": {"type": "string"},
                                                        "destination": {"type": "string"}}})
    question = "Take me from gate 5 to the Noodle House."
    assert rank_tools([show, route], question)[0][1] is show  # without the signal
    assert rank_tools([show, route], trip_query(question))[0][1] is route
    assert trip_query("Show gate 3 on the map") == "Show gate 3 on the map"


def test_a_listing_question_is_answered_with_the_names() -> None:
    records = json.dumps([{"name": "fi_reporting", "description": "FI data, long " * 9},
                          {"name": "bpc_reporting", "description": "BPC data " * 9}])
    assert render_result(records, "Which data sources are available?") == (
        "fi_reporting; bpc_reporting")


def test_a_plural_in_es_meets_its_singular() -> None:
    assert terms("changes") == terms("change")
    assert terms("sources") == terms("source")
    assert terms("matches") == terms("match")


def test_the_date_today_asks_the_clock() -> None:
    model = ScriptedModel(["done"])
    Agent(model=model, tools=[current_time]).run_sync("What's the date today?")
    request: ModelRequest = model.requests[0]
    plan = plan_reply(request, Guidance())
    assert [t.name for t in plan.callable] == ["current_time"] and not plan.answer


def test_a_shortened_result_never_begins_an_answer_with_the_context_marker() -> None:
    from reactloop.context._tiers import excerpt

    rows = json.dumps({"source": "bpc_reporting", "rows": [{"amount": i} for i in range(300)]})
    rendered = render_result(excerpt(rows, 800, 400), "Show me the amounts in bpc_reporting.")
    assert "omitted" not in rendered


def test_to_find_or_look_for_is_to_search_and_all_the_files_a_listing() -> None:
    assert "search" in terms("Find the word overdue in my files", expand=True)
    assert "search" not in terms("Find the word overdue in my files")
    assert "list" in terms("Show me all the files", expand=True)


def test_an_ordinal_power_and_what_is_in_a_place() -> None:
    assert spoken_powers("What's 3 to the 4th power?") == ["3**4"]
    assert "calculate" in terms("2 to the 10th power", expand=True)
    assert "list" in terms("What's in the workspace?", expand=True)
    assert "list" not in terms("What's in data/sales.csv?", expand=True)  # a file: read it
