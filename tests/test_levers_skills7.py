"""Skill levers of the embedded model (issue 23, ninth sitting), each checked without running
the model, on phrasings and small data written here: where one is said with what one does
there ("I'm browsing at the bookshop") and a trip to "there", the other place said; a month
said in words with a year as a period filter in the data's own format; a skill's verb name
word ("book") said as a noun chooses no skill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reactloop.messages import ToolSpec

ROUTE = ToolSpec("draw_route", "Draw the walking route between two places on the map.", {
    "type": "object", "properties": {"start": {"type": "string"},
                                     "destination": {"type": "string"}},
    "required": ["start", "destination"]})


@pytest.mark.parametrize(("question", "trip"), [
    ("I'm snacking at the food court; my train leaves at platform 7. Which way there?",
     ("food court", "platform 7")),
    ("We're queuing in the ticket hall and the show is at stage B. Guide me there.",
     ("ticket hall", "stage B")),
    ("I'm reading near the fountain, how do I get to the museum shop?",
     ("fountain", "museum shop")),
    ("We're eating a pizza at the diner; our bus departs from bay 4. How do we get there?",
     ("diner", "bay 4")),
])
def test_where_one_is_doing_something_and_a_trip_there_make_a_trip(
        question: str, trip: tuple[str, str]) -> None:
    from reactloop.models._fit import trip_places

    assert trip_places(question) == trip
    assert trip_places("The show is at stage B. Which way there?") is None  # no start said


def test_a_trip_there_goes_to_the_other_place_of_the_data_said() -> None:
    from reactloop.models._fit import argument_choices, is_trip, trip_query

    names = ["Food Court", "Platform 7", "Ticket Hall"]
    question = "I'm snacking at the food court and my train is on platform 7; the way there?"
    assert is_trip(question)
    assert "route" in trip_query(question)
    props = argument_choices(ROUTE, question, names).parameters["properties"]
    assert (props["start"]["enum"], props["destination"]["enum"]) == (
        ["Food Court"], ["Platform 7"])


@pytest.mark.parametrize(("said", "months"), [
    ("in February 2025", [(2025, 2)]), ("for Aug. 2023 and Sept 2023", [(2023, 8), (2023, 9)]),
    ("during october of 2026", [(2026, 10)]), ("on 5 June 2025", []), ("we may 2025", [])])
def test_a_month_said_in_words_with_a_year(said: str, months: list[tuple[int, int]]) -> None:
    from reactloop.models._months import in_format, spoken_months

    assert spoken_months(f"what did we sell {said}?") == months
    assert in_format("202401", 2025, 2) == "202502"
    assert in_format("2024-01", 2025, 2) == "2025-02"
    assert in_format("S12", 2025, 2) is None


def test_a_month_in_words_fills_a_period_filter_the_datas_way() -> None:
    from reactloop import ToolCall, tool
    from reactloop.models._filters import said_filters

    @tool
    def ledger_rows(book: str, filters: dict[str, str] | None = None) -> str:
        """Rows of one ledger.

        Args:
            book: the ledger's name.
            filters: values to keep, e.g. {"branch": "B7", "month": "2024-01"}.
        """
        return "rows"

    call = ToolCall("ledger_rows", {"book": "sales_ledger"})
    filled = said_filters(call, [ledger_rows.spec()], "What did branch B3 take in March of 2025?")
    assert filled.arguments["filters"] == {"branch": "B3", "month": "2025-03"}
    # a day said makes a date, no month filter
    assert said_filters(call, [ledger_rows.spec()], "on 2 March 2025 at branch B3?").arguments[
        "filters"] == {"branch": "B3"}


def test_a_figure_keeps_the_records_of_a_month_said_in_words() -> None:
    from reactloop.models._shaping import figure

    rows = {"rows": [
        {"branch": "B3", "month": "202502", "line": "Bikes", "takings": 700.0},
        {"branch": "B3", "month": "202503", "line": "Bikes", "takings": 900.0},
        {"branch": "B3", "month": "202504", "line": "Bikes", "takings": 400.0}]}
    assert figure(rows, "How much did the bikes take in Mar 2025?") == (
        "takings 900 (1 record: 202503)")


def _skill(root: Path, name: str, description: str, data: object) -> None:
    folder = root / name
    (folder / "data").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n"
                                     "Answer from the skill's files.\n")
    (folder / "data" / "items.json").write_text(json.dumps(data))


@pytest.fixture
def venues(tmp_path: Path) -> Path:
    """A museum whose shop sells prints, and a skill whose name's verb is "print"."""
    _skill(tmp_path, "museum", "Rooms, exhibitions and services of the city museum.",
           [{"name": "Gift Corner", "tags": ["prints", "postcards"]},
            {"name": "Hall of Coins", "tags": ["coins", "medals"]}])
    _skill(tmp_path, "print-posters", "Print posters of museum pictures, in any size.",
           [{"name": "A2 matte", "size": "A2"}])
    return tmp_path


@pytest.mark.parametrize(("question", "skill"), [
    ("Can I pick up a nice print on my way out?", "museum"),
    ("where are the prints sold?", "museum"),
    ("Please print me a poster of a picture", "print-posters"),
])
def test_a_skills_verb_said_as_a_thing_chooses_the_skill_holding_it(
        question: str, skill: str, venues: Path) -> None:
    from reactloop import Agent
    from reactloop.models._skill_select import skill_call
    from reactloop.testing import ScriptedModel

    model = ScriptedModel(["ok"])
    Agent(model=model, skills=[venues]).run_sync(question)
    call = skill_call(model.requests[0])
    assert call is not None and call.arguments == {"name": skill}, question


def test_a_verb_said_as_a_thing_or_as_a_verb() -> None:
    from reactloop._verbs import as_things, name_verbs

    assert name_verbs([("book-flight", "Search and book flights."),
                       ("order_food", "Order a food delivery: order the food you like."),
                       ("data-analyst", "Query the data sources."), ("airport", "Gates.")]
                      ) == {"book", "order"}
    assert as_things("is there a decent book here?", {"book"})[1] == ["book"]
    assert as_things("any books on birds?", {"book"})[1] == ["book"]
    assert as_things("book me two seats", {"book"})[1] == []
    assert as_things("did store 4 book anything in May?", {"book"})[1] == []
    assert as_things("the book I want: book it", {"book"})[1] == []  # said as a verb too
